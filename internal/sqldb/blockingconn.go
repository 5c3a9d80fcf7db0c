package sqldb

import (
	"context"
	"io"
	"net"
	"os"
	"runtime"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// blockingConn is a TCP connection whose reads and writes are plain blocking system calls.
//
// Why: a benchmark client thread does nothing but send a query and wait for its answer. Through
// Go's network poller every wait parks the goroutine, and waking it costs epoll and futex calls
// in the scheduler: about half again the CPU a C client (sysbench, pgbench) spends per round
// trip. Blocking in read(2), as those clients do, brings fairbench's own CPU per query down to
// theirs, so it leaves the server under test as much of the machine.
//
// The first wait of each read or write is a raw system call: the Go scheduler does not see it,
// so it neither hands the thread's P to another thread nor wakes its monitor thread, which
// measured 20% of the client's CPU per point select. A raw call cannot be preempted, so the socket
// gets a short timeout (rawWait): a wait longer than that returns and continues as an ordinary
// system call, and a garbage collection never waits more than rawWait for a blocked thread.
// Each connection may hold a P while it waits, so Open keeps GOMAXPROCS above the number of
// connections (reserveP).
type blockingConn struct {
	fd         int
	local      net.Addr
	remote     net.Addr
	closedOnce bool
	// rbuf holds what one read(2) got beyond what the driver asked for: drivers read in 4-8 KB
	// pieces, and a 100-row range result (13 KB) would otherwise cost several system calls.
	rbuf       []byte
	rpos, rend int
}

// dialBlocking connects to host:port with a blocking socket. Deadlines are not supported: the
// runner never cancels a statement half-way, and setup code uses the connect timeout only.
func dialBlocking(ctx context.Context, host string, port int, timeout time.Duration) (net.Conn, error) {
	var d net.Dialer
	d.Timeout = timeout
	// Let the standard dialer resolve and connect (it honours ctx and the timeout), then take a
	// blocking duplicate of its socket and close the original.
	c, err := d.DialContext(ctx, "tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return nil, err
	}
	tc := c.(*net.TCPConn)
	_ = tc.SetNoDelay(true)
	f, err := tc.File() // a dup, in blocking mode
	local, remote := tc.LocalAddr(), tc.RemoteAddr()
	tc.Close()
	if err != nil {
		return nil, err
	}
	fd, err := syscall.Dup(int(f.Fd()))
	f.Close()
	if err != nil {
		return nil, err
	}
	syscall.CloseOnExec(fd)
	if err := syscall.SetNonblock(fd, false); err != nil {
		syscall.Close(fd)
		return nil, err
	}
	tv := syscall.NsecToTimeval(rawWait.Nanoseconds())
	for _, opt := range []int{syscall.SO_RCVTIMEO, syscall.SO_SNDTIMEO} {
		if err := syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, opt, &tv); err != nil {
			syscall.Close(fd)
			return nil, err
		}
	}
	reserveP()
	return &blockingConn{fd: fd, local: local, remote: remote, rbuf: make([]byte, 64<<10)}, nil
}

func (c *blockingConn) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	if c.rpos < c.rend {
		n := copy(b, c.rbuf[c.rpos:c.rend])
		c.rpos += n
		return n, nil
	}
	if len(b) >= len(c.rbuf) {
		return c.readSyscall(b)
	}
	n, err := c.readSyscall(c.rbuf)
	if err != nil {
		return 0, err
	}
	c.rpos, c.rend = 0, n
	n = copy(b, c.rbuf[:n])
	c.rpos = n
	return n, nil
}

func (c *blockingConn) readSyscall(b []byte) (int, error) {
	raw := true
	for {
		var n int
		var err error
		if raw {
			n, err = rawIO(syscall.SYS_RECVFROM, c.fd, b)
			raw = false
		} else {
			n, err = ioSyscall(syscall.SYS_RECVFROM, c.fd, b)
		}
		if err == syscall.EINTR || err == syscall.EAGAIN {
			continue
		}
		if err != nil {
			return 0, &net.OpError{Op: "read", Net: "tcp", Source: c.local, Addr: c.remote, Err: os.NewSyscallError("read", err)}
		}
		if n == 0 {
			return 0, io.EOF
		}
		return n, nil
	}
}

func (c *blockingConn) Write(b []byte) (int, error) {
	written := 0
	raw := true
	for written < len(b) {
		var n int
		var err error
		if raw {
			n, err = rawIO(syscall.SYS_SENDTO, c.fd, b[written:])
			raw = false
		} else {
			n, err = ioSyscall(syscall.SYS_SENDTO, c.fd, b[written:])
		}
		if err == syscall.EINTR || err == syscall.EAGAIN {
			continue
		}
		if err != nil {
			return written, &net.OpError{Op: "write", Net: "tcp", Source: c.local, Addr: c.remote, Err: os.NewSyscallError("write", err)}
		}
		written += n
	}
	return written, nil
}

func (c *blockingConn) Close() error {
	if c.closedOnce {
		return nil
	}
	c.closedOnce = true
	openConns.Add(-1)
	// shutdown first so a goroutine blocked in read on this socket returns.
	_ = syscall.Shutdown(c.fd, syscall.SHUT_RDWR)
	return syscall.Close(c.fd)
}

func (c *blockingConn) LocalAddr() net.Addr  { return c.local }
func (c *blockingConn) RemoteAddr() net.Addr { return c.remote }

// Deadlines are accepted and ignored (see dialBlocking); drivers set them only when asked to.
func (c *blockingConn) SetDeadline(t time.Time) error      { return nil }
func (c *blockingConn) SetReadDeadline(t time.Time) error  { return nil }
func (c *blockingConn) SetWriteDeadline(t time.Time) error { return nil }

// rawWait bounds how long a raw (unpreemptible) system call may block; see blockingConn.
const rawWait = 5 * time.Millisecond

// rawIO and ioSyscall use recvfrom and sendto (with no flags and no address) rather than read
// and write: on a socket they do the same, minus the file layer's checks and position lock, as
// libpq's recv and send do.
func rawIO(trap uintptr, fd int, b []byte) (int, error) {
	r, _, e := syscall.RawSyscall6(trap, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), 0, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

// ioSyscall is rawIO through the scheduler, for waits that may be long.
func ioSyscall(trap uintptr, fd int, b []byte) (int, error) {
	r, _, e := syscall.Syscall6(trap, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), 0, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

var openConns atomic.Int32

// reserveP keeps one P per open connection plus two for the runner's reporter and the rest of
// the program, so threads blocked in raw calls never starve the goroutines that must run.
func reserveP() {
	want := int(openConns.Add(1)) + 2
	if runtime.GOMAXPROCS(0) < want {
		runtime.GOMAXPROCS(want)
	}
}

// dialAddr adapts dialBlocking to drivers' dial hooks, which pass "host:port".
func dialAddr(ctx context.Context, addr string) (net.Conn, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return nil, err
	}
	return dialBlocking(ctx, host, port, 10*time.Second)
}
