package runner

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/fairbench/fairbench/internal/randgen"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/workload"
)

// connectClients connects and prepares every client before the clock starts: connection set-up
// is not workload. A cancelled ctx (Ctrl-C) returns at once even while a connection hangs; the
// set-up goroutine closes what it opened when it gets back.
func connectClients(ctx context.Context, cfg *Config, connect Connector, wl workload.Workload, sh shape) (*clients, error) {
	cs := &clients{stopped: make(chan struct{}), fatalCh: make(chan struct{}), maxTries: cfg.MaxTries, policy: clientScheduling()}
	if sh.finite {
		cs.listsDone = make(chan struct{})
		cs.lists.Store(int32(cfg.Threads))
	}
	cs.stmtCtx = context.WithoutCancel(ctx)
	cs.outages = newOutages(cfg)
	if !cfg.NoReconnect {
		rctx, cancel := context.WithCancel(ctx)
		cs.reconn = &reconnector{connect: connect, wl: wl, cfg: cfg, ctx: rctx}
		cs.endReconnects = cancel
	}
	type outcome struct {
		list []*client
		pool *pool
		err  error
	}
	got := make(chan outcome, 1)
	go func() {
		if r := cfg.Ramp; r != nil && r.Stages {
			p, err := openPool(ctx, cfg, connect, wl, stageConnections(r))
			got <- outcome{poolClients(cfg, sh), p, err}
			return
		}
		list, err := openClients(ctx, cfg, connect, wl, sh)
		got <- outcome{list, nil, err}
	}()
	select {
	case o := <-got:
		if o.err != nil {
			closeConns(o.list, o.pool)
			return nil, o.err
		}
		cs.list, cs.pool = o.list, o.pool
		return cs, nil
	case <-ctx.Done():
		go func() { o := <-got; closeConns(o.list, o.pool) }()
		return nil, fmt.Errorf("%w while connecting: %w", ErrInterrupted, ctx.Err())
	}
}

// openClients opens one connection per client and makes its worker; on error it returns the
// clients opened so far, for closing.
func openClients(ctx context.Context, cfg *Config, connect Connector, wl workload.Workload, sh shape) ([]*client, error) {
	list := make([]*client, 0, cfg.Threads)
	for i := range cfg.Threads {
		c, err := connect(ctx)
		if err != nil {
			return list, err
		}
		cl := newClient(cfg, i, sh)
		cl.conn = c
		list = append(list, cl)
		if cl.worker, err = newWorker(ctx, wl, c, cfg, i, cfg.Threads); err != nil {
			return list, err
		}
		cl.recorder, _ = cl.worker.(workload.LatencyRecorder)
	}
	return list, nil
}

// WorkerSetupLimit bounds one client's set-up (its prepared statements, its session settings):
// a server that froze just after accepting the connection must not hold the run before it
// starts, where no stall rule watches yet.
const WorkerSetupLimit = 30 * time.Second

// newWorker makes client i's worker within WorkerSetupLimit, naming a server that did not answer.
func newWorker(ctx context.Context, wl workload.Workload, c sqldb.Conn, cfg *Config, i, n int) (workload.Worker, error) {
	wctx, cancel := context.WithTimeout(ctx, WorkerSetupLimit)
	defer cancel()
	w, err := wl.NewWorker(wctx, c, workerRand(cfg, i), i, n)
	if err != nil && wctx.Err() == context.DeadlineExceeded && ctx.Err() == nil {
		return w, fmt.Errorf("client %d's set-up (its prepared statements) got no answer from the server within %s: it froze or is overloaded: %w", i+1, WorkerSetupLimit, err)
	}
	return w, err
}

func workerRand(cfg *Config, i int) *randgen.Rand {
	return cfg.Rand.New(cfg.Seed + uint64(i)*0x9e3779b97f4a7c15)
}

