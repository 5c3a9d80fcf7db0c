package throttle

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/fairbench/fairbench/internal/cgroup"
)

// Mechanism names, as reports show them.
const (
	CgroupV2 = "cgroup v2 io.max"
	CgroupV1 = "cgroup v1 blkio.throttle"
)

// hierarchy is where the I/O controller lives on this machine.
type hierarchy struct {
	v2   bool
	root string // mount point of the hierarchy
}

// findHierarchy prefers cgroup v2 when its io controller is there. On a hybrid machine the io
// controller is bound to the v1 blkio hierarchy instead and the unified one has none.
func findHierarchy() (hierarchy, error) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return hierarchy{}, fmt.Errorf("reading the mount table: %w", err)
	}
	return pickHierarchy(cgroup.ParseMountinfo(b), func(p string) ([]byte, error) { return os.ReadFile(p) })
}

func pickHierarchy(mounts []cgroup.Mount, read func(string) ([]byte, error)) (hierarchy, error) {
	var v2Roots []string
	for _, m := range mounts {
		if m.FSType != "cgroup2" {
			continue
		}
		v2Roots = append(v2Roots, m.Point)
		if b, err := read(filepath.Join(m.Point, "cgroup.controllers")); err == nil && cgroup.HasWord(string(b), "io") {
			return hierarchy{v2: true, root: m.Point}, nil
		}
	}
	for _, m := range mounts {
		if m.FSType == "cgroup" && cgroup.HasWord(strings.ReplaceAll(m.SuperOpts, ",", " "), "blkio") {
			return hierarchy{root: m.Point}, nil
		}
	}
	if len(v2Roots) > 0 {
		return hierarchy{}, fmt.Errorf("no cgroup I/O controller: cgroup v2 at %s has no io controller in cgroup.controllers and no cgroup v1 blkio hierarchy is mounted", strings.Join(v2Roots, ", "))
	}
	return hierarchy{}, errors.New("no cgroup I/O controller: neither cgroup v2 (with io) nor cgroup v1 blkio is mounted")
}

// Available says which mechanism NewGroup would use, or why there is none (not root, no I/O
// controller), without changing anything.
func Available() (string, error) {
	if err := RequireRoot(); err != nil {
		return "", err
	}
	h, err := findHierarchy()
	if err != nil {
		return "", err
	}
	if h.v2 {
		return CgroupV2, nil
	}
	return CgroupV1, nil
}

var groupSeq atomic.Int64

// Group holds processes under a read and write bandwidth cap on one device.
//
// On cgroup v2 it is a new cgroup, fairbench-<pid>-<n>, directly under the hierarchy's root,
// with io.max set; pages the server dirties are written back on its cgroup's account there
// (cgroup writeback, for which the memory controller is enabled alongside io), so one cap covers
// all of the server's I/O.
//
// cgroup v1 has no cgroup writeback: dirty pages are written back by kernel flusher threads that
// belong to the root blkio cgroup, and would escape a cap set on a child cgroup (PostgreSQL
// writes its data files that way). So on v1 the cap is set on the root blkio cgroup for this one
// device, which only fairbench uses, and the server's processes are moved to the root cgroup
// when they are anywhere else: the server's own reads and writes and the flushers' writeback
// then share one cap.
type Group struct {
	Mechanism string
	Dir       string // the cgroup the processes are put in
	Device    string // "MAJ:MIN"

	h        hierarchy
	created  bool     // Dir was made by NewGroup (v2)
	enabled  []string // controllers NewGroup enabled in the root's cgroup.subtree_control (v2)
	mu       sync.Mutex
	origins  map[int]string // pid -> cgroup dir it was moved from, to put it back on Close
	limited  bool
	closed   bool
	closeErr error
	failAt   string // DeviceOptions.failAt, through Setup
}

// NewGroup makes the group for the device (MAJ:MIN) with no cap yet.
func NewGroup(major, minor uint32) (*Group, error) { return newGroup(major, minor, "") }

