package tpch

import (
	"errors"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/runspec"
	"github.com/fairbench/fairbench/internal/workload"
)

// --query-timeout reads durations as every other run setting does (runspec): a bare number is
// seconds, and a bad value is an input error naming the option.
func TestQueryTimeoutOption(t *testing.T) {
	cases := []struct {
		value string
		want  time.Duration // 0: refused
	}{
		{"10m", 10 * time.Minute},
		{"90", 90 * time.Second},
		{"2.5s", 2500 * time.Millisecond},
		{"0", 0},
		{"-1s", 0},
		{"soon", 0},
	}
	spec, err := workload.Lookup(Name)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		w, err := newWorkload(spec.WithDefaults(map[string]string{OptQueryTimeout: c.value}))
		if c.want == 0 {
			var ie *runspec.InputError
			if !errors.As(err, &ie) || ie.Setting != "--"+OptQueryTimeout {
				t.Errorf("%q: error %v, want an input error for --%s", c.value, err, OptQueryTimeout)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.value, err)
			continue
		}
		if got := w.(*tpch).cfg.timeout; got != c.want {
			t.Errorf("%q: timeout %s, want %s", c.value, got, c.want)
		}
	}
}