// openPool opens a stage ramp's n shared connections, each with its worker; on error the pool
// holds those opened so far, for closing.
func openPool(ctx context.Context, cfg *Config, connect Connector, wl workload.Workload, n int) (*pool, error) {
	slots := make([]*slot, 0, n)
	for i := range n {
		c, err := connect(ctx)
		if err != nil {
			return newPool(slots), err
		}
		s := &slot{conn: c}
		slots = append(slots, s)
		if s.worker, err = newWorker(ctx, wl, c, cfg, i, n); err != nil {
			return newPool(slots), err
		}
	}
	return newPool(slots), nil
}

// poolClients makes a stage ramp's clients: no connection of their own, kinds counted as usual.
func poolClients(cfg *Config, sh shape) []*client {
	list := make([]*client, cfg.Threads)
	for i := range list {
		list[i] = newClient(cfg, i, sh)
	}
	return list
}

// holdAtGates makes the clients from the first inactive one on wait at their gates until a ramp
// lets them in: connected and prepared, so joining costs nothing.
func holdAtGates(list []*client, active int) {
	for _, cl := range list[active:] {
		cl.gate = make(chan struct{})
	}
}

// closeConns closes the connections of the clients that were not abandoned (an abandoned
// client's connection was closed when it was given up), and the pool's that no abandoned client
// held.
func closeConns(list []*client, p *pool) {
	held := map[*slot]bool{}
	for _, cl := range list {
		if cl.abandoned.Load() {
			held[cl.held.Load()] = true
		} else if cl.conn != nil {
			cl.conn.Close()
		}
	}
	if p == nil {
		return
	}
	for _, s := range p.all {
		if !held[s] {
			s.conn.Close()
		}
	}
}

// abandon gives up on clients stuck in a statement after the run's end: their connections are
// closed, which (sqldb's Conn.Close shuts the socket down) returns a read blocked on it. Closing
// happens on its own goroutine, since a driver's polite goodbye may itself block on a frozen
// server.
func (cs *clients) abandon(stuck []*client) {
	if len(stuck) == 0 {
		return
	}
	for _, cl := range stuck {
		cl.abandoned.Store(true)
		c := cs.reconn.swapped(&cl.conn)
		if s := cl.held.Load(); s != nil {
			c = cs.reconn.swapped(&s.conn)
		}
		if c != nil {
			go func(c sqldb.Conn) { c.Close() }(c)
		}
	}
}

// workers lists the workers in use at the end: the clients' own, or the pool's.
func (cs *clients) workers() []workload.Worker {
	// An abandoned client may still be inside its worker: its ids are left out, uncounted.
	var out []workload.Worker
	held := map[*slot]bool{}
	for _, cl := range cs.list {
		if cl.abandoned.Load() {
			held[cl.held.Load()] = true
		} else if cl.worker != nil {
			out = append(out, cl.worker)
		}
	}
	if cs.pool != nil {
		for _, s := range cs.pool.all {
			if !held[s] {
				out = append(out, s.worker)
			}
		}
	}
	return out
}

// shape is what the clients' tallies keep apart: the workload's transaction types (Traits.TransactionKinds) and
// its timed statements (Traits.StatementLabels).
type shape struct {
	kinds, statements []string
	// finite: each client runs a fixed list and stops (workload.FixedList).
	finite bool
}

func shapeOf(wl workload.Workload) shape {
	t := wl.Traits()
	_, finite := wl.(workload.FixedList)
	return shape{kinds: t.TransactionKinds, statements: t.StatementLabels, finite: finite}
}

// newClient is client i, without its connection, with a tally of the workload's shape and, for a
// workload that times its statements, the room its worker records them in.
func newClient(cfg *Config, i int, sh shape) *client {
	cl := &client{id: i, tally: newTally(sh, observers(cfg.Observers).wantDetail()), done: make(chan struct{}),
		rng: rand.New(rand.NewPCG(cfg.Seed, uint64(i)+1))}
	if len(sh.statements) > 0 {
		cl.times = &workload.StatementTimes{}
	}
	return cl
}