func newGroup(major, minor uint32, failAt string) (_ *Group, err error) {
	if err := RequireRoot(); err != nil {
		return nil, err
	}
	h, err := findHierarchy()
	if err != nil {
		return nil, err
	}
	g := &Group{Device: fmt.Sprintf("%d:%d", major, minor), h: h, origins: map[int]string{}, failAt: failAt}
	defer func() {
		if err != nil {
			if cerr := g.Close(); cerr != nil {
				err = fmt.Errorf("%w (and tearing down: %v)", err, cerr)
			}
		}
	}()
	if err := inject(g.failAt, "cgroup"); err != nil {
		return nil, err
	}
	if !h.v2 {
		g.Mechanism, g.Dir = CgroupV1, h.root
		return g, nil
	}
	g.Mechanism = CgroupV2
	g.Dir = filepath.Join(h.root, fmt.Sprintf("fairbench-%d-%d", os.Getpid(), groupSeq.Add(1)))
	if err := os.Mkdir(g.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("create cgroup: %w", err)
	}
	g.created = true
	// io.max appears in the new cgroup only once the parent hands io down to its children.
	ctl := filepath.Join(h.root, "cgroup.subtree_control")
	have, err := os.ReadFile(ctl)
	if err != nil {
		return nil, err
	}
	avail, _ := os.ReadFile(filepath.Join(h.root, "cgroup.controllers"))
	for _, c := range []string{"io", "memory"} {
		if cgroup.HasWord(string(have), c) || !cgroup.HasWord(string(avail), c) {
			continue
		}
		if err := cgroup.WriteFile(ctl, "+"+c); err != nil {
			if c == "memory" {
				continue // writeback then goes to the root cgroup, uncapped; io.max still caps direct I/O
			}
			return nil, fmt.Errorf("enable the io controller in %s: %w", ctl, err)
		}
		g.enabled = append(g.enabled, c)
	}
	if _, err := os.Stat(filepath.Join(g.Dir, "io.max")); err != nil {
		return nil, fmt.Errorf("cgroup %s has no io.max although io is enabled: %w", g.Dir, err)
	}
	return g, nil
}

// LimitMemory caps the memory the group's processes may hold, the page cache of the files they
// read and write included (cgroup v2 memory.max): a server whose reads would otherwise come from
// a page cache as large as the machine's spare memory then reads from the device, as on a machine
// whose data is larger than its memory. cgroup v1 is refused: its group is the root (see Group).
func (g *Group) LimitMemory(bytes int64) error {
	if g.Mechanism != CgroupV2 {
		return fmt.Errorf("capping the server's memory needs cgroup v2 (this machine uses %s)", g.Mechanism)
	}
	if err := cgroup.WriteFile(filepath.Join(g.Dir, "memory.max"), strconv.FormatInt(bytes, 10)); err != nil {
		return fmt.Errorf("cap the server's memory at %d MiB: %w", bytes>>20, err)
	}
	return nil
}

// SetLimit caps reads and writes to the device at these bytes per second; 0 lifts a cap.
func (g *Group) SetLimit(readBps, writeBps int64) error {
	if err := inject(g.failAt, "limit"); err != nil {
		return err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return errors.New("throttle group already closed")
	}
	g.limited = true // also on failure: Close must then clear whatever part was written
	if g.h.v2 {
		rule := fmt.Sprintf("%s rbps=%s wbps=%s", g.Device, v2Rate(readBps), v2Rate(writeBps))
		if err := cgroup.WriteFile(filepath.Join(g.Dir, "io.max"), rule); err != nil {
			return fmt.Errorf("write %q to %s/io.max: %w", rule, g.Dir, err)
		}
	} else {
		for _, f := range []struct {
			name string
			bps  int64
		}{{"blkio.throttle.read_bps_device", readBps}, {"blkio.throttle.write_bps_device", writeBps}} {
			rule := fmt.Sprintf("%s %d", g.Device, max(f.bps, 0))
			if err := cgroup.WriteFile(filepath.Join(g.Dir, f.name), rule); err != nil {
				return fmt.Errorf("write %q to %s: %w", rule, filepath.Join(g.Dir, f.name), err)
			}
		}
	}
	r, w, err := g.limits()
	if err != nil {
		return err
	}
	if r != max(readBps, 0) || w != max(writeBps, 0) {
		return fmt.Errorf("%s reads back a cap of %d/%d bytes/s for %s, not the %d/%d written", g.Dir, r, w, g.Device, readBps, writeBps)
	}
	return nil
}

