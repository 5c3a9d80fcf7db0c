package compare

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/runspec"
	"github.com/fairbench/fairbench/internal/suite"
)

// TestCheckResultNames: every built-in suite writes one results file per step and thread count
// under every override compare --help offers (--threads made the payments suite's two steps
// collide), and a suite whose steps would still overwrite each other's results
// is refused before anything runs.
func TestCheckResultNames(t *testing.T) {
	overrides := map[string]runspec.Layer{
		"none":          {},
		"--threads 4":   {Threads: []int{4}},
		"--time 2s":     {Time: runspec.Ptr(2 * time.Second)},
		"--warmup 1s":   {Warmup: runspec.Ptr(time.Second)},
		"--threads 1,8": {Threads: []int{1, 8}},
	}
	for _, name := range suite.Builtin() {
		for flag, layer := range overrides {
			for _, repeat := range []int{1, 3} {
				s, err := suite.Load(name)
				if err != nil {
					t.Fatal(err)
				}
				s.Override, s.Repeat = layer, repeat
				steps, err := s.Resolve()
				if err != nil {
					t.Fatalf("suite %s %s --repeat %d: %v", name, flag, repeat, err)
				}
				if err := checkResultNames(name, steps); err != nil {
					t.Errorf("built-in suite %s with %s --repeat %d: %v", name, flag, repeat, err)
				}
			}
		}
	}
	for _, tc := range []struct{ yaml, err string }{
		{"steps:\n  - {workload: tpcc, options: {style: statements}}\n  - {workload: tpcc, options: {style: routines}}\n", ""},
		{"steps:\n  - {workload: oltp_insert, threads: \"8\"}\n  - {workload: oltp_insert, threads: \"8\"}\n", ""},
		{"steps:\n  - {workload: oltp_insert, name: a b}\n  - {workload: oltp_insert, name: a-b}\n", "steps 1 and 2 both run oltp_insert"},
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

// Two steps of one workload are told apart by their options in file names.
func TestResultNameOfNamedStep(t *testing.T) {
	s, err := suite.Parse([]byte("steps:\n  - {workload: tpcc, options: {style: statements}}\n  - {workload: tpcc, options: {style: routines}}\n"), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	steps, _ := s.Resolve()
	var names []string
	for _, st := range steps {
		names = append(names, resultName("postgres", st, stepRun{threads: 8}, 1))
	}
	if got := fmt.Sprint(names); got != "[postgres-tpcc-style-statements postgres-tpcc-style-routines]" {
		t.Errorf("result names %s", got)
	}
}

// A workload file given by its path names one results file inside --out: no directories, and
// no way out of it.
func TestResultNameOfWorkloadFile(t *testing.T) {
	for path, want := range map[string]string{
		"/tmp/cap/captured.yaml": "postgres@18-tmp-cap-captured.yaml",
		"../up/mine.yaml":        "postgres@18-..-up-mine.yaml",
		"oltp_read_write":        "postgres@18-oltp_read_write",
	} {
		got := resultName("postgres@18", suite.Resolved{Workload: path}, stepRun{threads: 8}, 1)
		if got != want || strings.Contains(got, "/") {
			t.Errorf("%s: result name %q, want %q", path, got, want)
		}
	}
}
