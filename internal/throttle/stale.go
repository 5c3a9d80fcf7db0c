package throttle

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fairbench/fairbench/internal/cgroup"
	"github.com/fairbench/fairbench/internal/ownfile"
	"github.com/fairbench/fairbench/internal/procfs"
)

// A fairbench killed outright (kill -9, the OOM killer) runs no Close: its loop device, mount,
// cap and the server on that mount stay behind. Every device directory therefore records its
// owner, and ReapStale, run before a new device is set up, tears down what a dead owner left.

const (
	devicePrefix = "fairbench-throttle-"
	ownerFile    = "owner" // "PID STARTTIME": the start time tells a reused PID from the owner
	// ownerGrace covers the moment between creating a device directory and writing its owner.
	ownerGrace = time.Minute
)

// statFields are the fields of /proc/PID/stat after the command name (procfs.StatFields).
func statFields(pid int) ([]string, error) {
	f, ok := procfs.StatFields(pid)
	if !ok {
		return nil, fmt.Errorf("/proc/%d/stat cannot be read", pid)
	}
	return f, nil
}

// processStart is the process's start time in clock ticks since boot (stat field 22).
func processStart(pid int) (string, error) {
	f, err := statFields(pid)
	if err != nil {
		return "", err
	}
	if len(f) < 20 {
		return "", fmt.Errorf("/proc/%d/stat: too few fields", pid)
	}
	return f[19], nil
}

// ownerTag identifies this process for writeOwner.
func ownerTag() string {
	st, _ := processStart(os.Getpid())
	return fmt.Sprintf("%d %s", os.Getpid(), st)
}

func writeOwner(base string) error {
	return os.WriteFile(filepath.Join(base, ownerFile), []byte(ownerTag()+"\n"), 0o644)
}

// ownerAlive says whether the process that wrote tag is still running.
func ownerAlive(tag string) bool {
	f := strings.Fields(tag)
	if len(f) != 2 {
		return false
	}
	pid, err := strconv.Atoi(f[0])
	if err != nil {
		return false
	}
	st, err := processStart(pid)
	return err == nil && st == f[1]
}

// ReapStale tears down the devices under workDir (default os.TempDir()) whose fairbench is gone:
// it kills the processes still using the device's files (the dead run's throwaway servers), lifts
// the device's cap, unmounts, detaches and removes it. It returns what it reaped; devices of a
// live fairbench are left alone.
func ReapStale(workDir string) ([]string, error) {
	if err := RequireRoot(); err != nil {
		return nil, err
	}
	if workDir == "" {
		workDir = os.TempDir()
	}
	bases, _ := filepath.Glob(filepath.Join(workDir, devicePrefix+"*"))
	var reaped []string
	var errs []error
	for _, base := range bases {
		base, _ = filepath.Abs(base)
		if !isStale(base) {
			continue
		}
		if err := reapDevice(base); err != nil {
			errs = append(errs, err)
			continue
		}
		reaped = append(reaped, base)
	}
	errs = append(errs, reapGroups())
	return reaped, errors.Join(errs...)
}

// isStale says whether base was left by a fairbench that is gone. Only a directory of this user's
// that others cannot write to counts: another local user could make /tmp/fairbench-throttle-X
// with a link at mnt to any mount point, whose users root would then kill and which it would
// unmount.
func isStale(base string) bool {
	if ownfile.PrivateDir(base) != nil {
		return false
	}
	if fi, err := os.Lstat(filepath.Join(base, "mnt")); err == nil && !fi.IsDir() {
		return false
	}
	b, err := os.ReadFile(filepath.Join(base, ownerFile))
	if err != nil {
		st, serr := os.Stat(base)
		return serr == nil && time.Since(st.ModTime()) > ownerGrace
	}
	return !ownerAlive(strings.TrimSpace(string(b)))
}

