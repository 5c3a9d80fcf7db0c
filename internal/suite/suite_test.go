package suite

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/runspec"
)

func TestBuiltinSuitesLoad(t *testing.T) {
	for _, name := range Builtin() {
		s, err := Load(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(s.Steps) == 0 || s.Description == "" {
			t.Fatalf("%s: no steps or no description", name)
		}
	}
	s, _ := Load("standard")
	r, err := s.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	if len(r) != 4 || r[0].Workload != "oltp_read_write" || r[0].Threads[0] != 16 || r[0].Time != time.Minute || r[0].Common["tables"] != "10" {
		t.Fatalf("standard suite is not 10x100k, 16 threads, 60 s: %+v", r[0])
	}
	s, _ = Load("saturation")
	r, _ = s.Resolve()
	if ramp := r[1]; ramp.Ramp == nil || ramp.Threads[0] != 32 || ramp.Time != 17*5*time.Second || r[0].Time != 8*time.Second {
		t.Fatalf("saturation: the ramp should run its whole length, the sweep 8 s: %+v / %+v", r[0], r[1])
	}
}

func TestParse(t *testing.T) {
	cases := []struct {
		name, yaml, errHas string
		check              func(t *testing.T, s *Suite)
	}{
		{name: "defaults and overrides", yaml: `
threads: [1, 2, 4]
time: 10s
options: {tables: "2"}
steps:
  - workload: oltp_point_select
  - workload: oltp_read_only
    threads: "8,16"
    time: 5s
    options: {range-size: "10"}
`, check: func(t *testing.T, s *Suite) {
			r, _ := s.Resolve()
			if len(r[0].Threads) != 3 || r[0].Time != 10*time.Second {
				t.Errorf("step 1 should take the suite defaults: %+v", r[0])
			}
			if len(r[1].Threads) != 2 || r[1].Threads[1] != 16 || r[1].Time != 5*time.Second || r[1].Own["range-size"] != "10" {
				t.Errorf("step 2 should keep its own settings: %+v", r[1])
			}
			if s.Estimate() != 3*10*time.Second+2*5*time.Second {
				t.Errorf("estimate %v", s.Estimate())
			}
		}},
		{name: "targets, no password", yaml: "targets: [\"pg=postgres://bench@db1/bench?password_file=/run/pw\", \"my=mysql://bench@db2:3307/bench\"]\nsteps: [{workload: x}]\n", check: func(t *testing.T, s *Suite) {
			if len(s.Targets) != 2 || s.Targets[1] != "my=mysql://bench@db2:3307/bench" {
				t.Errorf("targets %v", s.Targets)
			}
		}},
		{name: "a target with its password", yaml: "targets: [\"pg=postgres://bench:hunter2@db1/bench\"]\nsteps: [{workload: x}]\n", errHas: "holds no password"},
		{name: "a target without a name", yaml: "targets: [\"postgres://bench@db1/bench\"]\nsteps: [{workload: x}]\n", errHas: "is not NAME=DSN"},
		{name: "runspec's defaults", yaml: "steps: [{workload: x}]\n", check: func(t *testing.T, s *Suite) {
			r, _ := s.Resolve()
			if r[0].Threads[0] != runspec.DefaultThreads || r[0].Time != runspec.DefaultTime || r[0].MaxTries != runspec.DefaultMaxTries || s.Repeat != 1 {
				t.Errorf("defaults: %+v repeat %d", r[0], s.Repeat)
			}
		}},
		{name: "bare seconds, as on the command line", yaml: "time: 60\nwarmup: 0\nsteps: [{workload: x, time: 2.5}]\n", check: func(t *testing.T, s *Suite) {
			r, _ := s.Resolve()
			if r[0].Time != 2500*time.Millisecond || r[0].Warmup != 0 {
				t.Errorf("got %+v", r[0])
			}
		}},
		{name: "an override wins over steps", yaml: "threads: 2\nsteps: [{workload: x, threads: 4, time: 5s}]\n", check: func(t *testing.T, s *Suite) {
			s.Override = runspec.Layer{Threads: []int{1, 3}, Time: runspec.Ptr(time.Second)}
			r, _ := s.Resolve()
			if len(r[0].Threads) != 2 || r[0].Time != time.Second {
				t.Errorf("got %+v", r[0])
			}
		}},
		{name: "description kept", yaml: "description: >-\n  what it is\n  for\nsteps: [{workload: x}]\n", check: func(t *testing.T, s *Suite) {
			if s.Description != "what it is for" {
				t.Errorf("description %q", s.Description)
			}
		}},
		{name: "unknown key", yaml: "steps: [{workload: x}]\nthreds: 4\n", errHas: "threds"},
		{name: "no steps", yaml: "threads: 4\n", errHas: "no steps"},
		{name: "empty file", yaml: "", errHas: "is empty"},
		{name: "only a comment", yaml: "# nothing yet\n", errHas: "is empty"},
		{name: "bad duration", yaml: "time: soon\nsteps: [{workload: x}]\n", errHas: "not a duration"},
		{name: "bad threads", yaml: "threads: many\nsteps: [{workload: x}]\n", errHas: "threads"},
		{name: "time 0s", yaml: "time: 0s\nsteps: [{workload: x}]\n", errHas: "time \"0s\": must be more than zero"},
		{name: "step time 0", yaml: "steps: [{workload: x, time: 0}]\n", errHas: "step 1 time"},
		{name: "threads 0", yaml: "threads: 0\nsteps: [{workload: x}]\n", errHas: "threads must be at least 1"},
		{name: "step threads 0 in a list", yaml: "steps: [{workload: x}, {workload: y, threads: [1, 0]}]\n", errHas: "step 2 threads"},
		{name: "threads too many", yaml: "threads: 99999999999\nsteps: [{workload: x}]\n", errHas: "more than the most"},
		{name: "threads string 0", yaml: "threads: \"1,0\"\nsteps: [{workload: x}]\n", errHas: "at least 1"},
		{name: "repeat -1", yaml: "repeat: -1\nsteps: [{workload: x}]\n", errHas: "repeat \"-1\""},
		{name: "repeat 0", yaml: "repeat: 0\nsteps: [{workload: x}]\n", errHas: "repeat \"0\""},
		{name: "ramp add 0", yaml: "steps: [{workload: x, ramp: {add: 0, max: 8}}]\n", errHas: "ramp add \"0\""},
		{name: "ramp max below add", yaml: "steps: [{workload: x, ramp: {add: 4, max: 2}}]\n", errHas: "ramp max"},
		{name: "ramp every 0s", yaml: "steps: [{workload: x, ramp: {every: 0s, max: 8}}]\n", errHas: "ramp every"},
		{name: "negative warmup", yaml: "warmup: -1s\nsteps: [{workload: x}]\n", errHas: "negative"},
		{name: "NaN time", yaml: "time: .nan\nsteps: [{workload: x}]\n", errHas: "not a duration"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := Parse([]byte(c.yaml), "test.yaml")
			if c.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), c.errHas) {
					t.Fatalf("err = %v, want one containing %q", err, c.errHas)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, s)
		})
	}
}

