// Package netsim simulates client hosts on one machine: each is a network namespace joined to
// the root namespace by a veth pair on a bridge, with its own address on a private /24 that is
// routed nowhere else. Clients in a namespace reach the server through a relay on the bridge
// address, which forwards to the server's loopback port and, when asked, delays each direction
// by half the round trip (netem where the kernel has it).
package netsim

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// The private /24 and the names fairbench gives its links and namespaces. One set of hosts
// exists at a time (a lock serialises runs), so the names are fixed, and whatever of them a
// killed run left behind is found and removed by the next one.
const (
	subnet     = "10.213.7"
	bridgeName = "fbbr0"
	nsPrefix   = "fbns"
	vethPrefix = "fbv"
	peerPrefix = "fbp"
	// MaxHosts bounds the namespaces of one run (addresses .10 to .209 of the /24).
	MaxHosts = 200
)

// StateDir holds the lock; a run that holds it owns every name above.
var StateDir = "/run/fairbench/netsim"

// ErrNotRoot is returned by Setup without root.
var ErrNotRoot = errors.New("--network and --clients need root (network namespaces, veth pairs and a bridge): run fairbench as root, or drop the option")

// Hosts is a set of simulated client hosts.
type Hosts struct {
	Names    []string // namespace names, one per host
	Addrs    []string // each host's address
	BridgeIP string   // the root namespace's address on the bridge, where relays listen
	Netem    bool     // the delay is the kernel's netem qdisc rather than the relay's
	lock     *os.File
}

// Setup creates n hosts. spec's delay goes to netem where the kernel has it (Hosts.Netem), its
// bandwidth to tbf on each host's veth. On any error everything made so far is removed.
func Setup(n int, spec Spec) (h *Hosts, err error) {
	if os.Geteuid() != 0 {
		return nil, ErrNotRoot
	}
	if n < 1 || n > MaxHosts {
		return nil, fmt.Errorf("simulated client hosts: %d is not from 1 to %d", n, MaxHosts)
	}
	lock, err := takeLock()
	if err != nil {
		return nil, err
	}
	// Holding the lock, any of our names still present is a killed run's: remove it.
	reap()
	h = &Hosts{BridgeIP: subnet + ".1", lock: lock}
	defer func() {
		if err != nil {
			h.Close()
			h = nil
		}
	}()
	if err := ipCmd("link", "add", bridgeName, "type", "bridge"); err != nil {
		return h, err
	}
	if err := ipCmd("addr", "add", h.BridgeIP+"/24", "dev", bridgeName); err != nil {
		return h, err
	}
	if err := ipCmd("link", "set", bridgeName, "up"); err != nil {
		return h, err
	}
	h.Netem = spec.RTT > 0 && netemWorks()
	for i := range n {
		if err := h.addHost(i, spec); err != nil {
			return h, err
		}
	}
	return h, nil
}

func (h *Hosts) addHost(i int, spec Spec) error {
	ns, veth, peer := fmt.Sprintf("%s%d", nsPrefix, i), fmt.Sprintf("%s%d", vethPrefix, i), fmt.Sprintf("%s%d", peerPrefix, i)
	addr := fmt.Sprintf("%s.%d", subnet, 10+i)
	steps := [][]string{
		{"netns", "add", ns},
		{"link", "add", veth, "type", "veth", "peer", "name", peer},
		{"link", "set", veth, "master", bridgeName},
		{"link", "set", veth, "up"},
		{"link", "set", peer, "netns", ns},
		{"-n", ns, "addr", "add", addr + "/24", "dev", peer},
		{"-n", ns, "link", "set", peer, "up"},
		{"-n", ns, "link", "set", "lo", "up"},
	}
	for _, s := range steps {
		if err := ipCmd(s...); err != nil {
			return err
		}
		if s[0] == "netns" {
			h.Names = append(h.Names, ns)
		}
	}
	h.Addrs = append(h.Addrs, addr)
	return shape(ns, peer, spec, h.Netem)
}

