package compare

import (
	"errors"
	"strings"
	"testing"

	"github.com/fairbench/fairbench/internal/engine/discovery"
)

// Over as many rounds as engines, each engine runs once in every position.
func TestRoundOrder(t *testing.T) {
	insts := []Contender{{Installation: discovery.Installation{Kind: "postgres"}}, {Installation: discovery.Installation{Kind: "mysql"}}, {Installation: discovery.Installation{Kind: "mariadb"}}}
	want := []string{"postgres mysql mariadb", "mysql mariadb postgres", "mariadb postgres mysql", "postgres mysql mariadb"}
	for rep := 1; rep <= len(want); rep++ {
		var got []string
		for _, in := range roundOrder(insts, rep) {
			got = append(got, in.Kind)
		}
		if strings.Join(got, " ") != want[rep-1] {
			t.Errorf("round %d: %v, want %s", rep, got, want[rep-1])
		}
	}
}

// An engine's own run and its flipped runs take turns as the engines do: with one knob the
// flipped run comes second in odd rounds and first in even ones; a failed run stops the rest.
func TestInTurn(t *testing.T) {
	want := []string{"own binlog doublewrite", "binlog doublewrite own", "doublewrite own binlog", "own binlog doublewrite"}
	for rep := 1; rep <= len(want); rep++ {
		var ran []string
		runs := []func() error{}
		for _, name := range []string{"own", "binlog", "doublewrite"} {
			runs = append(runs, func() error { ran = append(ran, name); return nil })
		}
		if err := inTurn(runs, rep); err != nil || strings.Join(ran, " ") != want[rep-1] {
			t.Errorf("round %d ran %v (%v), want %s", rep, ran, err, want[rep-1])
		}
	}
	var ran []string
	failed := errors.New("server froze")
	err := inTurn([]func() error{
		func() error { ran = append(ran, "own"); return nil },
		func() error { ran = append(ran, "binlog"); return failed },
	}, 2)
	if !errors.Is(err, failed) || strings.Join(ran, " ") != "binlog" {
		t.Errorf("round 2 with a failing flipped run: ran %v, error %v; want it first and the own run not started", ran, err)
	}
}
