package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fairbench/fairbench/internal/study"
)

// Study input errors: one line that names the problem, exit status 2, nothing started.
func TestStudyBadInput(t *testing.T) {
	taken := t.TempDir()
	if err := os.WriteFile(filepath.Join(taken, "mvcc.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no study", []string{"study"}, "name a study"},
		{"unknown engine", []string{"study", "mvcc", "--engines", "oracle"}, `unknown engine "oracle"`},
		{"small pool", []string{"study", "mvcc", "--buffer-pool", "8M"}, "--buffer-pool"},
		{"short phase", []string{"study", "mvcc", "--time", "100ms"}, "--time must be at least 1s"},
		{"few rows", []string{"study", "mvcc", "--table-size", "10"}, "--table-size"},
		{"out taken", []string{"study", "mvcc", "--out", taken}, "already holds a study"},
		{"bad limit", []string{"study", "bandwidth", "--limits", "25M,fast"}, "--limits"},
		{"no limits", []string{"study", "bandwidth", "--limits", ","}, "--limits is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := run(tc.args...)
			// Without root or an I/O controller, that is the one thing bandwidth reports.
			if _, err := study.CheckBandwidth(); err != nil && len(tc.args) > 1 && tc.args[1] == "bandwidth" {
				tc.want = "study bandwidth "
			}
			if code != exitInput || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
				t.Errorf("exit %d, stderr %q; want exit 2 and one line containing %q", code, stderr, tc.want)
			}
		})
	}
}