// shape puts the delay (netem) and the bandwidth (tbf) on the host's side of its veth, so they
// apply to what the host sends; netem's delay there is the whole round trip.
func shape(ns, dev string, spec Spec, netem bool) error {
	var args []string
	switch {
	case netem:
		args = []string{"-n", ns, "qdisc", "add", "dev", dev, "root", "netem", "delay", usec(spec.RTT.Microseconds())}
		if spec.BandwidthBits > 0 {
			args = append(args, "rate", fmt.Sprintf("%dbit", spec.BandwidthBits))
		}
	case spec.BandwidthBits > 0:
		// A burst of a millisecond's worth (at least 64 KiB), a queue of 50 ms.
		burst := max(spec.BandwidthBits/8/1000, 64<<10)
		args = []string{"-n", ns, "qdisc", "add", "dev", dev, "root", "tbf", "rate", fmt.Sprintf("%dbit", spec.BandwidthBits),
			"burst", fmt.Sprint(burst), "latency", "50ms"}
	default:
		return nil
	}
	return tcCmd(args...)
}

func usec(us int64) string { return fmt.Sprintf("%dus", us) }

// netemWorks asks the kernel: a throwaway netem qdisc on a throwaway dummy link.
func netemWorks() bool {
	const probe = "fbprobe0"
	if ipCmd("link", "add", probe, "type", "dummy") != nil {
		return false
	}
	defer ipCmd("link", "del", probe)
	return tcCmd("qdisc", "add", "dev", probe, "root", "netem", "delay", "1ms") == nil
}

// Close removes every namespace, veth and the bridge, then releases the lock. Safe to call
// more than once.
func (h *Hosts) Close() error {
	if h == nil || h.lock == nil {
		return nil
	}
	err := reap()
	h.lock.Close()
	h.lock = nil
	return err
}

// Command runs name with args inside host i's namespace (ip netns exec), killed with fairbench
// if fairbench dies first.
func (h *Hosts) Command(i int, name string, args ...string) *exec.Cmd {
	cmd := exec.Command("ip", append([]string{"netns", "exec", h.Names[i], name}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	return cmd
}

func takeLock() (*os.File, error) {
	if err := os.MkdirAll(StateDir, 0o755); err != nil {
		return nil, fmt.Errorf("simulated client hosts: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(StateDir, "lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("simulated client hosts: %w", err)
	}
	// The kernel drops a flock when its holder dies, so a killed run never blocks the next.
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("simulated client hosts: locking %s: %w", f.Name(), err)
	}
	return f, nil
}

// reap removes the namespaces, veths and bridge with fairbench's names. Deleting a namespace
// takes its end of a veth pair, and so the pair, with it.
func reap() error {
	var errs []error
	// Namespaces first: their veths go with them, so the links are listed again after.
	for _, pass := range []bool{true, false} {
		for _, name := range Leftovers() {
			isNS := strings.HasPrefix(name, nsPrefix)
			if isNS != pass {
				continue
			}
			var err error
			if isNS {
				err = ipCmd("netns", "del", name)
			} else {
				err = ipCmd("link", "del", name)
			}
			// ip(8) says a link is already gone (taken down with its peer) only in its message.
			if err != nil && !strings.Contains(err.Error(), "Cannot find device") {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// LeftoversWhenIdle waits until no run holds the hosts, then lists what is left: a run in
// progress (another test, another comparison) is not a leak, what remains after it is.
func LeftoversWhenIdle() ([]string, error) {
	lock, err := takeLock()
	if err != nil {
		return nil, err
	}
	defer lock.Close()
	return Leftovers(), nil
}

// Leftovers lists the namespaces and links with fairbench's names that exist now: none
// outside a run, which is what the tests check.
func Leftovers() []string {
	var out []string
	if list, err := exec.Command("ip", "netns", "list").Output(); err == nil {
		for _, line := range strings.Split(string(list), "\n") {
			if f := strings.Fields(line); len(f) > 0 && strings.HasPrefix(f[0], nsPrefix) {
				out = append(out, f[0])
			}
		}
	}
	if links, err := exec.Command("ip", "-o", "link", "show").Output(); err == nil {
		for _, line := range strings.Split(string(links), "\n") {
			f := strings.Fields(line)
			if len(f) < 2 {
				continue
			}
			name, _, _ := strings.Cut(strings.TrimSuffix(f[1], ":"), "@")
			if name == bridgeName || strings.HasPrefix(name, vethPrefix) {
				out = append(out, name)
			}
		}
	}
	return out
}

func ipCmd(args ...string) error { return run("ip", args...) }
func tcCmd(args ...string) error { return run("tc", args...) }

func run(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
