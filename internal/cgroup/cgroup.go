// Package cgroup puts a server's processes in a control group of their own and reads the
// kernel's accounting of that group: CPU time, memory (anonymous and page cache apart, and the
// peak) and block I/O bytes and operations per device. The kernel counts these for every process
// in the group, including ones forked later and ones under chroot, so a server's figures need no
// process list.
//
// Groups are made beneath the cgroup this process itself runs in, in every hierarchy (cgroup v1
// mounts one per controller, and this process may sit at a different place in each): a server
// never escapes the limits its user's environment set. cgroup v2 is used where its memory and
// io controllers can be handed down to the group; otherwise the v1 cpuacct, memory and blkio
// hierarchies, whichever are mounted.
package cgroup

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Mount is one line of /proc/self/mountinfo.
type Mount struct {
	Root      string // the path inside the filesystem that is mounted (for cgroups: the cgroup shown at Point)
	Point     string
	FSType    string
	SuperOpts string
}

// ParseMountinfo reads proc(5)'s mountinfo: the root is field 4, the mount point field 5, and
// after the "-" separator come the filesystem type, the source and the superblock options.
// Paths escape space, tab, newline and backslash as octal.
func ParseMountinfo(b []byte) []Mount {
	var out []Mount
	for _, line := range bytes.Split(b, []byte("\n")) {
		f := strings.Fields(string(line))
		if len(f) < 7 {
			continue
		}
		sep := -1
		for i := 6; i < len(f); i++ {
			if f[i] == "-" {
				sep = i
				break
			}
		}
		if sep < 0 || sep+1 >= len(f) {
			continue
		}
		m := Mount{Root: unescapeOctal(f[3]), Point: unescapeOctal(f[4]), FSType: f[sep+1]}
		if sep+3 < len(f) {
			m.SuperOpts = f[sep+3]
		}
		out = append(out, m)
	}
	return out
}

func unescapeOctal(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// Mounts reads this process's mount table.
func Mounts() ([]Mount, error) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("reading the mount table: %w", err)
	}
	return ParseMountinfo(b), nil
}

// HasWord says whether w is one of the space-separated words of s.
func HasWord(s, w string) bool {
	for _, f := range strings.Fields(s) {
		if f == w {
			return true
		}
	}
	return false
}

// HasController says whether a v1 mount's options (or a /proc/PID/cgroup controller list) name c.
func HasController(opts, c string) bool {
	return HasWord(strings.ReplaceAll(opts, ",", " "), c)
}

// PathIn reads proc(5)'s /proc/PID/cgroup: "0::/path" is the v2 hierarchy (controller ""), and
// a v1 line lists its controllers in the second field ("7:blkio:/path").
func PathIn(procCgroup, controller string) (string, bool) {
	for _, line := range strings.Split(procCgroup, "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if controller == "" && parts[0] == "0" && parts[1] == "" {
			return parts[2], true
		}
		if controller != "" && HasController(parts[1], controller) {
			return parts[2], true
		}
	}
	return "", false
}

// WriteFile writes one value to a cgroup file in a single write(2), which is what the kernel
// parses; os.WriteFile would also try to truncate, which cgroup files refuse on some kernels.
func WriteFile(path, value string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.Write([]byte(value))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// ownDir is where this process's cgroup of a hierarchy mounted at m appears in the filesystem:
// the mount shows the cgroup m.Root at m.Point (a container sees its own cgroup as "/").
func ownDir(m Mount, selfPath string) (string, error) {
	rel := selfPath
	if m.Root != "/" {
		if selfPath != m.Root && !strings.HasPrefix(selfPath, m.Root+"/") {
			return "", fmt.Errorf("this process's cgroup %s is outside the mounted part %s at %s", selfPath, m.Root, m.Point)
		}
		rel = strings.TrimPrefix(selfPath, m.Root)
	}
	return filepath.Join(m.Point, rel), nil
}

var errNoHierarchy = errors.New("no cgroup hierarchy with the needed controllers is mounted")
