package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// The v1 controllers a server group is made in: CPU time, memory and block I/O.
var v1Controllers = []string{"cpuacct", "memory", "blkio"}

// Unified names the single cgroup v2 hierarchy in Group.Dirs.
const Unified = "unified"

// Group is one server's cgroup: a directory per hierarchy, all named alike.
type Group struct {
	Name string
	V2   bool
	// Dirs maps a controller (cpuacct, memory, blkio; Unified on v2) to the group's directory.
	Dirs map[string]string
	// Missing says which figures the kernel cannot give for this group, and why; the caller
	// falls back to /proc for those.
	Missing []string

	mu      sync.Mutex
	closed  bool
	closeEr error
}

var seq atomic.Int64

// Source names where a figure comes from, as results record it.
func (g *Group) Source(controller string) string {
	if g.V2 {
		return "cgroup v2 " + g.Dirs[Unified]
	}
	return "cgroup v1 " + g.Dirs[controller]
}

// New makes a group named prefix-PID-N beneath this process's own cgroup in every hierarchy
// that has a controller worth reading. With none at all it fails; with some it returns a group
// whose Missing lists the others.
func New(prefix string) (*Group, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("making a cgroup needs root")
	}
	mounts, err := Mounts()
	if err != nil {
		return nil, err
	}
	self, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	name := fmt.Sprintf("%s-%d-%d", prefix, os.Getpid(), seq.Add(1))
	g := &Group{Name: name, Dirs: map[string]string{}}
	if dir, ok := v2Parent(mounts, string(self)); ok {
		g.V2 = true
		if err := g.makeV2(dir); err != nil {
			return nil, err
		}
		return g, nil
	}
	for _, c := range v1Controllers {
		if err := g.makeV1(mounts, string(self), c); err != nil {
			g.Missing = append(g.Missing, err.Error())
		}
	}
	if len(g.Dirs) == 0 {
		return nil, fmt.Errorf("%w: %s", errNoHierarchy, strings.Join(g.Missing, "; "))
	}
	return g, nil
}

// v2Parent finds this process's own v2 cgroup when the memory and io controllers can be handed
// down from it (they are listed in its cgroup.controllers). On a hybrid machine the unified
// hierarchy has no controllers and v1 is used instead.
func v2Parent(mounts []Mount, self string) (string, bool) {
	rel, ok := PathIn(self, "")
	if !ok {
		return "", false
	}
	for _, m := range mounts {
		if m.FSType != "cgroup2" {
			continue
		}
		dir, err := ownDir(m, rel)
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
		if err == nil && HasWord(string(b), "memory") && HasWord(string(b), "io") {
			return dir, true
		}
	}
	return "", false
}

// makeV2 creates the group under parent and hands memory and io down to it where the parent
// does not already. The kernel refuses that in a cgroup holding processes (other than the
// root), so a fairbench that is not in a delegated subtree gets CPU figures only.
func (g *Group) makeV2(parent string) error {
	ctl := filepath.Join(parent, "cgroup.subtree_control")
	have, _ := os.ReadFile(ctl)
	for _, c := range []string{"cpu", "memory", "io"} {
		if HasWord(string(have), c) {
			continue
		}
		if err := WriteFile(ctl, "+"+c); err != nil && c != "cpu" {
			g.Missing = append(g.Missing, fmt.Sprintf("cgroup v2 %s controller cannot be enabled in %s: %v", c, parent, err))
		}
	}
	dir := filepath.Join(parent, g.Name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return fmt.Errorf("create cgroup %s: %w", dir, err)
	}
	g.Dirs[Unified] = dir
	return nil
}

func (g *Group) makeV1(mounts []Mount, self, c string) error {
	rel, ok := PathIn(self, c)
	if !ok {
		return fmt.Errorf("cgroup v1 %s: this process is in no %s cgroup", c, c)
	}
	for _, m := range mounts {
		if m.FSType != "cgroup" || !HasController(m.SuperOpts, c) {
			continue
		}
		parent, err := ownDir(m, rel)
		if err != nil {
			return fmt.Errorf("cgroup v1 %s: %w", c, err)
		}
		dir := filepath.Join(parent, g.Name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			return fmt.Errorf("create cgroup %s: %w", dir, err)
		}
		g.Dirs[c] = dir
		return nil
	}
	return fmt.Errorf("cgroup v1 %s hierarchy is not mounted", c)
}

