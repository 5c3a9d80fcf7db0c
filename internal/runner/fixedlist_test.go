package runner

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/randgen"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/workload"
)

// listWorkload is a fixed list of "queries" per client (workload.FixedList, as TPC-H's tests):
// query i of a client takes took[i] of the server's time plus pause of the worker's own, and
// fails (recorded by the workload) where fail says.
type listWorkload struct {
	took  []time.Duration
	pause time.Duration
	fail  map[int]bool

	mu       sync.Mutex
	recorded map[int][]time.Duration // per client, the latencies the runner reported
}

func (l *listWorkload) Prepare(context.Context, *workload.Env) error { return nil }
func (l *listWorkload) Cleanup(context.Context, *workload.Env) error { return nil }
func (l *listWorkload) Check(context.Context, *workload.Env) error   { return nil }
func (l *listWorkload) Traits() workload.Traits {
	return workload.Traits{TransactionKinds: []string{"Q1", "Q2", "Q3"}}
}
func (l *listWorkload) Begin(context.Context, workload.RunSettings) (int, error) { return 0, nil }
func (l *listWorkload) End(context.Context, *result.Result) error                { return nil }

func (l *listWorkload) NewWorker(_ context.Context, c sqldb.Conn, _ *randgen.Rand, thread, _ int) (workload.Worker, error) {
	return &listWorker{l: l, c: c, thread: thread}, nil
}

type listWorker struct {
	l      *listWorkload
	c      sqldb.Conn
	thread int
	next   int
}

func (w *listWorker) Transaction(ctx context.Context, q *workload.Txn) error {
	if w.next >= len(w.l.took) {
		return workload.ErrWorkDone
	}
	i := w.next
	w.next++
	q.Kind = i % 3
	spin(w.l.pause)
	q.Paused = w.l.pause
	if err := w.c.Exec(ctx, "SELECT 1"); err != nil {
		return err
	}
	spin(w.l.took[i])
	if w.l.fail[i] {
		return fmt.Errorf("%w: query %d", workload.ErrRecordedFailure, i)
	}
	return nil
}

func (w *listWorker) RecordLatency(d time.Duration) {
	w.l.mu.Lock()
	defer w.l.mu.Unlock()
	if w.l.recorded == nil {
		w.l.recorded = map[int][]time.Duration{}
	}
	w.l.recorded[w.thread] = append(w.l.recorded[w.thread], d)
}

// TestFixedList: the window ends when every client's list is done, not at a duration; each
// query's latency reaches its worker with the pauses left out; a failure the workload records
// is an error that does not stop the run; what has no meaning for a list is refused.
func TestFixedList(t *testing.T) {
	took := []time.Duration{30 * time.Millisecond, 10 * time.Millisecond, 60 * time.Millisecond}
	l := &listWorkload{took: took, pause: 100 * time.Millisecond, fail: map[int]bool{1: true}}
	db := &fakeDB{}
	cfg := config(2, 50*time.Millisecond) // the list is the test's length: a duration does not cut it
	start := time.Now()
	res, err := Run(context.Background(), cfg, db.connect, l)
	wall := time.Since(start)
	if err != nil || !res.Complete {
		t.Fatalf("err=%v complete=%v", err, res != nil && res.Complete)
	}
	if wall > 2*time.Second {
		t.Errorf("the run took %s: it did not end with the lists", wall)
	}
	if res.Transactions != 4 || res.Errors != 2 || res.Threads != 2 || res.WarmupS != 0 {
		t.Errorf("transactions %d errors %d threads %d warm-up %.0f s, want 4, 2, 2 and 0", res.Transactions, res.Errors, res.Threads, res.WarmupS)
	}
	if res.Meaningful != nil {
		t.Errorf("a list's result was judged as a rate: %v %q", *res.Meaningful, res.NotMeaningful)
	}
	for thread := range 2 {
		got := l.recorded[thread]
		if len(got) != len(took) {
			t.Fatalf("client %d: %d latencies reported, want %d", thread, len(got), len(took))
		}
		for i, d := range got {
			// The pause is left out: a spin is at least its length, and a busy machine may
			// stretch it, but not by most of the pause.
			if d < took[i] || d > took[i]+l.pause*9/10 {
				t.Errorf("client %d query %d: latency %s, want %s without the %s pause", thread, i, d, took[i], l.pause)
			}
		}
	}
	if res.DurationS < 0.4 || res.DurationS > 2 {
		t.Errorf("window %.3f s, want the lists' length (about 0.4 s)", res.DurationS)
	}
}

func TestFixedListRefusesWhatHasNoMeaning(t *testing.T) {
	cases := []struct {
		name string
		set  func(*Config)
		want string
	}{
		{"a rate", func(c *Config) { c.Rate = 10 }, "--rate"},
		{"a ramp", func(c *Config) { c.Ramp = &Ramp{Add: 1, Every: time.Second, Max: c.Threads} }, "ramp"},
		{"a shared start", func(c *Config) { c.StartAt = time.Now().Add(time.Minute) }, "--start-at"},
		// Its own untimed pass warms it: a warm-up time is refused, never dropped without a word.
		{"a warm-up", func(c *Config) { c.Warmup = time.Second }, "--warmup"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := config(1, 0)
			c.set(&cfg)
			db := &fakeDB{}
			_, err := Run(context.Background(), cfg, db.connect, &listWorkload{took: []time.Duration{0}})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want one naming %s", err, c.want)
			}
			if db.opened.Load() != 0 {
				t.Errorf("%d connections opened before refusing", db.opened.Load())
			}
		})
	}
}

// TestFixedListLostConnection: a list's client is not reconnected (a new worker would start its
// list again): the run fails, with what it measured.
func TestFixedListLostConnection(t *testing.T) {
	db := &fakeDB{stmt: func(ctx context.Context, c *fakeConn) error { return nil }}
	l := &listWorkload{took: []time.Duration{time.Millisecond, time.Millisecond}}
	connect := func(ctx context.Context) (sqldb.Conn, error) {
		c, err := db.connect(ctx)
		if err == nil {
			c.(*fakeConn).Keep = true // Fail applies to kept calls
			c.(*fakeConn).Fail["SELECT 1"] = io.ErrUnexpectedEOF
		}
		return c, err
	}
	res, err := Run(context.Background(), config(1, 0), connect, l)
	if err == nil || res == nil || res.Complete {
		t.Fatalf("err=%v res=%+v: a lost connection must fail the list's run", err, res)
	}
	if db.opened.Load() != 1 {
		t.Errorf("%d connections opened: a list's client must not reconnect", db.opened.Load())
	}
}
