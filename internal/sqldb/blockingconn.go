package sqldb

import (
	"context"
	"io"
	"net"
	"os"
	"strconv"
	"syscall"
	"time"
)

// blockingConn is a TCP connection whose reads and writes are plain blocking system calls.
//
// Why: a benchmark client thread does nothing but send a query and wait for its answer. Through
// Go's network poller every wait parks the goroutine, and waking it costs epoll and futex calls
// in the scheduler, about half again the CPU a C client (sysbench, pgbench) spends per round trip.
// Blocking in read(2), as those clients do, keeps fairbench's own CPU per query at or below
// theirs, so it leaves the server under test at least as much of the machine.
type blockingConn struct {
	fd         int
	local      net.Addr
	remote     net.Addr
	closedOnce bool
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
	return &blockingConn{fd: fd, local: local, remote: remote}, nil
}

func (c *blockingConn) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	for {
		n, err := syscall.Read(c.fd, b)
		if err == syscall.EINTR {
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
	for written < len(b) {
		n, err := syscall.Write(c.fd, b[written:])
		if err == syscall.EINTR {
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
