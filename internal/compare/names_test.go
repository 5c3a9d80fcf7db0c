package compare

import (
	"strings"
	"testing"

	"github.com/fairbench/fairbench/internal/suite"
)

// TestCheckResultNames: every built-in suite writes one results file per step and thread count,
// and a suite whose steps would overwrite each other's results is refused before anything runs.
func TestCheckResultNames(t *testing.T) {
	for _, name := range suite.Builtin() {
		s, err := suite.Load(name)
		if err != nil {
			t.Fatal(err)
		}
		steps, err := s.Resolve()
		if err != nil {
			t.Fatal(err)
		}
		if err := checkResultNames(name, steps); err != nil {
			t.Errorf("built-in suite: %v", err)
		}
	}
	for _, tc := range []struct{ yaml, err string }{
		{"steps:\n  - {workload: tpcc, options: {style: statements}}\n  - {workload: tpcc, options: {style: routines}}\n", "steps 1 and 2 both run tpcc"},
		{"steps:\n  - {workload: oltp_insert, threads: \"8\"}\n  - {workload: oltp_insert, threads: \"16\"}\n", "steps 1 and 2 both run oltp_insert"},
		{"steps:\n  - {workload: oltp_insert, threads: \"1,8\"}\n  - {workload: oltp_insert, threads: \"8,16\"}\n", "steps 1 and 2 both run oltp_insert"},
		{"steps:\n  - {workload: oltp_insert, threads: \"1,8\"}\n  - {workload: oltp_insert, threads: \"2,16\"}\n", ""},
		{"steps:\n  - {workload: oltp_insert}\n  - {workload: oltp_read_write}\n", ""},
	} {
		s, err := suite.Parse([]byte(tc.yaml), "test.yaml")
		if err != nil {
			t.Fatal(err)
		}
		steps, err := s.Resolve()
		if err != nil {
			t.Fatal(err)
		}
		err = checkResultNames("test", steps)
		if (tc.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%q: error %v, want %q", tc.yaml, err, tc.err)
		}
	}
}
