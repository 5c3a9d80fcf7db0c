package engine

import (
	"errors"
	"os"
	"os/exec"
	"sync"

	"github.com/fairbench/fairbench/internal/cgroup"
)

// makeGroup gives the server a cgroup of its own, beneath fairbench's, so the kernel accounts
// its CPU, memory and I/O, chrooted processes included. Without root or cgroups the server runs
// without one and its figures come from /proc (Cgroup says why).
func (s *Server) makeGroup() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return
	}
	if os.Geteuid() != 0 {
		s.cgErr = errors.New("not root: no cgroup of its own")
		return
	}
	if s.prof.CPUs > 0 {
		s.cg, s.cgErr = cgroup.NewConfined("fairbench-"+s.Kind, cgroup.CPUList(ServerCPUs(s.prof.CPUs)))
	} else {
		s.cg, s.cgErr = cgroup.New("fairbench-" + s.Kind)
	}
	if s.cg == nil {
		return
	}
	// Count I/O on the data directory's disk from the first write on.
	if dev, err := cgroup.DiskOf(s.hostRun); err == nil {
		_ = s.cg.CountDevice(dev)
	}
}

// ServerCPUs are the CPUs a server confined to n gets: the first n of those this process may run
// on, so the client can keep the others (ClientCPUs).
func ServerCPUs(n int) []int {
	all := startCPUs()
	return all[:min(n, len(all))]
}

// ClientCPUs are the CPUs left to the client beside a server confined to n; none when the
// server has them all.
func ClientCPUs(n int) []int {
	all := startCPUs()
	return all[min(n, len(all)):]
}

// startCPUs are the CPUs this process could run on when first asked, before any pinning of the
// client narrowed them.
var startCPUs = sync.OnceValue(cgroup.AllowedCPUs)

// Cgroup is the server's cgroup, or nil and why there is none.
func (s *Server) Cgroup() (*cgroup.Group, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cg, s.cgErr
}

// DataDisk is the block device ("MAJ:MIN") holding the data directory, "" if it has none.
func (s *Server) DataDisk() string {
	dev, err := cgroup.DiskOf(s.DataDir)
	if err != nil {
		return ""
	}
	return dev
}

// joinGroup makes cmd start inside the server's cgroup: a shell writes its own PID into the
// group's cgroup.procs files (opened here, passed as file descriptors, so that neither the
// chroot nor the server's user stands in the way) and then executes the server in its place,
// so the server's PID is the shell's and no process of it ever runs outside the group.
func (s *Server) joinGroup(cmd *exec.Cmd) (closeFiles func(), err error) {
	s.mu.Lock()
	g := s.cg
	s.mu.Unlock()
	if g == nil {
		return func() {}, nil
	}
	files, err := g.ProcsFiles()
	if err != nil {
		return nil, err
	}
	args := append([]string{"/bin/sh", "-c", cgroup.JoinScript(len(files)), "fairbench-join", cmd.Path}, cmd.Args[1:]...)
	cmd.Path, cmd.Args = "/bin/sh", args
	cmd.ExtraFiles = files
	return func() {
		for _, f := range files {
			f.Close()
		}
	}, nil
}

// Exited is closed when the server process exits, whoever ended it (Stop, a crash, a kill): a
// caller that keeps a server running (serve) watches it. Nil before the server process started.
func (s *Server) Exited() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.child == nil || !s.child.server {
		return nil
	}
	return s.child.done
}

// ExitError says how the server process ended, once Exited is closed.
func (s *Server) ExitError() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.child == nil {
		return nil
	}
	return s.child.err
}
