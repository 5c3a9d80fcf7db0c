package cli

import (
	"os"
	"strings"
	"testing"
)

// --network and --clients: bad values are one line and exit 2, before any server starts.
func TestNetworkFlagsBadInput(t *testing.T) {
	type flagCase struct {
		name, want string
		args       []string
	}
	cases := []flagCase{
		{name: "no rtt", args: []string{"compare", "--engines", "postgres", "--network", "bandwidth=1gbit"}, want: "no rtt"},
		{name: "bad rtt", args: []string{"compare", "--engines", "postgres", "--network", "rtt=far"}, want: "not a duration"},
		{name: "bandwidth without unit", args: []string{"compare", "--engines", "postgres", "--network", "rtt=1ms,bandwidth=5"}, want: "no unit"},
		{name: "unknown key", args: []string{"reproduce", "payments", "--network", "rtt=1ms,jitter=1ms"}, want: "unknown key"},
		{name: "negative clients", args: []string{"compare", "--engines", "postgres", "--clients", "-1"}, want: "bad --clients"},
		{name: "too many clients", args: []string{"compare", "--engines", "postgres", "--clients", "1000"}, want: "bad --clients"},
	}
	if os.Geteuid() == 0 { // without root, --clients is refused first
		cases = append(cases,
			flagCase{name: "fewer threads than clients", args: []string{"compare", "--engines", "postgres", "--clients", "4", "--threads", "2"}, want: "fewer than the hosts"},
			flagCase{name: "a ramp from client hosts", args: []string{"compare", "--engines", "postgres", "--suite", "saturation", "--clients", "1"}, want: "ramps its clients"},
			flagCase{name: "bandwidth study from client hosts", args: []string{"reproduce", "bandwidth", "--clients", "2", "--out", t.TempDir()}, want: "storage-bandwidth study"},
			flagCase{name: "ramped study from client hosts", args: []string{"reproduce", "ingest", "--clients", "2", "--out", t.TempDir()}, want: "ramps its clients"})
	} else {
		cases = append(cases, flagCase{name: "without root", args: []string{"compare", "--engines", "postgres", "--network", "rtt=1ms"}, want: "need root"})
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
