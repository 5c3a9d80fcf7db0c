package runner

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/workload"
)

// Reconnection, as an application with a connection pool does it: when a statement says the
// connection is gone (sqldb.IsConnectionLost: reset, EOF, refused, the server shutting down, a
// Galera node outside the primary component, a PostgreSQL node that is now a replica), the
// client drops the connection, opens a new one (a host list moves on to the next node) with
// bounded exponential backoff, prepares its statements again, and runs the transaction again
// unless its COMMIT was in flight (then it is in doubt: counted, not repeated). The wait is part
// of that transaction's latency, as the application's user would see it.
const (
	// ReconnectFirstWait is the pause before the second try to reconnect; it doubles after each
	// failed try up to ReconnectMaxWait. The first try is immediate: a node that was killed
	// refuses at once and the host list moves on.
	ReconnectFirstWait = 50 * time.Millisecond
	ReconnectMaxWait   = time.Second
)

// reconnectWait is the pause after the n-th failed try (n from 1).
func reconnectWait(n int) time.Duration {
	d := ReconnectFirstWait
	for i := 1; i < n && d < ReconnectMaxWait; i++ {
		d *= 2
	}
	return min(d, ReconnectMaxWait)
}

// link is one connection and the worker made on it: a client's own, or a pooled slot's.
type link struct {
	conn   *sqldb.Conn
	worker *workload.Worker
}

// reconnector opens replacement connections for the clients. It keeps the workers it replaced,
// whose acknowledged ids still count.
type reconnector struct {
	connect Connector
	wl      workload.Workload
	cfg     *Config
	// ctx ends when the run stops, which ends a client's reconnecting: it gives up then.
	ctx context.Context
	mu  sync.Mutex // guards the swap of a link (abandon reads it) and retired
	// retired are the workers replaced after a lost connection.
	retired []workload.Worker
}

// errGaveUp is a reconnect abandoned because the run ended first.
var errGaveUp = errors.New("the run ended while reconnecting")

// reconnect replaces l's connection and worker. It tries until it succeeds or the run ends
// (errGaveUp); n counts the tries that failed. id is the client's, for the worker's random
// stream (a fresh one: the old worker's draws are not replayed).
func (r *reconnector) reconnect(l link, id, tries int) (failed int, err error) {
	old := *l.conn
	// Closing a dead connection may wait on a goodbye its server never reads (sqldb bounds it).
	go old.Close()
	for n := 1; ; n++ {
		c, err := r.connect(r.ctx)
		if err == nil {
			w, werr := r.wl.NewWorker(r.ctx, c, workerRand(r.cfg, id+tries*r.cfg.Threads+n*7919), id, r.cfg.Threads)
			if werr == nil {
				r.mu.Lock()
				r.retired = append(r.retired, *l.worker)
				*l.conn, *l.worker = c, w
				r.mu.Unlock()
				return n - 1, nil
			}
			c.Close()
			err = werr
		}
		if !sqldb.IsConnectionLost(err) && r.ctx.Err() == nil {
			return n - 1, err // not the server's absence: a real failure (bad schema, credentials)
		}
		t := time.NewTimer(reconnectWait(n))
		select {
		case <-t.C:
		case <-r.ctx.Done():
			t.Stop()
			return n, errGaveUp
		}
	}
}

// swapped reads a link's connection under the lock reconnect swaps it with.
func (r *reconnector) swapped(c *sqldb.Conn) sqldb.Conn {
	if r == nil {
		return *c
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return *c
}

// acks gathers the acknowledged ids of every worker: those in use and those replaced.
func (r *reconnector) acks(current []workload.Worker) []*workload.Acks {
	var out []*workload.Acks
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, w := range append(current, r.retired...) {
		if ar, ok := w.(workload.AckRecorder); ok && w != nil {
			out = append(out, ar.Acks())
		}
	}
	return out
}
