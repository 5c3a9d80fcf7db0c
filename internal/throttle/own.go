package throttle

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// probeName is the file Probe writes on a device, beside the server's run directory.
const probeName = ".fairbench-probe"

// OwnDevice names the block device ("loop3") that holds dataDir when that device is one a live
// fairbench made (serve --device, compare --device, the bandwidth study) and the server's run
// directory is the only one on it. Then the device's own counters are that server's I/O and
// nobody else's, with everything a cgroup misses: the kernel's background writeback and the
// filesystem journal's commits. ok is false for any other disk, and for a device shared by
// several servers (a cluster's nodes on one device).
func OwnDevice(dataDir string) (name string, ok bool) {
	var st syscall.Stat_t
	if syscall.Stat(dataDir, &st) != nil {
		return "", false
	}
	t, err := os.Readlink(fmt.Sprintf("/sys/dev/block/%d:%d", devMajor(st.Dev), devMinor(st.Dev)))
	if err != nil {
		return "", false
	}
	name = filepath.Base(t)
	b, err := os.ReadFile(filepath.Join("/sys/block", name, "loop", "backing_file"))
	if err != nil {
		return "", false
	}
	file := strings.TrimSuffix(strings.TrimSpace(string(b)), " (deleted)")
	base := filepath.Dir(file)
	if filepath.Base(file) != "disk.img" || !strings.HasPrefix(filepath.Base(base), devicePrefix) {
		return "", false
	}
	owner, err := os.ReadFile(filepath.Join(base, ownerFile))
	if err != nil || !ownerAlive(strings.TrimSpace(string(owner))) {
		return "", false
	}
	return name, onlyRunDir(filepath.Join(base, "mnt"), dataDir, st.Dev)
}

// onlyRunDir says whether dataDir lies in the one server run directory on the filesystem mounted
// at mnt (device dev).
func onlyRunDir(mnt, dataDir string, dev uint64) bool {
	var mst syscall.Stat_t
	if syscall.Stat(mnt, &mst) != nil || mst.Dev != dev {
		return false
	}
	rel, err := filepath.Rel(mnt, dataDir)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return false
	}
	runDir := strings.Split(rel, string(filepath.Separator))[0]
	ents, err := os.ReadDir(mnt)
	if err != nil {
		return false
	}
	for _, e := range ents {
		switch e.Name() {
		case runDir, "lost+found", probeName:
		default:
			return false // another server's run directory, or files that are not this server's
		}
	}
	return true
}
