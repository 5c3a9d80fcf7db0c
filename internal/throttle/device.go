package throttle

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fairbench/fairbench/internal/cgroup"
)

// DefaultDeviceSize is the backing file's size. The file is sparse, so it costs only what is
// written; it has to hold the data set, the WAL or redo log and the probe file.
const DefaultDeviceSize = 8 << 30

// unmountWait is how long Close retries an unmount that fails because the filesystem is busy
// (a server process still exiting) before detaching it lazily.
const unmountWait = 3 * time.Second

// DeviceOptions say where the device's backing file goes and how big it is.
type DeviceOptions struct {
	// WorkDir holds the backing file and the mount point (default os.TempDir()). The device is
	// never faster than this directory's filesystem, so that is what an uncapped step measures.
	WorkDir   string
	SizeBytes int64 // default DefaultDeviceSize
	// failAt names a set-up step to fail on purpose, for the tests of the tear-down: "losetup",
	// "mkfs", "mount", and through Setup "cgroup", "limit" or "add".
	failAt string
	// NoJournal makes the filesystem without ext4's journal. The journal's commits, which every
	// fsync that changes metadata (a file's mtime, its size) causes, are written by a kernel
	// thread that no cgroup is charged for; without it, a server's cgroup counts all of the
	// device's writes, which is what bench/disk-truth.sh checks.
	NoJournal bool
}

// Device is a loop device over a sparse file in a fresh directory, formatted ext4 and mounted at
// Dir. It is the only user of the loop device, so a cap on it throttles nothing else.
type Device struct {
	Path         string // /dev/loopN
	Major, Minor uint32
	Dir          string // the mounted filesystem, world-traversable so PostgreSQL's user gets in
	File         string // the backing file
	DirectIO     bool   // the loop device bypasses the page cache of the backing file's filesystem

	failAt string // DeviceOptions.failAt

	base      string // directory holding File and Dir, removed by Close
	mu        sync.Mutex
	attached  bool
	mounted   bool
	closeOnce sync.Once
	closeErr  error
}

// NewDevice attaches, formats and mounts a new device. On failure it tears down what it built.
func NewDevice(ctx context.Context, opts DeviceOptions) (_ *Device, err error) {
	if err := RequireRoot(); err != nil {
		return nil, err
	}
	for tool, pkg := range map[string]string{"losetup": "util-linux", "mkfs.ext4": "e2fsprogs"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, fmt.Errorf("%s not found: install %s (apt-get install %s)", tool, pkg, pkg)
		}
	}
	size := opts.SizeBytes
	if size <= 0 {
		size = DefaultDeviceSize
	}
	base, err := makeDeviceDir(opts.WorkDir)
	if err != nil {
		return nil, err
	}
	d := &Device{base: base, File: filepath.Join(base, "disk.img"), Dir: filepath.Join(base, "mnt"), failAt: opts.failAt}
	defer func() {
		if err != nil {
			if cerr := d.Close(); cerr != nil {
				err = fmt.Errorf("%w (and tearing down: %v)", err, cerr)
			}
		}
	}()
	// MkdirTemp makes 0700; the server may run as another user (postgres) and must reach Dir.
	if err := os.Chmod(base, 0o755); err != nil {
		return nil, err
	}
	if err := makeBackingFile(d.File, size); err != nil {
		return nil, err
	}
	if err := d.attach(ctx); err != nil {
		return nil, err
	}
	if err := d.mkfs(ctx, opts.NoJournal); err != nil {
		return nil, err
	}
	if err := d.mount(); err != nil {
		return nil, err
	}
	return d, nil
}

// makeDeviceDir creates the directory that holds a device's backing file and mount point under
// work (or the system temp dir), with the owner file that lets a later run reap it.
func makeDeviceDir(work string) (string, error) {
	if work == "" {
		work = os.TempDir()
	}
	if err := os.MkdirAll(work, 0o755); err != nil {
		return "", fmt.Errorf("device work dir: %w", err)
	}
	base, err := os.MkdirTemp(work, devicePrefix)
	if err != nil {
		return "", fmt.Errorf("device work dir: %w", err)
	}
	base, _ = filepath.Abs(base)
	if err := writeOwner(base); err != nil {
		_ = os.RemoveAll(base)
		return "", fmt.Errorf("device work dir: %w", err)
	}
	return base, nil
}

// makeBackingFile creates the sparse file the loop device is backed by.
func makeBackingFile(path string, size int64) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("backing file: %w", err)
	}
	err = f.Truncate(size)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("backing file: %w", err)
	}
	return nil
}

