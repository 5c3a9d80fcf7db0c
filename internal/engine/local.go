package engine

import (
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/fairbench/fairbench/internal/cgroup"
)

// A server given by DSN that listens on this machine (started by systemd, pg_ctl or by hand) is
// measured here as a throwaway server is: fairbench finds the process that owns the listening
// socket (/proc/net/tcp* gives the socket's inode, /proc/PID/fd the process holding it), then
// measures it from the kernel's accounting of its own cgroup where it has one (a systemd
// service's), else by summing over its process tree in /proc. Only a server on another host is
// "remote".

// FindListening finds the server process listening on host:port on this machine. ok is false for
// a host that is not this machine's, or when no process of this machine's network namespace
// listens there (or it cannot be seen: not root).
func FindListening(host string, port int) (_ *Local, ok bool) {
	ips, local := localIPs(host)
	if !local {
		return nil, false
	}
	inodes := listeningInodes(port, ips)
	if len(inodes) == 0 {
		return nil, false
	}
	root, ok := socketOwner(inodes)
	if !ok {
		return nil, false
	}
	top, _ := readProc(root)
	l := &Local{Found: fmt.Sprintf("pid %d, listening on port %d", root, port), PID: root}
	l.PIDs = func() []int {
		// The server's tree while its first process lives; nothing once a new one took its PID.
		if p, ok := readProc(root); !ok || p.start != top.start {
			return nil
		}
		return pidsOf(processTree(root))
	}
	if g, ok := ownGroup(root, l.PIDs()); ok {
		l.Group = g
		l.Found += ", in cgroup " + g.Name
	}
	return l, true
}

// localIPs resolves host and says whether it is this machine: a loopback address, localhost, or
// an address of one of its interfaces.
func localIPs(host string) ([]net.IP, bool) {
	var ips []net.IP
	if ip := net.ParseIP(host); ip != nil {
		ips = []net.IP{ip}
	} else if host == "localhost" {
		ips = []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
	} else {
		return nil, false
	}
	addrs, _ := net.InterfaceAddrs()
	for _, ip := range ips {
		if ip.IsLoopback() {
			return ips, true
		}
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
				return ips, true
			}
		}
	}
	return nil, false
}

// listeningInodes are the inodes of the TCP sockets listening on port at one of ips or at the
// unspecified address, from /proc/net/tcp and tcp6 (proc(5)).
func listeningInodes(port int, ips []net.IP) map[string]bool {
	out := map[string]bool{}
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			fields := strings.Fields(line)
			if len(fields) < 10 || fields[3] != "0A" { // 0A: LISTEN
				continue
			}
			ip, p, ok := parseProcAddr(fields[1])
			if ok && p == port && (ip.IsUnspecified() || slices.ContainsFunc(ips, ip.Equal)) {
				out[fields[9]] = true
			}
		}
	}
	return out
}

// parseProcAddr reads /proc/net/tcp's "0100007F:1538": the address in the kernel's byte order,
// 32 bits at a time, and the port in hex.
func parseProcAddr(s string) (net.IP, int, bool) {
	addrHex, portHex, ok := strings.Cut(s, ":")
	raw, err := hex.DecodeString(addrHex)
	port, perr := strconv.ParseUint(portHex, 16, 16)
	if !ok || err != nil || perr != nil || (len(raw) != 4 && len(raw) != 16) {
		return nil, 0, false
	}
	ip := make(net.IP, len(raw))
	for i := 0; i < len(raw); i += 4 {
		ip[i], ip[i+1], ip[i+2], ip[i+3] = raw[i+3], raw[i+2], raw[i+1], raw[i]
	}
	return ip, int(port), true
}

// socketOwner is the process holding one of the sockets: of several (children that inherited
// it), the one whose parent does not hold it too, the server's first process.
func socketOwner(inodes map[string]bool) (int, bool) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0, false
	}
	holders := map[int]bool{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if holdsSocket(pid, inodes) {
			holders[pid] = true
		}
	}
	for pid := range holders {
		if p, ok := readProc(pid); ok && !holders[p.ppid] {
			return pid, true
		}
	}
	return 0, false
}

func holdsSocket(pid int, inodes map[string]bool) bool {
	dir := filepath.Join("/proc", strconv.Itoa(pid), "fd")
	fds, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, fd := range fds {
		link, err := os.Readlink(filepath.Join(dir, fd.Name()))
		if err == nil && strings.HasPrefix(link, "socket:[") && inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] {
			return true
		}
	}
	return false
}

// ownGroup is the cgroup of the server's first process when it is the server's alone (every
// process in it is of the server's tree, as in a systemd service's) and gives every figure
// (CPU, memory and block I/O). A group shared with other processes (a login session's, the
// machine's root) would count their work as the server's.
func ownGroup(root int, tree []int) (*cgroup.Group, bool) {
	g, ok := cgroup.OfProcess(root)
	if !ok || (!g.V2 && len(g.Dirs) < 3) {
		return nil, false
	}
	for _, pid := range g.Procs() {
		if !slices.Contains(tree, pid) {
			return nil, false
		}
	}
	return g, true
}

func pidsOf(ps []procInfo) []int {
	out := make([]int, len(ps))
	for i, p := range ps {
		out[i] = p.pid
	}
	return out
}

// HostPath is a path as the process pid sees it (a server in a chroot or a mount namespace of its
// own), as this process reaches it: through /proc/PID/root.
func HostPath(pid int, path string) string {
	return filepath.Join("/proc", strconv.Itoa(pid), "root", path)
}