// Reopen is a group another process made (its Dirs and V2 as recorded), for reading its
// figures. Only its maker closes it.
func Reopen(v2 bool, dirs map[string]string) (*Group, error) {
	g := &Group{V2: v2, Dirs: map[string]string{}}
	for c, d := range dirs {
		if _, err := os.Stat(d); err != nil {
			return nil, fmt.Errorf("cgroup %s: %w", d, err)
		}
		g.Dirs[c] = d
		g.Name = filepath.Base(d)
	}
	if len(g.Dirs) == 0 {
		return nil, errors.New("no cgroup directories recorded")
	}
	return g, nil
}

// dirs lists the group's directories once each (cpu and cpuacct may share a hierarchy).
func (g *Group) dirs() []string {
	seen := map[string]bool{}
	var out []string
	for _, c := range append(append([]string{}, v1Controllers...), Unified, "cpuset") {
		if d, ok := g.Dirs[c]; ok && !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	return out
}

// ProcsFiles opens each of the group's cgroup.procs files for writing, for a child to join the
// group from its first instruction (see JoinScript). The caller closes them.
func (g *Group) ProcsFiles() ([]*os.File, error) {
	var out []*os.File
	for _, d := range g.dirs() {
		f, err := os.OpenFile(filepath.Join(d, "cgroup.procs"), os.O_WRONLY, 0)
		if err != nil {
			for _, o := range out {
				o.Close()
			}
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// JoinScript is a /bin/sh script that writes its own PID to the n file descriptors from 3 on
// (cgroup.procs files opened by the parent, see ProcsFiles), closes them and executes its
// arguments in its place: the program starts inside the group, under chroot or another user
// too, since the files were opened with this process's rights and the kernel checks those.
func JoinScript(n int) string {
	var join, closeFDs []string
	for i := 0; i < n; i++ {
		join = append(join, fmt.Sprintf("echo $$ >&%d", 3+i))
		closeFDs = append(closeFDs, fmt.Sprintf("%d>&-", 3+i))
	}
	return strings.Join(join, " && ") + " || exit 125; exec " + strings.Join(closeFDs, " ") + `; exec "$@"`
}

// Add moves processes into the group (the ones gone meanwhile are skipped).
func (g *Group) Add(pids ...int) error {
	var errs []error
	for _, d := range g.dirs() {
		for _, pid := range pids {
			if err := WriteFile(filepath.Join(d, "cgroup.procs"), strconv.Itoa(pid)); err != nil && !errors.Is(err, syscall.ESRCH) {
				errs = append(errs, fmt.Errorf("move pid %d into %s: %w", pid, d, err))
			}
		}
	}
	return errors.Join(errs...)
}

// Procs lists the processes in the group.
func (g *Group) Procs() []int {
	seen := map[int]bool{}
	var out []int
	for _, d := range g.dirs() {
		b, _ := os.ReadFile(filepath.Join(d, "cgroup.procs"))
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil && !seen[pid] {
				seen[pid] = true
				out = append(out, pid)
			}
		}
	}
	return out
}

// Close kills whatever still runs in the group (only a server's processes are ever put there,
// and Close runs once that server was stopped) and removes the group's directories.
func (g *Group) Close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return g.closeEr
	}
	g.closed = true
	g.closeEr = RemoveDirs(g.dirs())
	return g.closeEr
}

// RemoveDirs kills the processes in the cgroup directories and removes them; gone ones count as
// removed. It is also how a dead fairbench's groups are reaped.
func RemoveDirs(dirs []string) error {
	var errs []error
	deadline := time.Now().Add(5 * time.Second)
	for _, d := range dirs {
		for {
			b, err := os.ReadFile(filepath.Join(d, "cgroup.procs"))
			if errors.Is(err, os.ErrNotExist) {
				break
			}
			for _, f := range strings.Fields(string(b)) {
				if pid, err := strconv.Atoi(f); err == nil {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
			err = syscall.Rmdir(d)
			if err == nil || errors.Is(err, syscall.ENOENT) {
				break
			}
			// EBUSY while killed processes are still being torn down.
			if time.Now().After(deadline) {
				errs = append(errs, fmt.Errorf("remove cgroup %s: %w", d, err))
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return errors.Join(errs...)
}

// Leftovers lists the group's directories still on the machine; empty after Close.
func (g *Group) Leftovers() []string {
	var out []string
	for _, d := range g.dirs() {
		if _, err := os.Stat(d); err == nil {
			out = append(out, d)
		}
	}
	return out
}

// Orphans lists the groups named prefix-*-PID-N beneath this process's own cgroups whose maker
// (PID) no longer runs, for a group made by a fairbench killed before it could record it. A PID
// that runs again, for whatever process, keeps its groups: leaving one behind is the lesser harm.
func Orphans(prefix string, running func(pid int) bool) []string {
	mounts, err := Mounts()
	if err != nil {
		return nil
	}
	self, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil
	}
	var parents []string
	if dir, ok := v2Parent(mounts, string(self)); ok {
		parents = append(parents, dir)
	} else {
		for _, c := range append(slices.Clone(v1Controllers), "cpuset") {
			rel, ok := PathIn(string(self), c)
			if !ok {
				continue
			}
			for _, m := range mounts {
				if m.FSType == "cgroup" && HasController(m.SuperOpts, c) {
					if d, err := ownDir(m, rel); err == nil {
						parents = append(parents, d)
					}
					break
				}
			}
		}
	}
	var out []string
	for _, p := range parents {
		dirs, _ := filepath.Glob(filepath.Join(p, prefix+"-*"))
		for _, d := range dirs {
			f := strings.Split(filepath.Base(d), "-")
			if len(f) < 3 {
				continue
			}
			pid, err := strconv.Atoi(f[len(f)-2])
			if err != nil || running(pid) {
				continue
			}
			out = append(out, d)
		}
	}
	return out
}

// IsMade says whether dir is a group directory of the kind New makes: an absolute, clean path
// inside a mounted cgroup hierarchy whose name starts with prefix. The reaper removes only
// such directories, whatever a server record names.
func IsMade(dir, prefix string) bool {
	if !filepath.IsAbs(dir) || filepath.Clean(dir) != dir || !strings.HasPrefix(filepath.Base(dir), prefix) {
		return false
	}
	mounts, err := Mounts()
	if err != nil {
		return false
	}
	for _, m := range mounts {
		if (m.FSType == "cgroup" || m.FSType == "cgroup2") && strings.HasPrefix(dir, m.Point+"/") {
			return true
		}
	}
	return false
}

// OfProcess is the group pid is in, for reading its figures (its maker, e.g. systemd, keeps it):
// on cgroup v2 where its cgroup has the memory and io controllers, else its v1 groups of the
// controllers New uses. ok is false where pid is in the root group of every hierarchy, which is
// the whole machine and no server's own.
func OfProcess(pid int) (_ *Group, ok bool) {
	mounts, err := Mounts()
	if err != nil {
		return nil, false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		return nil, false
	}
	self := string(b)
	if rel, ok := PathIn(self, ""); ok && rel != "/" {
		if dir, ok := v2Parent(mounts, self); ok {
			return &Group{Name: filepath.Base(dir), V2: true, Dirs: map[string]string{Unified: dir}}, true
		}
	}
	g := &Group{Dirs: map[string]string{}}
	for _, c := range v1Controllers {
		rel, ok := PathIn(self, c)
		if !ok || rel == "/" {
			continue
		}
		for _, m := range mounts {
			if m.FSType == "cgroup" && HasController(m.SuperOpts, c) {
				if d, err := ownDir(m, rel); err == nil {
					g.Dirs[c], g.Name = d, filepath.Base(d)
				}
				break
			}
		}
	}
	return g, len(g.Dirs) > 0
}

// LimitMemory caps the memory the group's processes may hold, the page cache of the files they
// read and write included (v2 memory.max, v1 memory.limit_in_bytes).
func (g *Group) LimitMemory(bytes int64) error {
	file := filepath.Join(g.Dirs["memory"], "memory.limit_in_bytes")
	if g.V2 {
		file = filepath.Join(g.Dirs[Unified], "memory.max")
	} else if g.Dirs["memory"] == "" {
		return errors.New("the server's cgroup has no memory controller to cap its memory with")
	}
	if err := WriteFile(file, strconv.FormatInt(bytes, 10)); err != nil {
		return fmt.Errorf("cap the server's memory at %d MiB: %w", bytes>>20, err)
	}
	return nil
}
