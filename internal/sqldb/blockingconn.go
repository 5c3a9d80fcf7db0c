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
//
// Deadlines and Close work from any goroutine, as net.Conn's do, because that is how both drivers
// give up on a server that stopped answering: pgconn sets a deadline when a statement's context is
// cancelled, go-sql-driver/mysql closes the connection. A raw wait returns every rawWait, so a
// waiting call sees a deadline within rawWait; Close shuts the socket down, which ends a blocked
// recv at once. The descriptor itself is closed only when no call is using it (state counts
// them), so a read in flight never reaches a descriptor number the kernel has given to another
// socket. Checking the state costs two uncontended atomic adds per system call, as Go's own
// net.Conn pays (its fdMutex); the deadline costs an atomic load while none is set.
type blockingConn struct {
	fd     int
	local  net.Addr
	remote net.Addr
	// state is the number of calls using fd, plus stateClosed once Close began and
	// stateReleased once fd was closed.
	state atomic.Int64
	// rdeadline and wdeadline are Unix nanoseconds, 0 for none.
	rdeadline, wdeadline atomic.Int64
	// rbuf holds what one read(2) got beyond what the driver asked for: drivers read in 4-8 KB
	// pieces, and a 100-row range result (13 KB) would otherwise cost several system calls.
	rbuf       []byte
	rpos, rend int
	// wire counts requests and answers for the parity audit (see Counters).
	wire wireCounts
}

// wireCounts are a connection's exchanges with its server. A round trip is an answer read after
// a request was written: a request the server does not answer (COM_STMT_CLOSE, Terminate) is not
// one, and an answer read in several pieces counts once.
// Only the owning goroutine writes them; roundTrips is atomic so that a run can read it at the
// end of its warm-up while the threads go on (one uncontended add per round trip).
type wireCounts struct {
	roundTrips atomic.Int64
	wrote      bool // a request was written and its answer not yet read
}

const (
	stateClosed   = 1 << 40
	stateReleased = 1 << 41
)

// errNoDeadline is what a blocked call returns when its deadline passes; it is a net.Error
// whose Timeout() is true, as drivers expect from a net.Conn.
var errNoDeadline = os.ErrDeadlineExceeded

// dialBlocking connects to host:port with a blocking socket.
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
	bc := &blockingConn{fd: fd, local: local, remote: remote, rbuf: make([]byte, 64<<10)}
	if slot, ok := ctx.Value(dialSlotKey{}).(*dialSlot); ok {
		slot.conn = bc
	}
	return bc, nil
}

func (c *blockingConn) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	if c.wire.wrote {
		c.wire.wrote = false
		c.wire.roundTrips.Add(1)
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
	if !c.acquire() {
		return 0, c.opError("read", net.ErrClosed)
	}
	defer c.release()
	raw := true
	for {
		if expired(&c.rdeadline) {
			return 0, c.opError("read", errNoDeadline)
		}
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
			return 0, c.opError("read", os.NewSyscallError("read", err))
		}
		if n == 0 {
			if c.closing() {
				return 0, c.opError("read", net.ErrClosed)
			}
			return 0, io.EOF
		}
		return n, nil
	}
}

func (c *blockingConn) Write(b []byte) (int, error) {
	if !c.acquire() {
		return 0, c.opError("write", net.ErrClosed)
	}
	defer c.release()
	if len(b) > 0 {
		c.wire.wrote = true
	}
	written := 0
	raw := true
	for written < len(b) {
		if expired(&c.wdeadline) {
			return written, c.opError("write", errNoDeadline)
		}
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
			if c.closing() {
				err = net.ErrClosed
			}
			return written, c.opError("write", os.NewSyscallError("write", err))
		}
		written += n
	}
	return written, nil
}

func (c *blockingConn) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: "tcp", Source: c.local, Addr: c.remote, Err: err}
}

// acquire registers a call that uses fd; false once Close has begun.
func (c *blockingConn) acquire() bool {
	if c.state.Add(1)&stateClosed != 0 {
		c.release()
		return false
	}
	return true
}

// release ends a call; the last one out after Close closes fd.
func (c *blockingConn) release() {
	if c.state.Add(-1) == stateClosed && c.state.CompareAndSwap(stateClosed, stateClosed|stateReleased) {
		_ = syscall.Close(c.fd)
	}
}

func (c *blockingConn) closing() bool { return c.state.Load()&stateClosed != 0 }

// busy reports whether a read or write is in a system call on this connection now.
func (c *blockingConn) busy() bool { return c.state.Load()&(stateClosed-1) != 0 }

// Close may be called from any goroutine, also while another is blocked reading: shutdown ends
// that read at once (it returns net.ErrClosed), and the descriptor is closed when it has left.
func (c *blockingConn) Close() error {
	if !c.acquire() {
		return nil
	}
	if c.state.Or(stateClosed)&stateClosed != 0 {
		c.release()
		return nil
	}
	openConns.Add(-1)
	_ = syscall.Shutdown(c.fd, syscall.SHUT_RDWR)
	c.release()
	return nil
}

func (c *blockingConn) LocalAddr() net.Addr  { return c.local }
func (c *blockingConn) RemoteAddr() net.Addr { return c.remote }

func (c *blockingConn) SetDeadline(t time.Time) error {
	c.SetReadDeadline(t)
	return c.SetWriteDeadline(t)
}

func (c *blockingConn) SetReadDeadline(t time.Time) error {
	c.rdeadline.Store(unixNanos(t))
	return nil
}

func (c *blockingConn) SetWriteDeadline(t time.Time) error {
	c.wdeadline.Store(unixNanos(t))
	return nil
}

// unixNanos is t as a deadline: 0 (none) for the zero time, and at least 1 for any other, so a
// deadline long past still reads as one.
func unixNanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return max(t.UnixNano(), 1)
}

// expired reads the clock only when a deadline is set, so calls without one pay one atomic load.
func expired(deadline *atomic.Int64) bool {
	d := deadline.Load()
	return d != 0 && time.Now().UnixNano() >= d
}

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

// dialSlot receives the connection a driver dials, so sqldb can reach the socket beneath the
// driver (for Close from another goroutine and for the wire counters). It travels in the dial's
// context because go-sql-driver/mysql's dial hook is registered once for all connections.
type dialSlot struct{ conn *blockingConn }

type dialSlotKey struct{}

func withDialSlot(ctx context.Context) (context.Context, *dialSlot) {
	slot := &dialSlot{}
	return context.WithValue(ctx, dialSlotKey{}, slot), slot
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
	// No timeout of its own: the caller's context carries the connect timeout (Open).
	return dialBlocking(ctx, host, port, 0)
}
