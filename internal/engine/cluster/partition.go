package cluster

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/fairbench/fairbench/internal/engine"
)

// Partitioning a node on loopback, where every node shares 127.0.0.1: nftables (the kernel's
// packet filter; iptables is not installed here, nft is, from Debian's nftables package) drops
// in the output hook, which every loopback packet passes once, each packet
//   - to or from one of the node's own ports (SQL, galera's gcomm, IST and SST): its clients and
//     the peers connected to it;
//   - of a TCP connection the node itself opened before the partition (to a peer's gcomm port,
//     from a port the kernel chose), listed from /proc;
//   - from a socket the node opens during the partition: the node is moved into a cgroup v2
//     group of its own, which nft's "socket cgroupv2" matches.
// Packets are dropped, not refused, so connections hang as across a real network split. Each
// partition is one nft table, fairbench_part_PID_NODE, removed by Heal, by Cluster.Stop, and by
// the next fairbench when PID is gone (reapPartitions).

const partTablePrefix = "fairbench_part_"

// partition is a node cut off: its nft table and the cgroup v2 group it was moved into.
type partition struct {
	table   string
	group   string // the cgroup v2 directory the node was moved into; "" when it had its own
	origins map[int]string
}

// cut cuts s off. name names it in the table.
func cut(s *engine.Server, name string) (*partition, error) {
	nft, err := exec.LookPath("nft")
	if err != nil {
		return nil, errors.New("partition-node needs nft (Debian's nftables): run scripts/install-engines.sh")
	}
	reapPartitions()
	pids := s.PIDs()
	if len(pids) == 0 {
		return nil, fmt.Errorf("%s is not running", name)
	}
	p := &partition{table: partTablePrefix + strconv.Itoa(os.Getpid()) + "_" + name, origins: map[int]string{}}
	match, err := p.ownGroup(pids)
	if err != nil {
		return nil, err
	}
	conns, err := connectionsOf(pids)
	if err != nil {
		p.restore()
		return nil, err
	}
	script := p.rules(s.OwnPorts(), conns, match)
	cmd := exec.Command(nft, "-f", "-")
	cmd.Stdin = strings.NewReader(script)
	if out, err := cmd.CombinedOutput(); err != nil {
		p.restore()
		return nil, fmt.Errorf("nft: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return p, nil
}

// rules is the nft script of the partition.
func (p *partition) rules(ports []int, conns [][2]int, groupMatch string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "table inet %s {\n chain out {\n  type filter hook output priority 0; policy accept;\n", p.table)
	var ps []string
	for _, port := range ports {
		ps = append(ps, strconv.Itoa(port))
	}
	set := strings.Join(ps, ", ")
	fmt.Fprintf(&b, "  tcp sport { %s } drop\n  tcp dport { %s } drop\n", set, set)
	if len(conns) > 0 {
		var pairs []string
		for _, c := range conns {
			pairs = append(pairs, fmt.Sprintf("%d . %d", c[0], c[1]), fmt.Sprintf("%d . %d", c[1], c[0]))
		}
		fmt.Fprintf(&b, "  tcp sport . tcp dport { %s } drop\n", strings.Join(pairs, ", "))
	}
	fmt.Fprintf(&b, "  %s drop\n }\n}\n", groupMatch)
	return b.String()
}

// ownGroup returns the nft match of the node's cgroup v2 group, moving the node into a group
// of its own where it shares one (a host with cgroup v1 controllers leaves everything in the
// v2 root).
func (p *partition) ownGroup(pids []int) (string, error) {
	mount, err := cgroup2Mount()
	if err != nil {
		return "", err
	}
	cur, err := cgroup2Path(pids[0])
	if err != nil {
		return "", err
	}
	if cur == "/" || strings.Count(cur, "/") == 0 {
		p.group = filepath.Join(mount, p.table)
		if err := os.Mkdir(p.group, 0o755); err != nil && !os.IsExist(err) {
			return "", fmt.Errorf("cgroup v2 group for the partition: %w", err)
		}
		for _, pid := range pids {
			p.origins[pid] = cur
			if err := os.WriteFile(filepath.Join(p.group, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644); err != nil {
				p.restore()
				return "", fmt.Errorf("moving the node into its partition group: %w", err)
			}
		}
		cur = "/" + p.table
	}
	// nft names the group by its path under /sys/fs/cgroup and its depth in the v2 hierarchy.
	rel, err := filepath.Rel("/sys/fs/cgroup", filepath.Join(mount, cur))
	if err != nil || strings.HasPrefix(rel, "..") {
		return "", fmt.Errorf("cgroup v2 is mounted at %s, outside /sys/fs/cgroup where nft looks", mount)
	}
	return fmt.Sprintf("socket cgroupv2 level %d %q", strings.Count(strings.Trim(cur, "/"), "/")+1, rel), nil
}

// restore moves the node back to its own group and removes the partition's group.
func (p *partition) restore() {
	if p.group == "" {
		return
	}
	mount, _ := cgroup2Mount()
	for pid, origin := range p.origins {
		_ = os.WriteFile(filepath.Join(mount, origin, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644)
	}
	_ = os.Remove(p.group)
}

// heal removes the partition: its table, then its group.
func (p *partition) heal() error {
	var err error
	if out, e := exec.Command("nft", "delete", "table", "inet", p.table).CombinedOutput(); e != nil {
		err = fmt.Errorf("nft delete table %s: %v: %s", p.table, e, strings.TrimSpace(string(out)))
	}
	p.restore()
	return err
}

// cgroup2Mount is where the cgroup v2 hierarchy is mounted (/sys/fs/cgroup, or
// /sys/fs/cgroup/unified beside v1 controllers).
func cgroup2Mount() (string, error) {
	f, err := os.Open("/proc/self/mounts")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fields := strings.Fields(sc.Text()); len(fields) > 2 && fields[2] == "cgroup2" {
			return fields[1], nil
		}
	}
	return "", errors.New("partition-node needs the cgroup v2 hierarchy mounted (mount -t cgroup2 none /sys/fs/cgroup/unified)")
}

// cgroup2Path is pid's group in the v2 hierarchy ("0::/path" in /proc/PID/cgroup).
func cgroup2Path(pid int) (string, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if path, ok := strings.CutPrefix(line, "0::"); ok {
			return path, nil
		}
	}
	return "", fmt.Errorf("process %d has no cgroup v2 group", pid)
}

// connectionsOf lists the TCP connections the processes hold as (local port, remote port) on
// loopback, from their descriptors' socket inodes and /proc/PID/net/tcp{,6}.
func connectionsOf(pids []int) ([][2]int, error) {
	var out [][2]int
	for _, pid := range pids {
		inodes := socketInodes(pid)
		for _, file := range []string{"tcp", "tcp6"} {
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, file))
			if err != nil {
				continue
			}
			for _, line := range strings.Split(string(b), "\n")[1:] {
				f := strings.Fields(line)
				if len(f) < 10 || f[3] == "0A" || !inodes[f[9]] { // 0A: listening
					continue
				}
				out = append(out, [2]int{hexPort(f[1]), hexPort(f[2])})
			}
		}
	}
	return out, nil
}

