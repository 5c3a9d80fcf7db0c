package cli

import (
	"os"
	"strings"
	"testing"
)

// --network and --clients: bad values are one line and exit 2, before any server starts.
func TestNetworkFlagsBadInput(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no rtt", []string{"compare", "--engines", "postgres", "--network", "bandwidth=1gbit"}, "no rtt"},
		{"bad rtt", []string{"compare", "--engines", "postgres", "--network", "rtt=far"}, "not a duration"},
		{"bandwidth without unit", []string{"compare", "--engines", "postgres", "--network", "rtt=1ms,bandwidth=5"}, "no unit"},
		{"unknown key", []string{"reproduce", "payments", "--network", "rtt=1ms,jitter=1ms"}, "unknown key"},
		{"negative clients", []string{"compare", "--engines", "postgres", "--clients", "-1"}, "bad --clients"},
		{"too many clients", []string{"compare", "--engines", "postgres", "--clients", "1000"}, "bad --clients"},
		{"fewer threads than clients", []string{"compare", "--engines", "postgres", "--clients", "4", "--threads", "2"}, "fewer than the hosts"},
		{"a ramp from client hosts", []string{"compare", "--engines", "postgres", "--suite", "saturation", "--clients", "1"}, "ramps its clients"},
	}
	if os.Geteuid() != 0 {
		cases = append(cases, struct {
			name string
			args []string
			want string
		}{"without root", []string{"compare", "--engines", "postgres", "--network", "rtt=1ms"}, "need root"})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := run(c.args...)
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			if code != 2 || len(lines) != 1 || !strings.Contains(stderr, c.want) {
				t.Errorf("exit %d, stderr %q: want exit 2 and one line containing %q", code, stderr, c.want)
			}
		})
	}
}
