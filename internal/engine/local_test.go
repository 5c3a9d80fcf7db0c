package engine

import (
	"context"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/engine/discovery"
	"github.com/fairbench/fairbench/internal/engine/profile"
)

func TestParseProcAddr(t *testing.T) {
	for _, c := range []struct {
		in   string
		ip   string
		port int
	}{
		{"0100007F:1538", "127.0.0.1", 5432},
		{"00000000:0CEA", "0.0.0.0", 3306},
		{"00000000000000000000000001000000:1F90", "::1", 8080},
		{"0000000000000000FFFF00000100007F:0050", "127.0.0.1", 80},
	} {
		ip, port, ok := parseProcAddr(c.in)
		if !ok || !ip.Equal(net.ParseIP(c.ip)) || port != c.port {
			t.Errorf("parseProcAddr(%q) = %v %d %v, want %s %d", c.in, ip, port, ok, c.ip, c.port)
		}
	}
	if _, _, ok := parseProcAddr("zz:1"); ok {
		t.Error("a bad address parsed")
	}
}

// A server given by DSN that listens on this machine is found by its socket: a throwaway server
// (its own cgroup, made by fairbench), and a plain process in no cgroup of its own, which is
// measured from its process tree.
func TestFindListening(t *testing.T) {
	integration(t)
	if os.Geteuid() != 0 {
		t.Skip("reading other processes' sockets needs root")
	}
	inst, err := discovery.Find(discovery.Postgres, "")
	if err != nil {
		t.Skip("PostgreSQL is not installed")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	srv, err := Start(ctx, inst, profile.Profile{}, workDir(t, ""))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	l, ok := FindListening("127.0.0.1", srv.Port)
	if !ok {
		t.Fatalf("the server on port %d was not found by its socket", srv.Port)
	}
	if want := srv.PIDs()[0]; l.PID != want {
		t.Errorf("found pid %d, want the postmaster %d", l.PID, want)
	}
	if g, _ := srv.Cgroup(); g != nil && (l.Group == nil || l.Group.Name != g.Name) {
		t.Errorf("found group %v, want the server's own %s", l.Group, g.Name)
	}
	// A server just started still has processes coming and going (a worker starting, the setup
	// connection's backend leaving), and each side reads the tree afresh: compare reads taken
	// together, until they agree or two seconds pass.
	var tree, want []int
	for try := 0; try < 20; try++ {
		if tree, want = l.PIDs(), srv.PIDs(); slices.Equal(tree, want) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !slices.Equal(tree, want) {
		t.Errorf("tree %v, want %v", tree, want)
	}
	if _, ok := FindListening("192.0.2.1", srv.Port); ok {
		t.Error("a server on another host was taken for this machine's")
	}

	// A listener in this test's own cgroup, which it shares with the test: not its own.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	child := exec.Command("python3", "-c", "import socket,time; s=socket.socket(); s.bind(('127.0.0.1',"+strconv.Itoa(port)+")); s.listen(); time.sleep(60)")
	if err := child.Start(); err != nil {
		t.Skip("python3 not available to hold a socket")
	}
	defer func() { _ = child.Process.Kill(); _ = child.Wait() }()
	var found *Local
	for range 50 {
		if found, ok = FindListening("localhost", port); ok {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if found == nil || found.PID != child.Process.Pid {
		t.Fatalf("found %+v, want the child pid %d", found, child.Process.Pid)
	}
	if found.Group != nil {
		t.Errorf("a process sharing its cgroup with others was given the group %s", found.Group.Name)
	}
}