// mkfs makes an ext4 filesystem on the attached device.
func (d *Device) mkfs(ctx context.Context, noJournal bool) error {
	if err := inject(d.failAt, "mkfs"); err != nil {
		return err
	}
	// Inode tables and the journal are written now rather than by ext4lazyinit in the background,
	// which would otherwise spend the cap of the first measured steps.
	args := []string{"-q", "-F", "-m", "0", "-L", "fairbench", "-E", "lazy_itable_init=0,lazy_journal_init=0,nodiscard"}
	if noJournal {
		args = append(args, "-O", "^has_journal")
	}
	mkfs := exec.CommandContext(ctx, "mkfs.ext4", append(args, d.Path)...)
	if out, err := mkfs.CombinedOutput(); err != nil {
		return fmt.Errorf("mkfs.ext4 %s: %v: %s", d.Path, err, lastLine(out))
	}
	return nil
}

// mount mounts the filesystem on Dir, which every user may enter.
func (d *Device) mount() error {
	if err := os.Mkdir(d.Dir, 0o755); err != nil {
		return err
	}
	if err := inject(d.failAt, "mount"); err != nil {
		return err
	}
	if err := syscall.Mount(d.Path, d.Dir, "ext4", 0, ""); err != nil {
		return fmt.Errorf("mount %s on %s: %w", d.Path, d.Dir, err)
	}
	d.mu.Lock()
	d.mounted = true
	d.mu.Unlock()
	return os.Chmod(d.Dir, 0o755)
}

// attach sets up the loop device, with direct I/O to the backing file where the kernel and the
// backing filesystem allow it: otherwise every page would be cached twice, and the uncapped
// device would run at page-cache speed rather than at the disk's.
func (d *Device) attach(ctx context.Context) error {
	if err := inject(d.failAt, "losetup"); err != nil {
		return err
	}
	out, err := exec.CommandContext(ctx, "losetup", "--find", "--show", "--direct-io=on", d.File).CombinedOutput()
	direct := err == nil
	if err != nil {
		// A losetup that attached but could not switch to direct I/O leaves the device behind.
		if dev := d.findLoop(); dev != "" {
			_ = exec.Command("losetup", "-d", dev).Run()
		}
		out, err = exec.CommandContext(ctx, "losetup", "--find", "--show", d.File).CombinedOutput()
	}
	if err != nil {
		return fmt.Errorf("losetup: %v: %s", err, lastLine(out))
	}
	// losetup may print a warning (e.g. direct I/O refused) before the device name.
	dev := ""
	for _, l := range strings.Split(string(out), "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "/dev/") {
			dev = l
		}
	}
	if dev == "" {
		return fmt.Errorf("losetup printed no device: %s", lastLine(out))
	}
	d.mu.Lock()
	d.Path, d.attached = dev, true
	d.mu.Unlock()
	var st syscall.Stat_t
	if err := syscall.Stat(dev, &st); err != nil {
		return fmt.Errorf("loop device %s: %w", dev, err)
	}
	d.Major, d.Minor = devMajor(st.Rdev), devMinor(st.Rdev)
	if b, err := os.ReadFile(d.sysPath("loop/dio")); err == nil {
		direct = strings.TrimSpace(string(b)) == "1"
	}
	d.DirectIO = direct
	return nil
}

// Linux's dev_t encoding (glibc's gnu_dev_major/minor).
func devMajor(rdev uint64) uint32 { return uint32((rdev>>8)&0xfff | (rdev>>32)&^0xfff) }
func devMinor(rdev uint64) uint32 { return uint32(rdev&0xff | (rdev>>12)&^0xff) }

// DevNum is the device as cgroup files name it, "MAJ:MIN".
func (d *Device) DevNum() string { return fmt.Sprintf("%d:%d", d.Major, d.Minor) }

func (d *Device) sysPath(name string) string {
	return filepath.Join("/sys/block", filepath.Base(d.Path), name)
}

// findLoop returns the loop device whose backing file is d.File, "" if none.
func (d *Device) findLoop() string {
	ents, _ := filepath.Glob("/sys/block/loop*/loop/backing_file")
	for _, p := range ents {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		bf := strings.TrimSuffix(strings.TrimSpace(string(b)), " (deleted)")
		if bf == d.File {
			return "/dev/" + filepath.Base(filepath.Dir(filepath.Dir(p)))
		}
	}
	return ""
}

// IOStats are the device's cumulative transfer counters, from /sys/block/loopN/stat: what
// really reached the device, whoever issued it (the server, the kernel writing back its dirty
// pages, the filesystem's journal).
type IOStats struct {
	At                    time.Time
	ReadBytes, WriteBytes int64
	// ReadOps and WriteOps are bios: requests completed plus the bios the block layer merged into
	// them, which is how a cgroup counts operations (before merging), so the two sit side by side.
	ReadOps, WriteOps int64
}

// Stats reads the device's counters now.
func (d *Device) Stats() (IOStats, error) {
	return BlockStats(filepath.Base(d.Path))
}

