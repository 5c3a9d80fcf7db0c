package report

import (
	"strings"
	"testing"

	"github.com/fairbench/fairbench/internal/result"
)

func TestMemoryNote(t *testing.T) {
	probed := func(ns ...float64) []*result.Result {
		var out []*result.Result
		for _, v := range ns {
			out = append(out, &result.Result{Machine: &result.MachineLoad{MemoryNSBefore: v}})
		}
		return out
	}
	cases := []struct {
		name    string
		results []*result.Result
		want    string // a part of the note; empty: no note
	}{
		{"no probes", []*result.Result{{}, {Machine: &result.MachineLoad{}}}, ""},
		{"one window", probed(100), ""},
		{"held still", probed(100, 110, 119), ""},
		{"moved", probed(96, 130, 158), "96-158 ns (1.65× apart) in the probes before their 3 windows"},
		{"unprobed windows left out", append(probed(100, 125), &result.Result{Machine: &result.MachineLoad{}}), "before their 2 windows"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := memoryNote(c.results)
			if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
				t.Errorf("memoryNote = %q, want %q", got, c.want)
			}
		})
	}
}
