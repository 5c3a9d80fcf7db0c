package runner

import (
	"sync/atomic"
	"time"

	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/workload"
)

// A stage ramp (Ramp.Stages) is the published ingest/join study's load model, in three parts
// that fit the runner's own: the ramp's gates add one client per stage (ramp.go), the stage
// pacer below makes each request wait a random delay first, and the clients share a pool of
// connections instead of owning one each.

// stagePacer waits a uniform random delay in [min, max] before each request. The request's
// latency starts after it (due is zero: "now" once the delay is over), so the delay is the
// user's think time, never the server's; the wait for a pooled connection comes after and is
// counted.
type stagePacer struct {
	min, max time.Duration
	stop     *atomic.Bool
}

func (p stagePacer) open() bool { return false }

func (p stagePacer) next(cl *client) (time.Time, bool) {
	d := p.min
	if p.max > p.min {
		d += time.Duration(cl.rng.Int64N(int64(p.max-p.min) + 1))
	}
	if d <= 0 {
		return time.Time{}, !p.stop.Load()
	}
	return time.Time{}, waitUntil(time.Now().Add(d), p.stop)
}

// slot is one pooled connection with the workload's worker made on it (a worker holds the
// connection's prepared statements, so it belongs to the connection, not to the client).
type slot struct {
	conn   sqldb.Conn
	worker workload.Worker
}

// pool is the stage ramp's shared connections: a buffered channel of the free ones, so taking
// one is a channel receive and a client with none waits in line for the next returned.
type pool struct {
	free  chan *slot
	all   []*slot
	inUse atomic.Int64
}

func newPool(slots []*slot) *pool {
	p := &pool{free: make(chan *slot, len(slots)), all: slots}
	for _, s := range slots {
		p.free <- s
	}
	return p
}

// take blocks until a connection is free or the run stops (nil).
func (p *pool) take(stopped <-chan struct{}) *slot {
	select {
	case s := <-p.free:
		p.inUse.Add(1)
		return s
	case <-stopped:
		return nil
	}
}

func (p *pool) give(s *slot) {
	p.inUse.Add(-1)
	p.free <- s
}

// stageConnections is how many connections a stage ramp opens: the pool, but never more than
// there can be clients to use them.
func stageConnections(r *Ramp) int {
	if r.Pool <= 0 {
		return r.Max
	}
	return min(r.Pool, r.Max)
}