// BlockStats reads the counters of the block device named name ("loop3") now.
func BlockStats(name string) (IOStats, error) {
	b, err := os.ReadFile(filepath.Join("/sys/block", name, "stat"))
	if err != nil {
		return IOStats{}, err
	}
	return parseBlockStat(b, time.Now())
}

// parseBlockStat reads Documentation/block/stat.rst's format: reads completed, reads merged,
// sectors read, ms reading, then the same four for writes. Sectors are 512 bytes whatever the
// device's block size.
func parseBlockStat(b []byte, at time.Time) (IOStats, error) {
	f := strings.Fields(string(b))
	if len(f) < 7 {
		return IOStats{}, fmt.Errorf("block stat %q: too few fields", strings.TrimSpace(string(b)))
	}
	var n [7]int64
	for i := range n {
		v, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil {
			return IOStats{}, fmt.Errorf("block stat %q: not numbers", strings.TrimSpace(string(b)))
		}
		n[i] = v
	}
	return IOStats{At: at, ReadBytes: n[2] * 512, WriteBytes: n[6] * 512, ReadOps: n[0] + n[1], WriteOps: n[4] + n[5]}, nil
}

// DropCache writes the filesystem's dirty pages out and drops its cached ones, so that the next
// step starts with what a server keeps in its own memory and nothing more. It touches only this
// device's files, not the machine's whole page cache.
func (d *Device) DropCache() error {
	const fadvDontNeed = 4
	var firstErr error
	err := filepath.WalkDir(d.Dir, func(p string, de fs.DirEntry, err error) error {
		if err != nil || !de.Type().IsRegular() {
			return nil // files come and go under a running server
		}
		f, err := os.Open(p)
		if err != nil {
			return nil
		}
		defer f.Close()
		// Dirty pages are not dropped: write them out first (fsync works on a read-only fd).
		if err := f.Sync(); err != nil && firstErr == nil {
			firstErr = fmt.Errorf("fsync %s: %w", p, err)
		}
		if _, _, e := syscall.Syscall6(syscall.SYS_FADVISE64, f.Fd(), 0, 0, fadvDontNeed, 0, 0); e != 0 && firstErr == nil {
			firstErr = fmt.Errorf("fadvise %s: %w", p, e)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return firstErr
}

// Close unmounts, detaches and removes the device. It is safe to call more than once and on a
// half-built device. A filesystem still busy after a few seconds is detached lazily (gone from
// the mount table at once, released by the kernel with its last user); the loop device is then
// set to clear itself on that last close.
func (d *Device) Close() error {
	d.closeOnce.Do(func() { d.closeErr = d.close() })
	return d.closeErr
}

func (d *Device) close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	var errs []error
	if d.mounted {
		if err := unmount(d.Dir); err != nil {
			errs = append(errs, err)
		} else {
			d.mounted = false
		}
	}
	// Looked up by backing file rather than trusting d.attached: a losetup that failed half-way
	// may have attached anyway, and a device number freed earlier may now be someone else's.
	if d.File != "" {
		if dev := d.findLoop(); dev != "" {
			if out, err := exec.Command("losetup", "-d", dev).CombinedOutput(); err != nil {
				errs = append(errs, fmt.Errorf("losetup -d %s: %v: %s", dev, err, lastLine(out)))
			}
		}
	}
	d.attached = false
	// Never RemoveAll through a mount that is still there: it would delete the server's files
	// and then fail anyway.
	if !d.mounted && d.base != "" {
		if err := os.RemoveAll(d.base); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("tear down %s: %w", d.Path, err)
	}
	return nil
}

func unmount(dir string) error {
	deadline := time.Now().Add(unmountWait)
	for {
		err := syscall.Unmount(dir, 0)
		if err == nil || errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOENT) {
			return nil // EINVAL: not a mount point (any more)
		}
		if !errors.Is(err, syscall.EBUSY) {
			return fmt.Errorf("unmount %s: %w", dir, err)
		}
		if time.Now().After(deadline) {
			if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
				return fmt.Errorf("unmount %s (busy, and lazily: %v): %w", dir, err, syscall.EBUSY)
			}
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Leftovers lists what of the device is still on the machine; empty once Close has finished
// (a lazily detached filesystem's loop device lingers until its last user is gone).
func (d *Device) Leftovers() []string {
	var out []string
	if d.Dir != "" && isMountPoint(d.Dir) {
		out = append(out, "mount "+d.Dir)
	}
	if d.File != "" {
		if dev := d.findLoop(); dev != "" {
			out = append(out, "loop device "+dev+" over "+d.File)
		}
	}
	if d.base != "" {
		if _, err := os.Stat(d.base); err == nil {
			out = append(out, "directory "+d.base)
		}
	}
	return out
}

// isMountPoint looks dir up in this process's mount table.
func isMountPoint(dir string) bool {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return false
	}
	for _, m := range cgroup.ParseMountinfo(b) {
		if m.Point == dir {
			return true
		}
	}
	return false
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
