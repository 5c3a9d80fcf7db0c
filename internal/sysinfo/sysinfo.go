// Package sysinfo describes the machine a comparison runs on, for environment.json and the
// report: numbers mean little without the CPU, memory, kernel and filesystem behind them.
package sysinfo

import (
	"bufio"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"

	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/version"
)

// Collect reads the machine's facts; dataDir names where the servers keep their data, whose
// filesystem is recorded.
func Collect(dataDir string) *result.Environment {
	env := &result.Environment{
		Cores:       runtime.NumCPU(),
		GoVersion:   runtime.Version(),
		ToolVersion: version.Version,
		Engines:     map[string]string{},
	}
	env.Hostname, _ = os.Hostname()
	env.CPUModel = firstField("/proc/cpuinfo", "model name")
	if kb, err := strconv.ParseInt(strings.Fields(firstField("/proc/meminfo", "MemTotal") + " 0")[0], 10, 64); err == nil {
		env.MemoryBytes = kb * 1024
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		env.Kernel = strings.TrimSpace(string(b))
	}
	env.OS = osRelease()
	env.Filesystem = filesystemOf(dataDir)
	return env
}

// firstField returns the value of the first "key : value" line of a /proc file.
func firstField(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func osRelease() string {
	b, err := os.ReadFile("/etc/os-release")
	if err != nil {
		return runtime.GOOS
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "PRETTY_NAME="); ok {
			return strings.Trim(v, `"`)
		}
	}
	return runtime.GOOS
}

// filesystemOf names the filesystem type and device holding dir, via df (portable across the
// mount-table formats of containers and hosts).
func filesystemOf(dir string) string {
	if dir == "" {
		dir = os.TempDir()
	}
	out, err := exec.Command("df", "--output=fstype,source", dir).Output()
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 2 {
		return ""
	}
	return strings.Join(strings.Fields(lines[1]), " on ")
}
