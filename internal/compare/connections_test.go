package compare

import (
	"testing"

	"github.com/fairbench/fairbench/internal/engine/profile"
	"github.com/fairbench/fairbench/internal/runspec"
	"github.com/fairbench/fairbench/internal/suite"
)

// A sweep past the profile's max_connections raises it alike for every engine (one profile);
// the defaults profile keeps each package's own limit.
func TestRaiseConnections(t *testing.T) {
	steps := func(threads ...int) []suite.Resolved {
		return []suite.Resolved{{Spec: runspec.Spec{Threads: threads}}}
	}
	cases := []struct {
		name       string
		prof       profile.Profile
		steps      []suite.Resolved
		wantRaised int
		wantMax    int
	}{
		{"within the default 200", profile.Profile{}, steps(1, 8, 64), 0, 200},
		{"a sweep to 512", profile.Profile{}, steps(1, 2, 4, 512), 522, 522},
		{"a profile already large enough", profile.Profile{MaxConnections: 600}, steps(512), 0, 600},
		{"defaults profile untouched", profile.Profile{Mode: profile.ModeDefaults}, steps(512), 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := c.prof
			if got := raiseConnections(&p, c.steps); got != c.wantRaised || p.MaxConnections != c.wantMax {
				t.Errorf("raised %d, max_connections %d; want %d, %d", got, p.MaxConnections, c.wantRaised, c.wantMax)
			}
		})
	}
}
