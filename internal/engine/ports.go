package engine

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
)

// Ports come from below the kernel's ephemeral range, so no client socket of any process is ever
// given one as its local port. A port reserved at start and bound only later (a galera node's IST
// listener opens when the node rejoins) was otherwise taken in the meantime by some outgoing
// connection: "bind: Address already in use" in CI, with other packages' tests running beside.
const lowestPort = 10000

// reserved holds, per port handed out and not yet released, an abstract unix socket named after
// it: a lock every fairbench process on this host sees (two test binaries run side by side),
// which the kernel drops when the process ends, leaving no file behind.
var reserved = struct {
	sync.Mutex
	locks map[int]net.Listener
}{locks: map[int]net.Listener{}}

// ReservePort finds a free loopback port and keeps it from every other caller in this process,
// and from every other fairbench process, until ReleasePort: a cluster's own ports (galera's,
// Patroni's, etcd's) come from it too.
func ReservePort() (int, error) {
	lo, hi := portRange()
	for i := 0; i < 200; i++ {
		p := lo + rand.IntN(hi-lo)
		if lock, ok := tryPort(p); ok {
			reserved.Lock()
			reserved.locks[p] = lock
			reserved.Unlock()
			return p, nil
		}
	}
	return 0, fmt.Errorf("find a free port: 200 tries in %d-%d found none free", lo, hi-1)
}

// tryPort takes the cross-process lock on p, then checks that nothing listens on it.
func tryPort(p int) (net.Listener, bool) {
	lock, err := net.Listen("unix", "@fairbench-port-"+strconv.Itoa(p))
	if err != nil {
		return nil, false // another fairbench process holds it
	}
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
	if err != nil {
		lock.Close()
		return nil, false
	}
	l.Close()
	return lock, true
}

// ReleasePort hands a port ReservePort gave back.
func ReleasePort(p int) {
	reserved.Lock()
	lock := reserved.locks[p]
	delete(reserved.locks, p)
	reserved.Unlock()
	if lock != nil {
		lock.Close()
	}
}

// portRange is [lowestPort, the first ephemeral port), or a fixed span under 32768 where the
// kernel's range cannot be read or leaves too little room below it.
func portRange() (lo, hi int) {
	hi = 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil && n-lowestPort >= 2000 {
				hi = n
			}
		}
	}
	return lowestPort, hi
}
