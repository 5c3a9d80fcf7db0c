package netsim

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Relay listens on the bridge and forwards every connection to the server's loopback port.
// Where the kernel has no netem it also makes the distance: each direction's bytes are held
// for half the round trip after they arrive and then passed on in order, which is what a link
// with that one-way delay does (unlike a sleep per read, it does not add the delay twice when
// several packets are in flight).
type Relay struct {
	ln      net.Listener
	target  string
	oneWay  time.Duration
	wg      sync.WaitGroup
	mu      sync.Mutex
	conns   map[net.Conn]bool
	closing bool
	// early is how much sooner than due the relay wakes, learnt from how late its sleeps
	// end: on a busy machine a timer fires up to a millisecond late, which would otherwise add
	// itself to every one-way delay (ns, shared by all connections).
	early atomic.Int64
}

// waitUntil sleeps until due, on average: each wake-up's lateness corrects how early the next
// sleep ends, so the mean delay is the one asked for even where timers overshoot.
func (r *Relay) waitUntil(due time.Time) {
	early := time.Duration(r.early.Load())
	left := time.Until(due)
	if left <= 0 {
		return // already due (the chunk waited behind others): nothing to learn
	}
	if left > early {
		time.Sleep(left - early)
	}
	late := time.Since(due)
	next := min(max(early+late/16, 0), r.oneWay)
	r.early.Store(int64(next))
}

// NewRelay listens on listenAddr (host:0 picks a port) and forwards to target, delaying each
// direction by oneWay (0: a plain forwarder).
func NewRelay(listenAddr, target string, oneWay time.Duration) (*Relay, error) {
	ln, err := net.Listen("tcp", listenAddr)
	if err != nil {
		return nil, err
	}
	r := &Relay{ln: ln, target: target, oneWay: oneWay, conns: map[net.Conn]bool{}}
	r.wg.Add(1)
	go r.accept()
	return r, nil
}

// Addr is where clients connect.
func (r *Relay) Addr() *net.TCPAddr { return r.ln.Addr().(*net.TCPAddr) }

// Close stops accepting, closes every forwarded connection and waits for them.
func (r *Relay) Close() error {
	r.mu.Lock()
	r.closing = true
	for c := range r.conns {
		c.Close()
	}
	r.mu.Unlock()
	err := r.ln.Close()
	r.wg.Wait()
	return err
}

func (r *Relay) track(c net.Conn) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closing {
		c.Close()
		return false
	}
	r.conns[c] = true
	return true
}

func (r *Relay) untrack(c net.Conn) {
	r.mu.Lock()
	delete(r.conns, c)
	r.mu.Unlock()
	c.Close()
}

func (r *Relay) accept() {
	defer r.wg.Done()
	for {
		client, err := r.ln.Accept()
		if err != nil {
			return
		}
		r.wg.Add(1)
		go r.serve(client)
	}
}

func (r *Relay) serve(client net.Conn) {
	defer r.wg.Done()
	if !r.track(client) {
		return
	}
	defer r.untrack(client)
	server, err := net.Dial("tcp", r.target)
	if err != nil {
		return
	}
	if !r.track(server) {
		return
	}
	defer r.untrack(server)
	for _, c := range []net.Conn{client, server} {
		if tc, ok := c.(*net.TCPConn); ok {
			tc.SetNoDelay(true)
		}
	}
	done := make(chan struct{}, 2)
	go func() { r.pipe(server, client); done <- struct{}{} }()
	go func() { r.pipe(client, server); done <- struct{}{} }()
	<-done // one side closed: end both
}

// chunk is what one read got, and when.
type chunk struct {
	data []byte
	at   time.Time
}

// pipe copies src to dst, each chunk delayed by oneWay from its arrival, order kept.
func (r *Relay) pipe(dst, src net.Conn) {
	if r.oneWay <= 0 {
		io.Copy(dst, src)
		dst.Close()
		return
	}
	queue := make(chan chunk, 4096)
	go func() {
		defer close(queue)
		for {
			buf := make([]byte, 32<<10)
			n, err := src.Read(buf)
			if n > 0 {
				queue <- chunk{buf[:n], time.Now()}
			}
			if err != nil {
				return
			}
		}
	}()
	failed := false
	for c := range queue { // drained to the end, so the reader never blocks on a full queue
		if failed {
			continue
		}
		r.waitUntil(c.at.Add(r.oneWay))
		if _, err := dst.Write(c.data); err != nil {
			failed = true
			src.Close()
		}
	}
	dst.Close()
}
