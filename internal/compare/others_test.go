package compare

import (
	"strings"
	"testing"

	"github.com/fairbench/fairbench/internal/result"
)

// Another fairbench is looked for around every measured step, not only as a server starts: one
// that started while a step ran (seen only at its end) is named in that step's result, which is
// then busy, and once in the report's notes.
func TestOthersLiveAroundEveryStep(t *testing.T) {
	var log strings.Builder
	seen := [][]string{nil, nil, nil, {"a mysql server of fairbench pid 42 (port 4000)"}}
	call := 0
	c := &comparison{opts: &Options{Log: &log}, env: &result.Environment{}, othersLive: func() []string { call++; return seen[call-1] }}

	alone := &result.Result{}
	c.noteOthersLive(alone, c.othersLive())
	if alone.Machine != nil || len(c.env.Notes) != 0 {
		t.Errorf("a step alone: machine %+v, notes %q", alone.Machine, c.env.Notes)
	}
	shared := &result.Result{Machine: &result.MachineLoad{OthersCPUPctMean: 3}}
	c.noteOthersLive(shared, c.othersLive()) // none as it began, one at its end
	if m := shared.Machine; !m.Busy || len(m.OtherFairbench) != 1 || m.OthersCPUPctMean != 3 {
		t.Errorf("a step that another fairbench joined: %+v, want it busy and named", m)
	}
	if len(c.env.Notes) != 1 || !strings.Contains(c.env.Notes[0], "pid 42") || !strings.Contains(log.String(), "warning") {
		t.Errorf("notes %q, log %q: want the other fairbench named once", c.env.Notes, log.String())
	}
}
