package runner

import (
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/workload"
)

// client is one simulated user: a connection, the workload's worker on it, and its tally.
type client struct {
	id int
	// times is where the worker of a workload with Traits.StatementLabels records one transaction's statements.
	times  *workload.StatementTimes
	conn   sqldb.Conn
	worker workload.Worker
	tally  *tally
	rng    *rand.Rand // the pacer's draws
	// gate holds a client a ramp has not reached yet; nil lets it start at once.
	gate chan struct{}
	// done is closed when the client's goroutine has returned.
	done chan struct{}
	// batch is true when the client's thread runs under SCHED_BATCH.
	batch bool
	// abandoned is set when the run gave up waiting for the client (stuck in a statement): its
	// connection is then closed under it, and the error that comes back is not the run's failure.
	abandoned atomic.Bool
	// recorder is the worker when it keeps a record of each transaction's latency, else nil.
	recorder workload.LatencyRecorder
	// held is the pooled connection a stage ramp's client holds for its transaction (nil between
	// transactions and outside stage ramps, where conn is the client's own).
	held atomic.Pointer[slot]
}

// clients is what the client goroutines share with the run.
type clients struct {
	list []*client
	pace pacer
	// pool, in a stage ramp, holds the connections the clients share (conn is then nil).
	pool *pool
	// stmtCtx is never cancelled: a run ends between transactions, as sysbench's does, so no
	// transaction is cut off half-way and counted wrong; a stuck client's connection is closed
	// instead (abandon). It also has no Done channel, so pgconn starts no watcher goroutine per
	// statement: a cancellable one cost about 0.5 µs per point select.
	stmtCtx context.Context
	// stop asks clients to finish the transaction in flight and start no other; stopped is
	// closed with it, for waits that block.
	stop      atomic.Bool
	stopped   chan struct{}
	measuring atomic.Bool
	maxTries  int
	fatal     atomic.Pointer[FatalError]
	fatalCh   chan struct{} // closed by the first fatal error
	policy    string        // the threads' scheduling policy (sched.go)
	fellBack  atomic.Bool   // a thread could not get policy
	// reconn reopens lost connections (nil: a lost connection fails the run, as in unit tests
	// that want that); outages times the gaps between commits.
	reconn        *reconnector
	endReconnects context.CancelFunc // ends reconnecting when the run stops
	// gaveUp counts clients whose connection was lost and still not back when the run stopped:
	// the server went away and did not return, so the run is incomplete (ServerGoneError).
	gaveUp  atomic.Int32
	outages *outages
	// lists counts the clients of a fixed list (workload.FixedList) still running theirs;
	// listsDone is closed when the last is done, which ends the window. nil for other workloads.
	lists     atomic.Int32
	listsDone chan struct{}
}

// start runs every client on its own goroutine. Each client is a locked OS thread that spins
// for its arrival (pacer.go) or waits in a raw system call (sqldb's blockingConn) holding its P,
// so there must be a P per client and two for the reporter and the rest, or clients queue for Ps
// behind each other's spins (sqldb raises it too, per connection). It is never lowered.
func (cs *clients) start() {
	if want := len(cs.list) + 2; runtime.GOMAXPROCS(0) < want {
		runtime.GOMAXPROCS(want)
	}
	for _, cl := range cs.list {
		go cs.run(cl)
	}
}

// run is one client's goroutine. It is one OS thread per client, as sysbench has: the
// connection's reads block in the kernel on this thread (see sqldb's blockingConn), and a
// goroutine that the Go scheduler moved between threads after each preemption woke on a thread
// the kernel had no history for, preempting the server more often. Measured: about 10% more
// oltp_read_only TPS on PostgreSQL at the same client CPU. The thread's scheduling policy is set
// once here (sched.go says why). The thread is never unlocked, so it ends with the goroutine and
// its policy never reaches other goroutines.
func (cs *clients) run(cl *client) {
	defer close(cl.done)
	runtime.LockOSThread()
	if got := setThreadScheduling(cs.policy); got != cs.policy {
		cs.fellBack.Store(true)
	} else {
		cl.batch = got == SchedBatch
	}
	if cs.pace.open() {
		preciseTimerSlack()
	}
	if cl.gate != nil {
		select {
		case <-cl.gate:
		case <-cs.stopped:
			return
		}
	}
	cs.loop(cl)
}

// loop runs transactions until the run stops. It allocates nothing and takes only the client's
// own, uncontended lock (in tally.record).
func (cs *clients) loop(cl *client) {
	open := cs.pace.open()
	// Declared once: &n reaches the workload through an interface, so a per-transaction
	// variable would be one heap allocation per transaction.
	var n counts
	for !cs.stop.Load() {
		due, ok := cs.pace.next(cl)
		if !ok {
			return
		}
		began := time.Now()
		if due.IsZero() {
			due = began
		}
		n = counts{}
		cl.times.Reset()
		n.q.Times = cl.times
		err := cs.transaction(cl, &n)
		if cl.abandoned.Load() {
			return
		}
		if err == errStopped {
			return
		}
		if err != nil && errors.Is(err, workload.ErrWorkDone) {
			cs.listDone()
			return
		}
		done := time.Now()
		if err != nil && !sqldb.IsRetryable(err) {
			cs.fail(cl.id, err)
			return
		}
		if !cs.measuring.Load() {
			continue
		}
		if n.txns > 0 {
			cs.outages.commit(done)
		}
		latency := done.Sub(due) - n.q.Paused
		if cl.recorder != nil {
			cl.recorder.RecordLatency(latency)
		}
		if !cl.tally.record(&n, latency, began.Sub(due), open) {
			return
		}
	}
}