func reapDevice(base string) error {
	d := &Device{base: base, File: filepath.Join(base, "disk.img"), Dir: filepath.Join(base, "mnt")}
	d.mounted = isMountPoint(d.Dir)
	if d.mounted {
		if err := killUsers(d.Dir); err != nil {
			return err
		}
	}
	if dev := d.findLoop(); dev != "" {
		d.Path, d.attached = dev, true
		if b, err := os.ReadFile(d.sysPath("dev")); err == nil {
			if err := liftV1Cap(strings.TrimSpace(string(b))); err != nil {
				return err
			}
		}
	}
	return d.Close()
}

// killUsers kills every process with a file, working directory or root under dir and waits for
// them to go, so that dir can be unmounted. Only the throwaway servers of a dead fairbench run
// there: the directory is fairbench's own mount.
func killUsers(dir string) error {
	users := processesUsing(dir)
	for _, pid := range users {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	deadline := time.Now().Add(5 * time.Second)
	for _, pid := range users {
		for syscall.Kill(pid, 0) == nil && !isZombie(pid) {
			if time.Now().After(deadline) {
				return fmt.Errorf("process %d still uses %s after SIGKILL", pid, dir)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return nil
}

func processesUsing(dir string) []int {
	under := func(p string) bool { return p == dir || strings.HasPrefix(p, dir+"/") }
	procs, _ := filepath.Glob("/proc/[0-9]*")
	var out []int
	self := os.Getpid()
	for _, p := range procs {
		pid, err := strconv.Atoi(filepath.Base(p))
		if err != nil || pid == self {
			continue
		}
		uses := false
		for _, l := range []string{"cwd", "root"} {
			if t, err := os.Readlink(filepath.Join(p, l)); err == nil && under(t) {
				uses = true
			}
		}
		if !uses {
			fds, _ := filepath.Glob(filepath.Join(p, "fd", "*"))
			for _, fd := range fds {
				if t, err := os.Readlink(fd); err == nil && under(t) {
					uses = true
					break
				}
			}
		}
		if uses {
			out = append(out, pid)
		}
	}
	return out
}

// isZombie: a killed child of a dead parent is reaped by init, but until then it still answers
// kill(pid, 0).
func isZombie(pid int) bool {
	f, err := statFields(pid)
	return err != nil || (len(f) > 0 && f[0] == "Z")
}

// liftV1Cap removes the device's rules from the v1 blkio root, where this package puts them.
func liftV1Cap(devNum string) error {
	h, err := findHierarchy()
	if err != nil || h.v2 {
		return nil
	}
	var errs []error
	for _, name := range []string{"blkio.throttle.read_bps_device", "blkio.throttle.write_bps_device"} {
		p := filepath.Join(h.root, name)
		if b, err := os.ReadFile(p); err == nil && parseV1Rule(string(b), devNum) != 0 {
			if err := cgroup.WriteFile(p, devNum+" 0"); err != nil {
				errs = append(errs, fmt.Errorf("clear the cap in %s: %w", p, err))
			}
		}
	}
	return errors.Join(errs...)
}

// reapGroups removes the v2 cgroups (fairbench-PID-N) of fairbench processes that are gone.
func reapGroups() error {
	h, err := findHierarchy()
	if err != nil || !h.v2 {
		return nil
	}
	dirs, _ := filepath.Glob(filepath.Join(h.root, "fairbench-*"))
	var errs []error
	for _, dir := range dirs {
		f := strings.Split(filepath.Base(dir), "-")
		if len(f) != 3 {
			continue
		}
		if pid, err := strconv.Atoi(f[1]); err != nil || syscall.Kill(pid, 0) == nil {
			continue
		}
		b, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
		for _, p := range strings.Fields(string(b)) {
			_ = cgroup.WriteFile(filepath.Join(h.root, "cgroup.procs"), p)
		}
		if err := syscall.Rmdir(dir); err != nil && !errors.Is(err, syscall.ENOENT) {
			errs = append(errs, fmt.Errorf("remove stale cgroup %s: %w", dir, err))
		}
	}
	return errors.Join(errs...)
}