func v2Rate(bps int64) string {
	if bps <= 0 {
		return "max"
	}
	return strconv.FormatInt(bps, 10)
}

// Limits reads the caps now in force on the device (0 = none).
func (g *Group) Limits() (readBps, writeBps int64, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.limits()
}

func (g *Group) limits() (int64, int64, error) {
	if g.h.v2 {
		b, err := os.ReadFile(filepath.Join(g.Dir, "io.max"))
		if err != nil {
			return 0, 0, err
		}
		r, w := parseIOMax(string(b), g.Device)
		return r, w, nil
	}
	var out [2]int64
	for i, name := range []string{"blkio.throttle.read_bps_device", "blkio.throttle.write_bps_device"} {
		b, err := os.ReadFile(filepath.Join(g.Dir, name))
		if err != nil {
			return 0, 0, err
		}
		out[i] = parseV1Rule(string(b), g.Device)
	}
	return out[0], out[1], nil
}

// parseIOMax finds dev's line in io.max ("8:16 rbps=2097152 wbps=max riops=max wiops=max").
func parseIOMax(s, dev string) (r, w int64) {
	for _, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] != dev {
			continue
		}
		for _, kv := range f[1:] {
			k, v, _ := strings.Cut(kv, "=")
			n, _ := strconv.ParseInt(v, 10, 64) // "max" stays 0
			switch k {
			case "rbps":
				r = n
			case "wbps":
				w = n
			}
		}
	}
	return r, w
}

// parseV1Rule finds dev's line in a blkio.throttle.*_device file ("7:0 26214400").
func parseV1Rule(s, dev string) int64 {
	for _, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == dev {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n
		}
	}
	return 0
}

// Add moves the processes into the group; ones already there, or gone meanwhile, are skipped.
// Children forked later inherit the group, so moving a server's main process before clients
// connect covers its future backends; Follow catches any that slip through.
func (g *Group) Add(pids []int) error {
	if err := inject(g.failAt, "add"); err != nil {
		return err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return errors.New("throttle group already closed")
	}
	var errs []error
	for _, pid := range pids {
		cur, err := g.cgroupOf(pid)
		if err != nil {
			continue // exited
		}
		if cur == g.Dir {
			continue
		}
		if err := cgroup.WriteFile(filepath.Join(g.Dir, "cgroup.procs"), strconv.Itoa(pid)); err != nil {
			if errors.Is(err, syscall.ESRCH) {
				continue
			}
			errs = append(errs, fmt.Errorf("move pid %d into %s: %w", pid, g.Dir, err))
			continue
		}
		if _, ok := g.origins[pid]; !ok {
			g.origins[pid] = cur
		}
	}
	return errors.Join(errs...)
}

// Contains says whether the process is in the group now.
func (g *Group) Contains(pid int) bool {
	cur, err := g.cgroupOf(pid)
	return err == nil && cur == g.Dir
}

// cgroupOf is the directory of the process's cgroup in the group's hierarchy.
func (g *Group) cgroupOf(pid int) (string, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil {
		return "", err
	}
	rel, ok := cgroupPath(string(b), g.h.v2)
	if !ok {
		return "", fmt.Errorf("pid %d: no %s line in /proc/PID/cgroup", pid, g.Mechanism)
	}
	return filepath.Join(g.h.root, rel), nil
}

// cgroupPath is the process's cgroup in the I/O hierarchy (v2's, or v1's blkio).
func cgroupPath(s string, v2 bool) (string, bool) {
	if v2 {
		return cgroup.PathIn(s, "")
	}
	return cgroup.PathIn(s, "blkio")
}

