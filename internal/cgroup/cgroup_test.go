package cgroup

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestPathIn(t *testing.T) {
	proc := "9:name=systemd:/\n7:blkio:/\n4:memory:/process_api/abc\n1:cpu,cpuacct:/x\n0::/user.slice\n"
	tests := []struct{ controller, want string }{
		{"memory", "/process_api/abc"},
		{"blkio", "/"},
		{"cpuacct", "/x"},
		{"cpu", "/x"},
		{"", "/user.slice"},
	}
	for _, tc := range tests {
		got, ok := PathIn(proc, tc.controller)
		if !ok || got != tc.want {
			t.Errorf("PathIn(%q) = %q, %v; want %q", tc.controller, got, ok, tc.want)
		}
	}
	if _, ok := PathIn(proc, "io"); ok {
		t.Error("PathIn found a controller that is not listed")
	}
}

func TestOwnDir(t *testing.T) {
	tests := []struct {
		root, self, want string
		bad              bool
	}{
		{"/", "/process_api/abc", "/sys/fs/cgroup/memory/process_api/abc", false},
		{"/process_api/abc", "/process_api/abc/x", "/sys/fs/cgroup/memory/x", false},
		{"/process_api/abc", "/other", "", true},
	}
	for _, tc := range tests {
		got, err := ownDir(Mount{Root: tc.root, Point: "/sys/fs/cgroup/memory"}, tc.self)
		if (err != nil) != tc.bad || got != tc.want {
			t.Errorf("ownDir(%q, %q) = %q, %v; want %q", tc.root, tc.self, got, err, tc.want)
		}
	}
}

func TestParseIO(t *testing.T) {
	v1 := ParseV1IO("254:0 Read 4096\n254:0 Write 8192\n254:0 Sync 8192\n254:0 Total 12288\n7:1 Write 512\nTotal 12800\n",
		"254:0 Read 1\n254:0 Write 2\n254:0 Total 3\n7:1 Write 1\nTotal 4\n")
	want := map[string]DeviceIO{"254:0": {4096, 8192, 1, 2}, "7:1": {0, 512, 0, 1}}
	if !reflect.DeepEqual(v1, want) {
		t.Errorf("ParseV1IO = %v, want %v", v1, want)
	}
	v2 := ParseV2IO("254:0 rbytes=4096 wbytes=8192 rios=1 wios=2 dbytes=0 dios=0\n7:1 rbytes=0 wbytes=512 rios=0 wios=1 dbytes=0 dios=0\n")
	if !reflect.DeepEqual(v2, want) {
		t.Errorf("ParseV2IO = %v, want %v", v2, want)
	}
}

func TestJoinScript(t *testing.T) {
	got := JoinScript(2)
	want := `echo $$ >&3 && echo $$ >&4 || exit 125; exec 3>&- 4>&-; exec "$@"`
	if got != want {
		t.Errorf("JoinScript(2) = %s, want %s", got, want)
	}
}

func FuzzParseMountinfo(f *testing.F) {
	f.Add("35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n")
	f.Fuzz(func(t *testing.T, s string) { _ = ParseMountinfo([]byte(s)) })
}

// The proof that the group's I/O figures are the kernel's and whole: a child started in the
// group writes a known number of bytes with O_DIRECT, which bypasses the page cache and so
// reaches the device in the writer's own context, and the group must have counted them within 5%.
func TestDirectWritesCounted(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("making a cgroup needs root")
	}
	g, err := New("fairbench-test")
	if err != nil {
		t.Skipf("no cgroup here: %v", err)
	}
	defer func() {
		if err := g.Close(); err != nil {
			t.Error(err)
		}
		if left := g.Leftovers(); len(left) > 0 {
			t.Errorf("left behind: %v", left)
		}
	}()
	if g.Dirs["blkio"] == "" && !g.V2 {
		t.Skip("no blkio hierarchy")
	}
	dir := t.TempDir()
	dev, err := DiskOf(dir)
	if err != nil {
		t.Skipf("temp dir has no block device: %v", err)
	}
	if err := g.CountDevice(dev); err != nil {
		t.Fatal(err)
	}
	before, err := g.Stats()
	if err != nil {
		t.Fatal(err)
	}
	const mib, count = 1 << 20, 48
	files, err := g.ProcsFiles()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/bin/sh", "-c", JoinScript(len(files)), "join",
		"dd", "if=/dev/zero", "of="+filepath.Join(dir, "direct.dat"), "bs=1M", "count=48", "oflag=direct")
	cmd.ExtraFiles = files
	out, err := cmd.CombinedOutput()
	for _, f := range files {
		f.Close()
	}
	if err != nil {
		t.Fatalf("dd in the group: %v: %s", err, out)
	}
	after, err := g.Stats()
	if err != nil {
		t.Fatal(err)
	}
	d := Sub(after, before).IO[dev]
	want := int64(count * mib)
	if diff := d.WriteBytes - want; diff < -want/20 || diff > want/20 {
		t.Errorf("group counted %d bytes written on %s, dd wrote %d (more than 5%% apart)", d.WriteBytes, dev, want)
	}
	if d.WriteOps < count {
		t.Errorf("group counted %d write operations for %d 1 MiB direct writes", d.WriteOps, count)
	}
	if !after.HasCPU || after.CPUTotalNS <= 0 {
		t.Errorf("no CPU time counted for dd: %+v", after)
	}
	if !strings.HasPrefix(g.Name, "fairbench-test-") {
		t.Errorf("group name %q", g.Name)
	}
}

func TestSplitCPU(t *testing.T) {
	tests := []struct{ total, user, sys, wantUser, wantSys int64 }{
		{1000, 30, 10, 750, 250},
		{1000, 0, 0, 0, 0},
		{1000, 0, 20, 0, 1000},
	}
	for _, tc := range tests {
		u, s := SplitCPU(Stats{CPUTotalNS: tc.total, CPUUserNS: tc.user, CPUSystemNS: tc.sys})
		if u != tc.wantUser || s != tc.wantSys {
			t.Errorf("SplitCPU(%d; %d/%d ticks) = %d/%d, want %d/%d", tc.total, tc.user, tc.sys, u, s, tc.wantUser, tc.wantSys)
		}
	}
}

// Orphans finds a group whose maker is gone, and only while it is gone.
func TestOrphans(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("making a cgroup needs root")
	}
	g, err := New("fairbench-orphantest")
	if err != nil {
		t.Skipf("no cgroup here: %v", err)
	}
	defer g.Close()
	self := os.Getpid()
	alive := func(pid int) bool { return true }
	gone := func(pid int) bool { return pid != self }
	for _, d := range Orphans("fairbench-orphantest", alive) {
		t.Errorf("%s listed although its maker runs", d)
	}
	found := Orphans("fairbench-orphantest", gone)
	for _, d := range g.Dirs {
		if !slices.Contains(found, d) {
			t.Errorf("%s not listed once its maker is gone (found %v)", d, found)
		}
	}
}
