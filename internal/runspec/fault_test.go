package runspec

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParseFault(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Fault
		err  string // part of the error; "" = valid
	}{
		{in: "kill-leader@30s", want: Fault{Kind: KillLeader, At: 30 * time.Second}},
		{in: "kill-node@30", want: Fault{Kind: KillNode, At: 30 * time.Second}},
		{in: " kill-node@1m,node=node2 ", want: Fault{Kind: KillNode, At: time.Minute, Node: "node2"}},
		{in: "stop-node@30s,for=10s", want: Fault{Kind: StopNode, At: 30 * time.Second, For: 10 * time.Second}},
		{in: "partition-node@2.5s,for=500ms,node=node3", want: Fault{Kind: PartitionNode, At: 2500 * time.Millisecond, For: 500 * time.Millisecond, Node: "node3"}},
		{in: "kill-node", err: "no offset"},
		{in: "reboot@3s", err: `unknown fault "reboot"`},
		{in: "kill-node@soon", err: "not a duration"},
		{in: "kill-node@-3s", err: "not a duration"},
		{in: "stop-node@3s", err: "needs for="},
		{in: "partition-node@3s,for=0s", err: "not a duration above zero"},
		{in: "kill-node@3s,for=1s", err: "takes no for="},
		{in: "kill-leader@3s,node=node1", err: "takes no node="},
		{in: "kill-node@3s,node=a b", err: "not a node name"},
		{in: "kill-node@3s,node=n1,node=n2", err: "given twice"},
		{in: "kill-node@3s,color=red", err: "unknown option"},
		{in: "kill-node@3s,node", err: "not key=value"},
	} {
		got, err := ParseFault("--fault", c.in)
		if c.err != "" {
			var ie *InputError
			if err == nil || !errors.As(err, &ie) || !strings.Contains(err.Error(), c.err) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%q: error %v, want one line with %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%q: %+v, %v; want %+v", c.in, got, err, c.want)
		}
		if again, err := ParseFault("--fault", got.String()); err != nil || again != got {
			t.Errorf("%q: String() %q does not read back: %+v, %v", c.in, got.String(), again, err)
		}
	}
}

func TestCheckFaults(t *testing.T) {
	for _, c := range []struct {
		f   Fault
		err string
	}{
		{Fault{Kind: KillNode, At: 3 * time.Second}, ""},
		{Fault{Kind: StopNode, At: 3 * time.Second, For: 7 * time.Second}, ""},
		{Fault{Kind: KillNode, At: 10 * time.Second}, "at or after"},
		{Fault{Kind: StopNode, At: 3 * time.Second, For: 8 * time.Second}, "past the measured time"},
	} {
		err := CheckFaults("--fault", []Fault{c.f}, 10*time.Second)
		if (c.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%v: %v, want %q", c.f, err, c.err)
		}
	}
	many := make([]string, MaxFaults+1)
	for i := range many {
		many[i] = "kill-node@1s"
	}
	if _, err := ParseFaults("--fault", many); err == nil {
		t.Errorf("%d faults accepted", len(many))
	}
}

func FuzzParseFault(f *testing.F) {
	for _, s := range []string{"kill-leader@30s", "kill-node@3s,node=node2", "stop-node@30s,for=10s", "partition-node@1,for=1", "x@", "@,", "stop-node@1s,for=1s,for=2s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseFault("--fault", s)
		if err != nil {
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("%q: error %v is not an InputError", s, err)
			}
			return
		}
		if got.At < 0 || got.For < 0 || got.At > MaxDuration || got.For > MaxDuration {
			t.Fatalf("%q: out of range %+v", s, got)
		}
		if again, err := ParseFault("--fault", got.String()); err != nil || again != got {
			t.Fatalf("%q: String() %q reads back as %+v, %v", s, got.String(), again, err)
		}
	})
}
