package netsim

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Spec is the network distance asked for with --network: the round trip between the clients
// and the server, and optionally the link's bandwidth.
type Spec struct {
	RTT           time.Duration
	BandwidthBits int64 // bits per second; 0 = the veth's own speed
}

const specFix = "write it as rtt=0.65ms or rtt=5ms,bandwidth=2.5gbit (bandwidth in kbit, mbit or gbit)"

// ParseSpec reads --network's value. Errors name the setting and the fix.
func ParseSpec(v string) (Spec, error) {
	var s Spec
	seenRTT := false
	for _, part := range strings.Split(v, ",") {
		k, val, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return s, fmt.Errorf("bad --network %q: %q is not key=value: %s", v, part, specFix)
		}
		switch strings.TrimSpace(k) {
		case "rtt":
			d, err := time.ParseDuration(strings.TrimSpace(val))
			if err != nil || d < 0 || d > 10*time.Second {
				return s, fmt.Errorf("bad --network %q: rtt %q is not a duration from 0 to 10s: %s", v, val, specFix)
			}
			s.RTT, seenRTT = d, true
		case "bandwidth":
			b, err := parseBandwidth(strings.TrimSpace(val))
			if err != nil {
				return s, fmt.Errorf("bad --network %q: bandwidth %q %v: %s", v, val, err, specFix)
			}
			s.BandwidthBits = b
		default:
			return s, fmt.Errorf("bad --network %q: unknown key %q: %s", v, k, specFix)
		}
	}
	if !seenRTT {
		return s, fmt.Errorf("bad --network %q: no rtt: %s", v, specFix)
	}
	return s, nil
}

func parseBandwidth(v string) (int64, error) {
	units := []struct {
		suffix string
		mult   float64
	}{{"gbit", 1e9}, {"mbit", 1e6}, {"kbit", 1e3}}
	for _, u := range units {
		if num, ok := strings.CutSuffix(strings.ToLower(v), u.suffix); ok {
			f, err := strconv.ParseFloat(num, 64)
			if err != nil || f <= 0 || f > 400 {
				return 0, fmt.Errorf("needs a number from above 0 to 400 before %s", u.suffix)
			}
			return int64(f * u.mult), nil
		}
	}
	return 0, fmt.Errorf("has no unit")
}

// String is the spec as --network takes it.
func (s Spec) String() string {
	out := "rtt=" + s.RTT.String()
	if s.BandwidthBits > 0 {
		out += fmt.Sprintf(",bandwidth=%gmbit", float64(s.BandwidthBits)/1e6)
	}
	return out
}
