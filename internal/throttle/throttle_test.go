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
	"syscall"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/cgroup"
)

func TestParseRate(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    int64
		wantErr bool
	}{
		{"25M", 25 << 20, false},
		{"125m", 125 << 20, false},
		{"1G", 1 << 30, false},
		{"512K", 512 << 10, false},
		{"1.5G", 3 << 29, false},
		{"100MB/s", 100 << 20, false},
		{"max", 0, false},
		{" MAX ", 0, false},
		{"1048576", 1 << 20, false},
		{"", 0, true},
		{"-5M", 0, true},
		{"fast", 0, true},
		{"1K", 0, true}, // below the floor
	} {
		got, err := ParseRate(tc.in)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("ParseRate(%q) = %d, %v; want %d, error %v", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestFormatRate(t *testing.T) {
	for _, tc := range []struct {
		in   int64
		want string
	}{{0, "max"}, {25 << 20, "25M"}, {2 << 30, "2G"}, {640 << 10, "640K"}, {1000001, "1000001"}} {
		if got := FormatRate(tc.in); got != tc.want {
			t.Errorf("FormatRate(%d) = %q, want %q", tc.in, got, tc.want)
		}
		if tc.in > 0 {
			if back, err := ParseRate(FormatRate(tc.in)); err != nil || back != tc.in {
				t.Errorf("ParseRate(FormatRate(%d)) = %d, %v", tc.in, back, err)
			}
		}
	}
}

const mountinfo = `22 1 252:0 / / rw,relatime shared:1 - ext4 /dev/vda rw,discard
30 22 0:26 / /sys/fs/cgroup ro,nosuid - tmpfs tmpfs ro,mode=755
31 30 0:27 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
35 30 0:31 / /sys/fs/cgroup/blkio rw,relatime - cgroup cgroup rw,blkio
36 30 0:32 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct
40 22 7:0 / /tmp/with\040space rw,relatime - ext4 /dev/loop0 rw
`

func TestParseMountinfo(t *testing.T) {
	ms := cgroup.ParseMountinfo([]byte(mountinfo))
	if len(ms) != 6 {
		t.Fatalf("got %d mounts, want 6: %+v", len(ms), ms)
	}
	if ms[5].Point != "/tmp/with space" || ms[5].FSType != "ext4" {
		t.Errorf("escaped mount Point: %+v", ms[5])
	}
	if ms[3].SuperOpts != "rw,blkio" {
		t.Errorf("super options: %+v", ms[3])
	}
}

func TestPickHierarchy(t *testing.T) {
	hybrid := cgroup.ParseMountinfo([]byte(mountinfo))
	pureV2 := []cgroup.Mount{{Point: "/sys/fs/cgroup", FSType: "cgroup2"}}
	files := func(m map[string]string) func(string) ([]byte, error) {
		return func(p string) ([]byte, error) {
			if s, ok := m[p]; ok {
				return []byte(s), nil
			}
			return nil, os.ErrNotExist
		}
	}
	for _, tc := range []struct {
		name    string
		mounts  []cgroup.Mount
		files   map[string]string
		want    hierarchy
		wantErr string
	}{
		{"hybrid: io bound to v1", hybrid, map[string]string{"/sys/fs/cgroup/unified/cgroup.controllers": ""},
			hierarchy{root: "/sys/fs/cgroup/blkio"}, ""},
		{"pure v2 with io", pureV2, map[string]string{"/sys/fs/cgroup/cgroup.controllers": "cpuset cpu io memory pids\n"},
			hierarchy{v2: true, root: "/sys/fs/cgroup"}, ""},
		{"v2 without io", pureV2, map[string]string{"/sys/fs/cgroup/cgroup.controllers": "cpu memory\n"},
			hierarchy{}, "cgroup v2 at /sys/fs/cgroup has no io controller"},
		{"no cgroups", nil, nil, hierarchy{}, "neither cgroup v2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := pickHierarchy(tc.mounts, files(tc.files))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestCgroupPath(t *testing.T) {
	proc := "9:name=systemd:/\n7:blkio:/a/b\n4:memory:/x\n0::/user.slice/s1\n"
	for _, tc := range []struct {
		v2   bool
		want string
	}{{false, "/a/b"}, {true, "/user.slice/s1"}} {
		got, ok := cgroupPath(proc, tc.v2)
		if !ok || got != tc.want {
			t.Errorf("cgroupPath(v2=%v) = %q, %v; want %q", tc.v2, got, ok, tc.want)
		}
	}
	if _, ok := cgroupPath("4:memory:/x\n", false); ok {
		t.Error("found a blkio path where there is none")
	}
}

func TestParseRules(t *testing.T) {
	io := "8:0 rbps=max wbps=1048576 riops=max wiops=max\n7:3 rbps=26214400 wbps=26214400 riops=max wiops=max\n"
	if r, w := parseIOMax(io, "7:3"); r != 26214400 || w != 26214400 {
		t.Errorf("io.max 7:3 = %d/%d", r, w)
	}
	if r, w := parseIOMax(io, "8:0"); r != 0 || w != 1048576 {
		t.Errorf("io.max 8:0 = %d/%d", r, w)
	}
	if r, w := parseIOMax(io, "7:30"); r != 0 || w != 0 {
		t.Errorf("io.max for an absent device = %d/%d", r, w)
	}
	if n := parseV1Rule("7:0 26214400\n7:1 5\n", "7:1"); n != 5 {
		t.Errorf("v1 rule = %d", n)
	}
}

func TestParseBlockStat(t *testing.T) {
	cases := []struct {
		name, in string
		want     IOStats
		bad      bool
	}{
		{"fields of a loop device", "    1234  6   2048  10  56  7  4096  20  0  30  30\n",
			IOStats{ReadBytes: 2048 * 512, WriteBytes: 4096 * 512, ReadOps: 1240, WriteOps: 63}, false},
		{"newer kernels add discard and flush fields", "1 0 8 0 2 1 16 0 0 0 0 0 0 0 0 0 0",
			IOStats{ReadBytes: 8 * 512, WriteBytes: 16 * 512, ReadOps: 1, WriteOps: 3}, false},
		{"too short", "1 2", IOStats{}, true},
		{"not numbers", "a b c d e f g h i j k", IOStats{}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := parseBlockStat([]byte(c.in), time.Time{})
			if (err != nil) != c.bad {
				t.Fatalf("err = %v, want error %v", err, c.bad)
			}
			if !c.bad && got != c.want {
				t.Fatalf("got %+v, want %+v", got, c.want)
			}
		})
	}
}

func TestDevNumbers(t *testing.T) {
	// makedev(259, 70000): major above 255 and minor above 255 use the split encoding.
	rdev := uint64(70000&0xff) | uint64(259&0xfff)<<8 | uint64(70000&^0xff)<<12 | uint64(259&^0xfff)<<32
	if devMajor(rdev) != 259 || devMinor(rdev) != 70000 {
		t.Fatalf("got %d:%d", devMajor(rdev), devMinor(rdev))
	}
}

// needThrottle skips unless this machine lets the tests build devices and cgroups.
func needThrottle(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("makes loop devices and cgroups: not in the unit layer (go test -short)")
	}
	mech, err := Available()
	if err != nil {
		t.Skipf("throttling not possible here: %v", err)
	}
	for _, tool := range []string{"losetup", "mkfs.ext4", "dd"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	return mech
}

// assertClean fails on anything under work (files, mounts, loop devices backed by a file in
// it) or a cap still set for dev.
func assertClean(t *testing.T, work, dev string, g *Group) {
	t.Helper()
	ents, _ := os.ReadDir(work)
	for _, e := range ents {
		t.Errorf("left in the work dir: %s", e.Name())
	}
	if b, err := os.ReadFile("/proc/self/mountinfo"); err == nil {
		for _, m := range cgroup.ParseMountinfo(b) {
			if strings.HasPrefix(m.Point, work) {
				t.Errorf("mount left behind: %s", m.Point)
			}
		}
	}
	files, _ := filepath.Glob("/sys/block/loop*/loop/backing_file")
	for _, f := range files {
		if b, err := os.ReadFile(f); err == nil && strings.HasPrefix(strings.TrimSpace(string(b)), work) {
			t.Errorf("loop device left behind: %s -> %s", f, strings.TrimSpace(string(b)))
		}
	}
	if g != nil {
		for _, l := range g.Leftovers() {
			t.Errorf("left behind: %s", l)
		}
	}
	h, err := findHierarchy()
	if err == nil && h.v2 {
		if m, _ := filepath.Glob(filepath.Join(h.root, "fairbench-"+strconv.Itoa(os.Getpid())+"-*")); len(m) > 0 {
			t.Errorf("cgroups left behind: %v", m)
		}
	}
	if err == nil && !h.v2 && dev != "" {
		for _, name := range []string{"blkio.throttle.read_bps_device", "blkio.throttle.write_bps_device"} {
			b, _ := os.ReadFile(filepath.Join(h.root, name))
			if parseV1Rule(string(b), dev) != 0 {
				t.Errorf("cap for %s left in %s", dev, name)
			}
		}
	}
}

// TestCapHolds builds a device and group, proves a 25M cap with direct I/O from inside the
// group, moves a process in and out, and checks that Close leaves nothing behind.
func TestCapHolds(t *testing.T) {
	mech := needThrottle(t)
	work := t.TempDir()
	ctx := context.Background()
	th, err := Setup(ctx, DeviceOptions{WorkDir: work, SizeBytes: 512 << 20})
	if err != nil {
		t.Fatal(err)
	}
	dev := th.Device.DevNum()
	defer func() {
		if err := th.Close(); err != nil {
			t.Error(err)
		}
		assertClean(t, work, dev, th.Group)
	}()
	if th.Group.Mechanism != mech {
		t.Errorf("mechanism %q, Available said %q", th.Group.Mechanism, mech)
	}
	const capBps = 25 << 20
	if err := th.Group.SetLimit(capBps, capBps); err != nil {
		t.Fatal(err)
	}
	if r, w, err := th.Group.Limits(); err != nil || r != capBps || w != capBps {
		t.Fatalf("limits read back %d/%d, %v", r, w, err)
	}
	p, err := Probe(ctx, th.Group, th.Device, 32<<20)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: O_DIRECT write %.1f MB/s, read %.1f MB/s at a 25M cap", mech, p.WriteBps/1e6, p.ReadBps/1e6)
	for name, v := range map[string]float64{"write": p.WriteBps, "read": p.ReadBps} {
		if v > capBps*1.10 || v < capBps*0.5 {
			t.Errorf("%s at %.1f MB/s under a cap of %.1f MB/s", name, v/1e6, capBps/1e6)
		}
	}

	sleeper := exec.Command("sleep", "60")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { sleeper.Process.Kill(); sleeper.Wait() }()
	if err := th.Group.Add([]int{sleeper.Process.Pid, 1 << 30 /* no such process */}); err != nil {
		t.Fatal(err)
	}
	if !th.Group.Contains(sleeper.Process.Pid) {
		t.Fatal("process not in the group after Add")
	}
	if err := th.Group.SetLimit(0, 0); err != nil {
		t.Fatal(err)
	}
	if err := th.Close(); err != nil {
		t.Fatal(err)
	}
	if err := th.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if th.Group.h.v2 && th.Group.Contains(sleeper.Process.Pid) {
		t.Error("process still in the removed group")
	}
	if sleeper.ProcessState != nil {
		t.Error("Close ended a process it only had to move")
	}
}

// TestFailuresLeaveNothing injects a failure at each set-up step, and one after set-up, and
// checks that the tear-down leaves no loop device, mount, cgroup or cap behind.
func TestFailuresLeaveNothing(t *testing.T) {
	needThrottle(t)
	for _, step := range []string{"losetup", "mkfs", "mount", "cgroup", "limit", "add"} {
		t.Run(step, func(t *testing.T) {
			work := t.TempDir()
			th, err := Setup(context.Background(), DeviceOptions{WorkDir: work, SizeBytes: 256 << 20, failAt: step})
			var dev string
			var g *Group
			if err == nil {
				// The later steps fail in the caller's hands, which must then Close.
				dev, g = th.Device.DevNum(), th.Group
				if err = th.Group.SetLimit(1<<20, 1<<20); err == nil {
					err = th.Group.Add([]int{os.Getpid()})
				}
				if cerr := th.Close(); cerr != nil {
					t.Errorf("Close after the failure: %v", cerr)
				}
			}
			if !errors.Is(err, errInjected) {
				t.Fatalf("got %v, want the injected failure", err)
			}
			assertClean(t, work, dev, g)
		})
	}
}

// TestBusyMount closes the device while a process still has its working directory on the
// filesystem: the mount must still go (lazily), and the loop device with the last user.
func TestBusyMount(t *testing.T) {
	needThrottle(t)
	work := t.TempDir()
	d, err := NewDevice(context.Background(), DeviceOptions{WorkDir: work, SizeBytes: 256 << 20})
	if err != nil {
		t.Fatal(err)
	}
	holder := exec.Command("sleep", "60")
	holder.Dir = d.Dir
	if err := holder.Start(); err != nil {
		d.Close()
		t.Fatal(err)
	}
	start := time.Now()
	if err := d.Close(); err != nil {
		t.Errorf("Close with a busy mount: %v", err)
	}
	if time.Since(start) < unmountWait {
		t.Errorf("busy mount released after %s, sooner than the %s retry", time.Since(start), unmountWait)
	}
	if isMountPoint(d.Dir) {
		t.Error("busy mount still in the mount table")
	}
	holder.Process.Signal(syscall.SIGKILL)
	holder.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for d.findLoop() != "" && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	assertClean(t, work, "", nil)
}

func TestNotRoot(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("runs as root")
	}
	if _, err := NewDevice(context.Background(), DeviceOptions{}); !errors.Is(err, ErrNotRoot) {
		t.Errorf("NewDevice: %v", err)
	}
	if _, err := Available(); !errors.Is(err, ErrNotRoot) {
		t.Errorf("Available: %v", err)
	}
}

// staleChildEnv makes TestReapStale's child process hold a device until it is killed.
const staleChildEnv = "FAIRBENCH_THROTTLE_STALE_CHILD"

// TestReapStale kills a process that holds a capped device with a "server" on it, the way
// kill -9 or the OOM killer ends a fairbench, and checks that ReapStale then removes the server,
// the cap, the mount, the loop device and the directory, and leaves a live process's device alone.
func TestReapStale(t *testing.T) {
	if work := os.Getenv(staleChildEnv); work != "" {
		holdDevice(work)
		return
	}
	needThrottle(t)
	work := t.TempDir()
	live, err := Setup(context.Background(), DeviceOptions{WorkDir: work, SizeBytes: 256 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()

	child := exec.Command(os.Args[0], "-test.run=^TestReapStale$")
	child.Env = append(os.Environ(), staleChildEnv+"="+work)
	child.Stderr = os.Stderr
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	var dev string
	var server int
	if _, err := fmt.Fscanf(out, "ready %s %d\n", &dev, &server); err != nil {
		child.Process.Kill()
		child.Wait()
		t.Fatalf("child did not get ready: %v", err)
	}
	child.Process.Kill()
	child.Wait()
	if err := syscall.Kill(server, 0); err != nil {
		t.Fatalf("the child's server died with it (%v): nothing stale to reap", err)
	}

	if h, err := findHierarchy(); err == nil && !h.v2 {
		b, _ := os.ReadFile(filepath.Join(h.root, "blkio.throttle.read_bps_device"))
		if parseV1Rule(string(b), dev) != 25<<20 {
			t.Fatalf("the killed child's cap for %s is not there to reap: %q", dev, b)
		}
	}
	reaped, err := ReapStale(work)
	if err != nil {
		t.Fatal(err)
	}
	if len(reaped) != 1 || strings.HasPrefix(live.Device.Dir, reaped[0]) {
		t.Fatalf("reaped %v; want the killed child's device only", reaped)
	}
	t.Logf("reaped %v (device %s, server pid %d)", reaped, dev, server)
	if syscall.Kill(server, 0) == nil && !isZombie(server) {
		t.Error("the dead run's server still runs")
	}
	if l := live.Leftovers(); len(l) != 3 { // the live mount, loop device and directory
		t.Errorf("the live device was touched: %v", l)
	}
	if err := live.Close(); err != nil {
		t.Fatal(err)
	}
	assertClean(t, work, dev, nil)
	if h, err := findHierarchy(); err == nil && h.v2 {
		if m, _ := filepath.Glob(filepath.Join(h.root, fmt.Sprintf("fairbench-%d-*", child.Process.Pid))); len(m) > 0 {
			t.Errorf("the dead run's cgroups are left: %v", m)
		}
	}
}

// holdDevice sets up a capped device with a stand-in server (a process in its own group with
// its working directory on the device, in the cgroup), says so, and waits to be killed.
func holdDevice(work string) {
	fail := func(err error) { fmt.Fprintln(os.Stderr, "child:", err); os.Exit(1) }
	th, err := Setup(context.Background(), DeviceOptions{WorkDir: work, SizeBytes: 256 << 20})
	if err != nil {
		fail(err)
	}
	if err := th.Group.SetLimit(25<<20, 25<<20); err != nil {
		fail(err)
	}
	server := exec.Command("sleep", "600")
	server.Dir = th.Device.Dir
	server.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := server.Start(); err != nil {
		fail(err)
	}
	if err := th.Group.Add([]int{server.Process.Pid}); err != nil {
		fail(err)
	}
	fmt.Printf("ready %s %d\n", th.Device.DevNum(), server.Process.Pid)
	time.Sleep(10 * time.Minute) // killed long before
}

// OwnDevice claims a device only for the one server run directory on it: not for a directory
// elsewhere, not for the mount's root, and not once a second server's directory is beside it.
func TestOwnDevice(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("a loop device needs root")
	}
	for _, tool := range []string{"losetup", "mkfs.ext4"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	work := t.TempDir()
	d, err := NewDevice(context.Background(), DeviceOptions{WorkDir: work, SizeBytes: 256 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := d.Close(); err != nil {
			t.Error(err)
		}
		assertClean(t, work, "", nil)
	}()
	data := filepath.Join(d.Dir, "fairbench-postgres-1", "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d.Dir, probeName), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name, dir string
		second    bool // a second run directory on the device
		want      bool
	}{
		{"the one server's data directory", data, false, true},
		{"the mount's root", d.Dir, false, false},
		{"a directory on another disk", work, false, false},
		{"a second server beside it", data, true, false},
	}
	for _, s := range steps {
		if s.second {
			if err := os.Mkdir(filepath.Join(d.Dir, "fairbench-mariadb-2"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		name, ok := OwnDevice(s.dir)
		if ok != s.want || (ok && "/dev/"+name != d.Path) {
			t.Errorf("%s: OwnDevice(%s) = %q, %v; want %v (%s)", s.name, s.dir, name, ok, s.want, d.Path)
		}
	}
}

// A device directory another local user planted (the temp dir is everyone's) is never reaped: its
// mnt may be a link to any mount point, whose users the reaper would kill.
func TestPlantedDeviceLeftAlone(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	work := t.TempDir()
	victim := exec.Command("sleep", "60")
	victim.Dir = work
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = victim.Process.Kill(); _ = victim.Wait() }()
	cases := map[string]func(base string) error{
		"owned by another user": func(base string) error { return os.Chown(base, 65534, 65534) },
		"writable by others":    func(base string) error { return os.Chmod(base, 0o777) },
		"mnt is a link": func(base string) error {
			return os.Symlink(work, filepath.Join(base, "mnt"))
		},
	}
	for name, plant := range cases {
		t.Run(name, func(t *testing.T) {
			base := filepath.Join(work, devicePrefix+strings.ReplaceAll(name, " ", "-"))
			if err := os.Mkdir(base, 0o700); err != nil {
				t.Fatal(err)
			}
			// An owner that is gone: the planted directory would be reaped if it were trusted.
			if err := os.WriteFile(filepath.Join(base, ownerFile), []byte("1 1\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := plant(base); err != nil {
				t.Fatal(err)
			}
			if isStale(base) {
				t.Errorf("%s: a planted directory is taken for a stale device", name)
			}
			reaped, _ := ReapStale(work)
			if len(reaped) != 0 {
				t.Errorf("%s: reaped %v", name, reaped)
			}
			if _, err := os.Lstat(base); err != nil {
				t.Errorf("%s: %s removed", name, base)
			}
		})
	}
	if err := victim.Process.Signal(syscall.Signal(0)); err != nil {
		t.Error("the reaper killed a process in the linked directory")
	}
}