// errStopped is a pooled client's wait for a connection ended by the run's stop.
var errStopped = errors.New("stopped")

// transaction runs one transaction on the client's own connection, or on one taken from the
// pool for this transaction only (the wait for it falls inside the latency).
func (cs *clients) transaction(cl *client, n *counts) error {
	if cs.pool == nil {
		return cs.resilient(cl, link{&cl.conn, &cl.worker}, n)
	}
	s := cs.pool.take(cs.stopped)
	if s == nil {
		return errStopped
	}
	cl.held.Store(s)
	err := cs.resilient(cl, link{&s.conn, &s.worker}, n)
	if cl.abandoned.Load() {
		return err
	}
	cl.held.Store(nil)
	cs.pool.give(s)
	return err
}

// resilient runs one transaction on l and, when the connection is lost, reconnects (reconnect.go)
// and runs it again, within maxTries attempts in all. A transaction whose COMMIT got no answer is
// in doubt: counted, with an error, and not run again. When the run ends while the client is
// reconnecting it returns errStopped.
func (cs *clients) resilient(cl *client, l link, n *counts) error {
	for try := 1; ; try++ {
		err := counted(*l.conn, n, func() error { return attempt(cs.stmtCtx, *l.worker, *l.conn, cs.maxTries, n) })
		if err == nil || cs.reconn == nil || !sqldb.IsConnectionLost(err) || cl.abandoned.Load() {
			return err
		}
		_, rerr := cs.reconn.reconnect(l, cl.id, try)
		n.reconnects++
		switch {
		case rerr == errGaveUp:
			cs.gaveUp.Add(1)
			return errStopped
		case rerr != nil:
			return rerr
		case errors.Is(err, workload.ErrCommitInDoubt):
			n.inDoubt++
			n.errors++
			return nil
		case try >= cs.maxTries:
			n.errors++
			return nil
		}
		n.retries++
	}
}

// counted runs send on c and adds the statements c sent meanwhile to n, by class: the failed
// attempts' and the rollbacks after them included, as they reached the server.
func counted(c sqldb.Conn, n *counts, send func() error) error {
	before, ok := sqldb.CountersOf(c)
	err := send()
	if after, _ := sqldb.CountersOf(c); ok {
		n.sent(after.Sub(before))
	}
	return err
}

// listDone counts a client whose fixed list is done; the last one ends the window.
func (cs *clients) listDone() {
	if cs.lists.Add(-1) == 0 {
		close(cs.listsDone)
	}
}

// fail records the first non-retryable error and stops the run.
func (cs *clients) fail(id int, err error) {
	if cs.fatal.CompareAndSwap(nil, &FatalError{Thread: id, Err: err}) {
		close(cs.fatalCh)
	}
	cs.halt()
}

// halt stops the clients; it may be called more than once.
func (cs *clients) halt() {
	if !cs.stop.Swap(true) {
		close(cs.stopped)
		if cs.endReconnects != nil {
			cs.endReconnects()
		}
	}
}

// attempt runs one transaction, retrying transient conflicts up to maxTries attempts in all. After
// any failed attempt it rolls back, since engines differ in what a failed statement leaves open.
func attempt(ctx context.Context, w workload.Worker, c sqldb.Conn, maxTries int, n *counts) error {
	for try := 1; ; try++ {
		n.q.Retry = try > 1
		err := w.Transaction(ctx, &n.q)
		if err == nil {
			n.txns++
			return nil
		}
		if errors.Is(err, workload.ErrWorkDone) {
			return err
		}
		if errors.Is(err, workload.ErrRecordedFailure) {
			if rbErr := c.Exec(ctx, "ROLLBACK"); rbErr != nil {
				return rbErr
			}
			n.errors++
			return nil
		}
		if errors.Is(err, workload.ErrRolledBack) {
			if rbErr := c.Exec(ctx, "ROLLBACK"); rbErr != nil {
				return rbErr
			}
			n.txns++
			n.rollbacks++
			return nil
		}
		if rbErr := c.Exec(ctx, "ROLLBACK"); rbErr != nil && !sqldb.IsRetryable(err) {
			return errors.Join(err, rbErr)
		}
		if !sqldb.IsRetryable(err) {
			return err
		}
		if try >= maxTries {
			// Exhausted: counted as an error, and the run goes on, as with sysbench's ignored errors.
			n.errors++
			return nil
		}
		n.retries++
	}
}