// Run settings a suite gets wrong are runspec's input errors, which the command line maps to exit 2.
func TestSettingErrorsAreTyped(t *testing.T) {
	_, err := Parse([]byte("time: 0s\nsteps: [{workload: x}]\n"), "t.yaml")
	var ie *runspec.InputError
	if !errors.As(err, &ie) || !strings.HasPrefix(err.Error(), "suite t.yaml: time") {
		t.Fatalf("err = %v (%T)", err, err)
	}
}

func TestLoadMissing(t *testing.T) {
	_, err := Load("/nonexistent/suite.yaml")
	if err == nil || !strings.Contains(err.Error(), "quick") {
		t.Fatalf("want an error that lists the built-in suites, got %v", err)
	}
}

// FuzzParse: no suite file, however mangled, panics the parser, and what it accepts resolves to
// run settings runspec would accept.
func FuzzParse(f *testing.F) {
	for _, name := range Builtin() {
		data, _ := builtin.ReadFile("builtin/" + name + ".yaml")
		f.Add(data)
	}
	for _, s := range []string{"", "steps: [{workload: x, ramp: {add: 0}}]", "threads: \"1,2\"\nsteps: [{workload: x}]",
		"time: 1e300\nsteps: [{workload: x}]", "steps: [{workload: x, threads: [0]}]", "repeat: 2\nsteps:\n- workload: y\n  time: 5\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse(data, "fuzz.yaml")
		if err != nil {
			return
		}
		steps, err := s.Resolve()
		if err != nil {
			t.Fatalf("Parse accepted a suite Resolve rejects: %v", err)
		}
		for _, st := range steps {
			if st.Time <= 0 || st.Warmup < 0 || runspec.CheckThreads("t", st.Threads) != nil || st.Workload == "" {
				t.Fatalf("accepted bad settings: %+v", st)
			}
		}
		if s.Repeat < 1 {
			t.Fatalf("repeat %d", s.Repeat)
		}
	})
}

// A file far larger than any suite is refused before it is decoded (a 300 MB file took
// 2 GB of memory).
func TestLoadRefusesHugeFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "huge.yaml")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxFileBytes + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "larger than 1 MiB") {
		t.Errorf("Load of a %d-byte file = %v, want it refused by size", MaxFileBytes+1, err)
	}
}
