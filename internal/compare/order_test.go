package compare

import (
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