func socketInodes(pid int) map[string]bool {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, _ := os.ReadDir(dir)
	m := map[string]bool{}
	for _, e := range ents {
		if l, err := os.Readlink(filepath.Join(dir, e.Name())); err == nil && strings.HasPrefix(l, "socket:[") {
			m[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
		}
	}
	return m
}

// hexPort reads the port of /proc/net/tcp's "0100007F:1F90".
func hexPort(addr string) int {
	_, port, _ := strings.Cut(addr, ":")
	n, _ := strconv.ParseInt(port, 16, 32)
	return int(n)
}

// reapPartitions removes the partition tables and groups of fairbench processes that are gone
// (killed before they could heal).
func reapPartitions() {
	out, err := exec.Command("nft", "list", "tables").Output()
	if err != nil {
		return
	}
	mount, _ := cgroup2Mount()
	for _, line := range strings.Split(string(out), "\n") {
		name, ok := strings.CutPrefix(strings.TrimSpace(line), "table inet "+partTablePrefix)
		if !ok {
			continue
		}
		pidText, _, _ := strings.Cut(name, "_")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid == os.Getpid() || syscall.Kill(pid, 0) == nil {
			continue
		}
		_ = exec.Command("nft", "delete", "table", "inet", partTablePrefix+name).Run()
		if mount != "" {
			_ = os.Remove(filepath.Join(mount, partTablePrefix+name))
		}
	}
}
