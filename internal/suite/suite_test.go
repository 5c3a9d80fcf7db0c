package suite

import (
	"strings"
	"testing"
	"time"
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
	r := s.Resolve()
	if len(r) != 4 || r[0].Workload != "oltp_read_write" || r[0].Threads[0] != 16 || r[0].Time != time.Minute || r[0].Common["tables"] != "10" {
		t.Fatalf("standard suite is not 10x100k, 16 threads, 60 s: %+v", r[0])
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
			r := s.Resolve()
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
		{name: "unknown key", yaml: "steps: [{workload: x}]\nthreds: 4\n", errHas: "threds"},
		{name: "no steps", yaml: "threads: 4\n", errHas: "no steps"},
		{name: "bad duration", yaml: "time: soon\nsteps: [{workload: x}]\n", errHas: "not a duration"},
		{name: "bad threads", yaml: "threads: many\nsteps: [{workload: x}]\n", errHas: "threads"},
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

func TestLoadMissing(t *testing.T) {
	_, err := Load("/nonexistent/suite.yaml")
	if err == nil || !strings.Contains(err.Error(), "quick") {
		t.Fatalf("want an error that lists the built-in suites, got %v", err)
	}
}
