package cgroup

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// NewConfined is New with the group's processes confined to cpus (a cpuset list such as
// "0" or "0-1") by the cpuset controller: the core-scaling studies' "the server on N cores".
// Unlike the accounting controllers, a confinement that cannot be made is an error, not a
// figure left out: a run said to be on one core must be on one core.
func NewConfined(prefix, cpus string) (*Group, error) {
	g, err := New(prefix)
	if err != nil {
		return nil, err
	}
	if err := g.confine(cpus); err != nil {
		_ = g.Close()
		return nil, fmt.Errorf("confining the server to CPUs %s: %w", cpus, err)
	}
	return g, nil
}

func (g *Group) confine(cpus string) error {
	if g.V2 {
		dir := g.Dirs[Unified]
		ctl := filepath.Join(filepath.Dir(dir), "cgroup.subtree_control")
		if have, _ := os.ReadFile(ctl); !HasWord(string(have), "cpuset") {
			if err := WriteFile(ctl, "+cpuset"); err != nil {
				return fmt.Errorf("enabling the cgroup v2 cpuset controller in %s: %w", filepath.Dir(dir), err)
			}
		}
		return WriteFile(filepath.Join(dir, "cpuset.cpus"), cpus)
	}
	mounts, err := Mounts()
	if err != nil {
		return err
	}
	self, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return err
	}
	if err := g.makeV1(mounts, string(self), "cpuset"); err != nil {
		return err
	}
	dir := g.Dirs["cpuset"]
	// A v1 cpuset group takes no process until its cpus and mems are set, nor may it have cpus its
	// parent lacks: an ancestor left empty (made by another tool) gets its own parent's.
	if err := fillCpusetChain(filepath.Dir(dir)); err != nil {
		return err
	}
	mems, err := os.ReadFile(filepath.Join(filepath.Dir(dir), "cpuset.mems"))
	if err != nil {
		return err
	}
	if err := WriteFile(filepath.Join(dir, "cpuset.mems"), strings.TrimSpace(string(mems))); err != nil {
		return err
	}
	return WriteFile(filepath.Join(dir, "cpuset.cpus"), cpus)
}

// fillCpusetChain gives each v1 cpuset directory from dir up whose cpus or mems are empty its
// parent's, top-down, stopping at the hierarchy's root (which has both).
func fillCpusetChain(dir string) error {
	parent := filepath.Dir(dir)
	if _, err := os.Stat(filepath.Join(parent, "cpuset.cpus")); err != nil {
		return nil // dir is the hierarchy's root
	}
	if err := fillCpusetChain(parent); err != nil {
		return err
	}
	for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
		own, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			return err
		}
		if strings.TrimSpace(string(own)) != "" {
			continue
		}
		up, err := os.ReadFile(filepath.Join(parent, f))
		if err != nil {
			return err
		}
		if err := WriteFile(filepath.Join(dir, f), strings.TrimSpace(string(up))); err != nil {
			return err
		}
	}
	return nil
}

// AllowedCPUs lists the CPUs this process may run on (its affinity at the moment), in order.
func AllowedCPUs() []int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil
	}
	var out []int
	for c := 0; c < len(set)*64 && len(out) < set.Count(); c++ {
		if set.IsSet(c) {
			out = append(out, c)
		}
	}
	return out
}

// CPUList writes CPUs as a cpuset list: 0,1,2 as "0,1,2" (the kernel takes commas and ranges).
func CPUList(cpus []int) string {
	parts := make([]string, len(cpus))
	for i, c := range cpus {
		parts[i] = strconv.Itoa(c)
	}
	return strings.Join(parts, ",")
}

// PinProcess sets the affinity of every thread of this process to cpus (threads made later
// inherit it from the thread that makes them) and returns what sets each back to the affinity
// it had. The core-scaling runs keep the client off the server's CPUs with it.
func PinProcess(cpus []int) (restore func(), err error) {
	var want unix.CPUSet
	for _, c := range cpus {
		want.Set(c)
	}
	var before unix.CPUSet
	if err := unix.SchedGetaffinity(0, &before); err != nil {
		return nil, err
	}
	if err := setAllThreads(&want); err != nil {
		_ = setAllThreads(&before)
		return nil, fmt.Errorf("pinning the client to CPUs %s: %w", CPUList(cpus), err)
	}
	return func() { _ = setAllThreads(&before) }, nil
}

func setAllThreads(set *unix.CPUSet) error {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return err
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		if err := unix.SchedSetaffinity(tid, set); err != nil && err != unix.ESRCH {
			return err
		}
	}
	return nil
}
