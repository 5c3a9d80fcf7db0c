package engine

import (
	"net"
	"strconv"
	"testing"
)

// TestReservePort: ports come from below the ephemeral range, are not handed out twice while
// held (by this process or, through the abstract socket, another), and come back on release.
func TestReservePort(t *testing.T) {
	lo, hi := portRange()
	if lo != lowestPort || hi > 61000 || hi-lo < 2000 {
		t.Fatalf("range %d-%d", lo, hi)
	}
	seen := map[int]bool{}
	for i := 0; i < 20; i++ {
		p, err := ReservePort()
		if err != nil {
			t.Fatal(err)
		}
		if p < lo || p >= hi || seen[p] {
			t.Fatalf("port %d: outside %d-%d or handed out twice", p, lo, hi)
		}
		seen[p] = true
		if _, err := net.Listen("unix", "@fairbench-port-"+strconv.Itoa(p)); err == nil {
			t.Fatalf("port %d reserved but another process could take its lock", p)
		}
	}
	for p := range seen {
		ReleasePort(p)
		lock, ok := tryPort(p)
		if !ok {
			t.Fatalf("port %d not free again after ReleasePort", p)
		}
		lock.Close()
	}
}

// TestPortHeldElsewhere: a port whose lock another process holds, or on which something
// listens, is not taken.
func TestPortHeldElsewhere(t *testing.T) {
	p, err := ReservePort()
	if err != nil {
		t.Fatal(err)
	}
	ReleasePort(p)
	other, err := net.Listen("unix", "@fairbench-port-"+strconv.Itoa(p))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := tryPort(p); ok {
		t.Error("took a port another process holds")
	}
	other.Close()
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, ok := tryPort(p); ok {
		t.Error("took a port something listens on")
	}
}
