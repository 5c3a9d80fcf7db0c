package runner

import (
	"context"
	"errors"
	"io"
	"math"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/randgen"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/workload"
)

func TestReconnectWait(t *testing.T) {
	for n, want := range map[int]time.Duration{1: 50 * time.Millisecond, 2: 100 * time.Millisecond, 3: 200 * time.Millisecond,
		5: 800 * time.Millisecond, 6: time.Second, 60: time.Second} {
		if got := reconnectWait(n); got != want {
			t.Errorf("after %d failed tries: %s, want %s", n, got, want)
		}
	}
}

// ackProbe is a workload of pure logic for the reconnect loop: every transaction gets an id,
// recorded as committed when it succeeds, and as in doubt when the "COMMIT" (every other
// statement) fails with the connection.
type ackProbe struct{ next atomic.Int64 }

func (p *ackProbe) Prepare(context.Context, *workload.Env) error { return nil }
func (p *ackProbe) Cleanup(context.Context, *workload.Env) error { return nil }
func (p *ackProbe) Check(context.Context, *workload.Env) error   { return nil }
func (p *ackProbe) Traits() workload.Traits                      { return workload.Traits{} }
func (p *ackProbe) NewWorker(ctx context.Context, c sqldb.Conn, _ *randgen.Rand, _, _ int) (workload.Worker, error) {
	st, err := c.Prepare(ctx, "SELECT 1")
	return &ackWorker{p: p, st: st}, err
}

type ackWorker struct {
	p    *ackProbe
	st   sqldb.Stmt
	acks workload.Acks
}

func (w *ackWorker) Acks() *workload.Acks { return &w.acks }

func (w *ackWorker) Transaction(ctx context.Context, q *workload.Txn) error {
	id := w.p.next.Add(1)
	if _, err := w.st.Query(ctx); err != nil {
		return err
	}
	if _, err := w.st.Exec(ctx); err != nil { // the COMMIT
		w.acks.InDoubt = append(w.acks.InDoubt, id)
		return workload.CommitInDoubt(err)
	}
	w.acks.Committed = append(w.acks.Committed, id)
	return nil
}

// TestReconnectOnFakeConnection: the server goes away from 0.4 s to 0.8 s of a 1.4 s run
// (statements fail with EOF, connecting is refused). The clients reconnect with backoff, the run
// completes, and the downtime, reconnections, in-doubt commits and every acknowledged id are
// counted.
func TestReconnectOnFakeConnection(t *testing.T) {
	var downFrom, downTo atomic.Int64
	connect := outageDB(&downFrom, &downTo)
	cfg := config(3, 1400*time.Millisecond)
	var acks []*workload.Acks
	cfg.Observers = []Observer{Hooks{
		OnMeasureStart: func() {
			now := time.Now()
			downFrom.Store(now.Add(400 * time.Millisecond).UnixNano())
			downTo.Store(now.Add(800 * time.Millisecond).UnixNano())
		},
		OnAcks: func(a []*workload.Acks) { acks = a },
	}}
	p := &ackProbe{}
	res, err := Run(context.Background(), cfg, connect, p)
	if err != nil || !res.Complete {
		t.Fatalf("the run did not survive the outage: %v", err)
	}
	a := res.Availability
	if a == nil || a.Reconnections < 3 {
		t.Fatalf("availability %+v: want a reconnection per client at least", a)
	}
	if a.DowntimeS < 0.35 || a.DowntimeS > 1.0 || a.LongestOutageS < 0.35 || len(a.Outages) == 0 {
		t.Errorf("downtime %.3f s, longest %.3f s, outages %v: want the 0.4 s outage plus at most the backoff it ended in", a.DowntimeS, a.LongestOutageS, a.Outages)
	}
	var ivDown float64
	var ivReconn int64
	for _, iv := range res.Intervals {
		ivDown += iv.DowntimeS
		ivReconn += iv.Reconnects
	}
	if d := ivDown - a.DowntimeS; d > 1e-6 || d < -1e-6 || ivReconn != a.Reconnections {
		t.Errorf("intervals: downtime %.3f s and %d reconnections, totals %.3f s and %d", ivDown, ivReconn, a.DowntimeS, a.Reconnections)
	}
	committed, inDoubt := workload.Totals(acks)
	// Every transaction the runner counted committed is an acknowledged id, warm-up none here;
	// those ending after the window (not counted) may add a few.
	if committed < res.Transactions || committed > res.Transactions+int64(cfg.Threads) {
		t.Errorf("%d acknowledged ids for %d transactions counted", committed, res.Transactions)
	}
	if inDoubt != a.InDoubt || res.Errors < a.InDoubt {
		t.Errorf("in doubt: %d ids, %d counted, %d errors", inDoubt, a.InDoubt, res.Errors)
	}
	checkNoOutage(t, res)
}

