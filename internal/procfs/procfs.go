// Package procfs reads what fairbench needs of /proc (proc(5)): a process's stat fields and its
// tree of descendants. One reader, so that the command name's parentheses and spaces, and
// processes vanishing between two reads, are handled in one place.
package procfs

import (
	"os"
	"strconv"
	"strings"
)

// StatFields are /proc/PID/stat's fields after the command name: f[0] the state, f[1] the
// parent, f[11] utime, f[19] the start time (proc(5) numbers them from 1 with the pid first, so
// field N is f[N-3]). The name, in parentheses, may hold spaces or parentheses itself.
func StatFields(pid int) ([]string, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return nil, false
	}
	return strings.Fields(s[i+1:]), true
}

// Tree is root and its live descendants, found through each process's parent; root alone where
// /proc cannot be listed.
func Tree(root int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return []int{root}
	}
	children := map[int][]int{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if f, ok := StatFields(pid); ok && len(f) > 1 {
			ppid, _ := strconv.Atoi(f[1])
			children[ppid] = append(children[ppid], pid)
		}
	}
	out := []int{root}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	return out
}
