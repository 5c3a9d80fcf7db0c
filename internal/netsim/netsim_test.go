package netsim

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func TestParseSpec(t *testing.T) {
	cases := []struct {
		in      string
		rtt     time.Duration
		bw      int64
		wantErr string
	}{
		{"rtt=0.65ms", 650 * time.Microsecond, 0, ""},
		{"rtt=5ms,bandwidth=2.5gbit", 5 * time.Millisecond, 2_500_000_000, ""},
		{"rtt=1ms, bandwidth=100mbit", time.Millisecond, 100_000_000, ""},
		{"bandwidth=1gbit", 0, 0, "no rtt"},
		{"rtt=fast", 0, 0, "not a duration"},
		{"rtt=-1ms", 0, 0, "not a duration"},
		{"rtt=1ms,bandwidth=10", 0, 0, "no unit"},
		{"rtt=1ms,loss=1%", 0, 0, "unknown key"},
		{"5ms", 0, 0, "not key=value"},
	}
	for _, c := range cases {
		s, err := ParseSpec(c.in)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%q: got %v, want one line with %q", c.in, err, c.wantErr)
			}
			continue
		}
		if err != nil || s.RTT != c.rtt || s.BandwidthBits != c.bw {
			t.Errorf("%q: got %+v, %v", c.in, s, err)
		}
	}
}

func FuzzParseSpec(f *testing.F) {
	for _, s := range []string{"rtt=1ms", "rtt=5ms,bandwidth=2.5gbit", "x", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if s, err := ParseSpec(v); err == nil && (s.RTT < 0 || s.BandwidthBits < 0) {
			t.Fatalf("%q: accepted %+v", v, s)
		}
	})
}

// echoServer answers each line with itself, on loopback.
func echoServer(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					c.Write([]byte(line))
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// The relay adds the round trip once per exchange, however many exchanges there are.
func TestRelayDelaysEachRoundTrip(t *testing.T) {
	for _, rtt := range []time.Duration{0, 5 * time.Millisecond} {
		r, err := NewRelay("127.0.0.1:0", echoServer(t), rtt/2)
		if err != nil {
			t.Fatal(err)
		}
		c, err := net.Dial("tcp", r.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		rd := bufio.NewReader(c)
		const n, settle = 200, 20 // the first exchanges teach the relay its timers' lateness
		var start time.Time
		for i := range n + settle {
			if i == settle {
				start = time.Now()
			}
			fmt.Fprintf(c, "ping %d\n", i)
			if line, err := rd.ReadString('\n'); err != nil || line != fmt.Sprintf("ping %d\n", i) {
				t.Fatalf("echo %d: %q %v", i, line, err)
			}
		}
		per := time.Since(start) / n
		c.Close()
		r.Close()
		if per < rtt || per > rtt+rtt/5+time.Millisecond {
			t.Errorf("rtt %v: a round trip through the relay took %v", rtt, per)
		}
	}
}

// Hosts reach the relay on the bridge from their own namespaces, and nothing is left after.
func TestHostsReachTheBridgeAndLeaveNothing(t *testing.T) {
	if os.Geteuid() != 0 {
		if _, err := Setup(1, Spec{}); err != ErrNotRoot {
			t.Fatalf("without root: %v", err)
		}
		t.Skip("needs root")
	}
	h, err := Setup(3, Spec{RTT: 2 * time.Millisecond, BandwidthBits: 100_000_000})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	r, err := NewRelay(h.BridgeIP+":0", echoServer(t), time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for i := range h.Names {
		script := fmt.Sprintf(`exec 3<>/dev/tcp/%s/%d; echo hello-%d >&3; read -r line <&3; echo "$line"; ip -o -4 addr show`, h.BridgeIP, r.Addr().Port, i)
		out, err := h.Command(i, "bash", "-c", script).CombinedOutput()
		if err != nil || !strings.Contains(string(out), fmt.Sprintf("hello-%d", i)) || !strings.Contains(string(out), h.Addrs[i]+"/24") {
			t.Fatalf("host %d: %v: %s", i, err, out)
		}
	}
	// The bandwidth is tbf on the host's side of its veth (netem's rate where netem exists).
	qd, _ := exec.Command("tc", "-n", h.Names[0], "qdisc", "show", "dev", peerPrefix+"0").CombinedOutput()
	if want := map[bool]string{true: "netem", false: "tbf"}[h.Netem]; !strings.Contains(string(qd), want) || !strings.Contains(string(qd), "100Mbit") {
		t.Errorf("host 0's qdisc: %s, want %s at 100Mbit", qd, want)
	}
	r.Close()
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if left, _ := LeftoversWhenIdle(); len(left) > 0 {
		t.Fatalf("left behind: %v", left)
	}
}

// A run killed before its Close leaves names the next Setup removes.
func TestSetupReapsAKilledRunsHosts(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	h, err := Setup(2, Spec{})
	if err != nil {
		t.Fatal(err)
	}
	h.lock.Close() // as a killed process's lock is dropped, its links not removed
	h.lock = nil
	h2, err := Setup(1, Spec{})
	if err != nil {
		t.Fatal(err)
	}
	if len(Leftovers()) != 3 { // the new bridge, namespace and veth only
		t.Errorf("after reaping: %v", Leftovers())
	}
	h2.Close()
	if left, _ := LeftoversWhenIdle(); len(left) > 0 {
		t.Fatalf("left behind: %v", left)
	}
}