// checkNoOutage: no outage ends before it begins or lies outside the window.
func checkNoOutage(t *testing.T, res *result.Result) {
	t.Helper()
	for _, o := range res.Availability.Outages {
		if o.ToS < o.FromS || o.FromS < 0 || o.ToS > res.DurationS+1e-3 {
			t.Errorf("outage %+v outside the %.3f s window", o, res.DurationS)
		}
	}
}

func TestSpreadOutages(t *testing.T) {
	ivs := []result.Interval{{T: 1}, {T: 2}, {T: 3}}
	result.SpreadOutages(ivs, []result.Outage{{FromS: 0.5, ToS: 1.5}, {FromS: 2.9, ToS: 3}})
	want := []float64{0.5, 0.5, 0.1}
	for i, iv := range ivs {
		if d := iv.DowntimeS - want[i]; d > 1e-9 || d < -1e-9 {
			t.Errorf("interval %d: %.3f s, want %.3f", i, iv.DowntimeS, want[i])
		}
	}
}

// TestServerGoneForGoodOnFakeConnection: the server goes away 0.4 s into a 1.2 s run and never
// comes back. The clients keep trying until the end, and the run is then incomplete, saying the
// server went away and when: a result that divides 0.4 s of work by 1.2 s and calls it complete
// would be a plausible wrong number.
func TestServerGoneForGoodOnFakeConnection(t *testing.T) {
	var downFrom, forever atomic.Int64
	forever.Store(math.MaxInt64)
	connect := outageDB(&downFrom, &forever)
	cfg := config(3, 1200*time.Millisecond)
	cfg.Observers = []Observer{Hooks{OnMeasureStart: func() { downFrom.Store(time.Now().Add(400 * time.Millisecond).UnixNano()) }}}
	res, err := Run(context.Background(), cfg, connect, &ackProbe{})
	var gone *ServerGoneError
	if !errors.As(err, &gone) || gone.Clients != 3 || res == nil || res.Complete {
		t.Fatalf("err=%v res=%+v: want the run incomplete with 3 clients that could not reconnect", err, res)
	}
	if gone.Since < 0.35 || gone.Since > 0.6 || !strings.Contains(res.Error, "did not come back") {
		t.Errorf("since %.3f s, error %q: want the outage from about 0.4 s named", gone.Since, res.Error)
	}
}

// outageDB is a fake server that is away from downFrom to downTo (Unix ns; downFrom 0: not yet
// known): its statements then fail with EOF and connecting is refused.
func outageDB(downFrom, downTo *atomic.Int64) Connector {
	down := func() bool {
		now := time.Now().UnixNano()
		return downFrom.Load() != 0 && now >= downFrom.Load() && now < downTo.Load()
	}
	db := &fakeDB{stmt: func(context.Context, *fakeConn) error {
		spin(100 * time.Microsecond)
		if down() {
			return io.ErrUnexpectedEOF
		}
		return nil
	}}
	return func(ctx context.Context) (sqldb.Conn, error) {
		if down() {
			return nil, &sqldb.ConnectError{Reason: sqldb.Unreachable, Err: syscall.ECONNREFUSED}
		}
		return db.connect(ctx)
	}
}