// Follow adds the processes pids lists every interval until ctx ends or stop is called, for
// servers that start processes of their own later (PostgreSQL forks a backend per connection
// and autovacuum workers from the postmaster, which the group already holds, so these normally
// inherit it; this is the safety net). stop returns the first error seen.
func (g *Group) Follow(ctx context.Context, pids func() []int, every time.Duration) (stop func() error) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	var firstErr error
	go func() {
		defer close(done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			if err := g.Add(pids()); err != nil && firstErr == nil {
				firstErr = err
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return func() error {
		cancel()
		<-done
		return firstErr
	}
}

// Command is cmd run inside the group from its first instruction: a shell moves itself into the
// group and then executes the program in its place.
func (g *Group) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	script := `echo $$ > "$0" && exec "$@"`
	return exec.CommandContext(ctx, "/bin/sh", append([]string{"-c", script, filepath.Join(g.Dir, "cgroup.procs"), name}, args...)...)
}

// Close lifts the cap, puts the processes it moved back where they came from (those still
// alive) and removes the cgroup it created. It is safe to call more than once.
func (g *Group) Close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return g.closeErr
	}
	g.closed = true
	var errs []error
	if g.h.v2 {
		errs = append(errs, g.closeV2()...)
	} else {
		if g.limited {
			for _, name := range []string{"blkio.throttle.read_bps_device", "blkio.throttle.write_bps_device"} {
				p := filepath.Join(g.Dir, name)
				if b, err := os.ReadFile(p); err == nil && parseV1Rule(string(b), g.Device) == 0 {
					continue
				}
				if err := cgroup.WriteFile(p, g.Device+" 0"); err != nil {
					errs = append(errs, fmt.Errorf("clear the cap in %s: %w", p, err))
				}
			}
		}
		g.restore()
	}
	g.closeErr = errors.Join(errs...)
	if g.closeErr != nil {
		g.closeErr = fmt.Errorf("tear down %s: %w", g.Mechanism, g.closeErr)
	}
	return g.closeErr
}

// restore moves the processes still alive back to the cgroups they came from.
func (g *Group) restore() {
	for pid, from := range g.origins {
		if cur, err := g.cgroupOf(pid); err == nil && cur == g.Dir {
			_ = cgroup.WriteFile(filepath.Join(from, "cgroup.procs"), strconv.Itoa(pid))
		}
	}
}

func (g *Group) closeV2() []error {
	var errs []error
	if g.created {
		g.restore()
		// Whatever is still inside (a server that did not stop, children forked in the group)
		// goes to the root: a cgroup with processes cannot be removed.
		deadline := time.Now().Add(3 * time.Second)
		for {
			b, _ := os.ReadFile(filepath.Join(g.Dir, "cgroup.procs"))
			for _, p := range strings.Fields(string(b)) {
				_ = cgroup.WriteFile(filepath.Join(g.h.root, "cgroup.procs"), p)
			}
			err := syscall.Rmdir(g.Dir)
			if err == nil || errors.Is(err, syscall.ENOENT) {
				g.created = false
				break
			}
			// EBUSY while exiting processes are still being torn down.
			if time.Now().After(deadline) {
				errs = append(errs, fmt.Errorf("remove cgroup %s: %w", g.Dir, err))
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	// Hand the controllers back only when no other fairbench group relies on them (another run
	// on this machine may have one): disabling io would silently lift its cap.
	if len(g.enabled) > 0 && !g.created {
		others, _ := filepath.Glob(filepath.Join(g.h.root, "fairbench-*"))
		if len(others) == 0 {
			ctl := filepath.Join(g.h.root, "cgroup.subtree_control")
			for i := len(g.enabled) - 1; i >= 0; i-- {
				_ = cgroup.WriteFile(ctl, "-"+g.enabled[i]) // busy when other cgroups use it: theirs now
			}
		}
		g.enabled = nil
	}
	return errs
}

// Leftovers lists what of the group is still on the machine; empty after Close.
func (g *Group) Leftovers() []string {
	var out []string
	if g.h.v2 {
		if g.Dir != "" {
			if _, err := os.Stat(g.Dir); err == nil {
				out = append(out, "cgroup "+g.Dir)
			}
		}
		return out
	}
	for _, name := range []string{"blkio.throttle.read_bps_device", "blkio.throttle.write_bps_device"} {
		p := filepath.Join(g.Dir, name)
		if b, err := os.ReadFile(p); err == nil && parseV1Rule(string(b), g.Device) != 0 {
			out = append(out, "cap for "+g.Device+" in "+p)
		}
	}
	return out
}
