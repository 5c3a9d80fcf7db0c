package engine

import (
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/fairbench/fairbench/internal/procfs"
)

// procInfo identifies a process across PID reuse: a PID alone could, by the
// time Stop kills stragglers, belong to some unrelated new process.
type procInfo struct {
	pid, ppid, pgrp int
	state           byte
	start           uint64 // starttime in clock ticks since boot
}

func readProc(pid int) (procInfo, bool) {
	f, ok := procfs.StatFields(pid)
	if !ok || len(f) < 20 {
		return procInfo{}, false
	}
	ppid, _ := strconv.Atoi(f[1])
	pgrp, _ := strconv.Atoi(f[2])
	start, _ := strconv.ParseUint(f[19], 10, 64)
	return procInfo{pid: pid, ppid: ppid, pgrp: pgrp, state: f[0][0], start: start}, true
}

// processTree returns root and all its descendants that are alive.
func processTree(root int) []procInfo {
	if p, ok := readProc(root); !ok || dead(p) {
		return nil
	}
	var out []procInfo
	for _, pid := range procfs.Tree(root) {
		if p, ok := readProc(pid); ok && !dead(p) {
			out = append(out, p)
		}
	}
	return out
}

// dead counts zombies as gone: orphans reparented to a PID 1 that never
// reaps (common in containers) would otherwise look alive forever.
func dead(p procInfo) bool { return p.state == 'Z' || p.state == 'X' }

// stillAlive reports whether the process recorded in p still runs (same PID
// and same start time).
func stillAlive(p procInfo) bool {
	q, ok := readProc(p.pid)
	return ok && q.start == p.start && !dead(q)
}

func killProcs(ps []procInfo, sig syscall.Signal) {
	for _, p := range ps {
		if stillAlive(p) {
			_ = syscall.Kill(p.pid, sig)
		}
	}
}

func anyAlive(ps []procInfo) bool {
	for _, p := range ps {
		if stillAlive(p) {
			return true
		}
	}
	return false
}

// sharedMemoryFiles lists the /dev/shm files the processes have mapped.
func sharedMemoryFiles(ps []procInfo) []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range ps {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(p.pid) + "/maps")
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			i := strings.Index(line, "/dev/shm/")
			if i < 0 || strings.HasSuffix(line, "(deleted)") {
				continue
			}
			f := line[i:]
			if !seen[f] {
				seen[f] = true
				out = append(out, f)
			}
		}
	}
	return out
}

// postmasterOf is the live postmaster of a data directory, from its postmaster.pid, and only if
// that process's command line names the directory: a stale file's PID may be anyone's by now.
func postmasterOf(dataDir string) (procInfo, bool) {
	if dataDir == "" {
		return procInfo{}, false
	}
	b, err := os.ReadFile(dataDir + "/postmaster.pid")
	if err != nil {
		return procInfo{}, false
	}
	first, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil || pid <= 1 {
		return procInfo{}, false
	}
	p, ok := readProc(pid)
	if !ok || dead(p) {
		return procInfo{}, false
	}
	cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil || !strings.Contains(string(cmdline), dataDir) {
		return procInfo{}, false
	}
	return p, true
}
