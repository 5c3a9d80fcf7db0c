package runner

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// TestStageRampOnFakeConnection checks the stage ramp's three parts on the fake connection: the
// pool, the delay before each request, and the stepping to max.
func TestStageRampOnFakeConnection(t *testing.T) {
	var inFlight, most atomic.Int64
	// countInFlight is a statement that notes how many connections are inside one at once.
	countInFlight := func(context.Context, *fakeConn) error {
		n := inFlight.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		spin(300 * time.Microsecond)
		inFlight.Add(-1)
		return nil
	}
	cases := []struct {
		name  string
		ramp  Ramp
		stmt  func(context.Context, *fakeConn) error
		check func(t *testing.T, r resultView, db *fakeDB)
	}{
		{name: "pool: never more connections in use than the pool",
			ramp: Ramp{Add: 1, Every: 200 * time.Millisecond, Max: 8, Stages: true, Pool: 3},
			stmt: countInFlight,
			check: func(t *testing.T, r resultView, db *fakeDB) {
				if db.opened.Load() != 3 || most.Load() > 3 || most.Load() < 2 {
					t.Errorf("opened %d connections, %d in use at once: want 3 opened, 2-3 in use", db.opened.Load(), most.Load())
				}
				for _, iv := range r.Intervals {
					if iv.ConnsInUse > 3 {
						t.Errorf("interval at %.1f s: %d connections in use", iv.T, iv.ConnsInUse)
					}
				}
				if r.Ramp.Pool != 3 || !r.Ramp.Stages {
					t.Errorf("ramp record %+v", r.Ramp)
				}
			}},
		{name: "delay: waited before each request, not counted as latency",
			ramp: Ramp{Add: 2, Every: 1100 * time.Millisecond, Max: 2, Stages: true, DelayMin: 20 * time.Millisecond, DelayMax: 20 * time.Millisecond},
			check: func(t *testing.T, r resultView, _ *fakeDB) {
				// Two clients, each a request every 20 ms: at most 100 a second.
				if r.TPS > 105 || r.TPS < 30 {
					t.Errorf("%.0f TPS from 2 clients waiting 20 ms each: the delay was not waited", r.TPS)
				}
				if r.LatencyMS.P99 > 10 {
					t.Errorf("p99 %.1f ms: the 20 ms delay was counted as latency", r.LatencyMS.P99)
				}
				if r.Ramp.DelayMinMS != 20 || r.Ramp.DelayMaxMS != 20 {
					t.Errorf("ramp record %+v", r.Ramp)
				}
			}},
		{name: "stepping: one client per stage up to max, whatever the throughput does",
			ramp: Ramp{Add: 1, Every: 250 * time.Millisecond, Max: 5, Stages: true, Pool: 1},
			check: func(t *testing.T, r resultView, _ *fakeDB) {
				st := r.Ramp.Steps
				if len(st) != 5 {
					t.Fatalf("steps %+v: want one per client up to 5", st)
				}
				for i, s := range st {
					if s.Threads != i+1 {
						t.Errorf("step %d ran %d clients", i, s.Threads)
					}
				}
				if r.Ramp.StoppedBecause != "max threads" || r.Ramp.SaturationThreads < 1 || r.Ramp.SaturationThreads > 5 {
					t.Errorf("stopped because %q, saturation at %d", r.Ramp.StoppedBecause, r.Ramp.SaturationThreads)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := config(c.ramp.Max, 10*time.Second)
			ramp := c.ramp
			cfg.Ramp = &ramp
			db := &fakeDB{stmt: c.stmt}
			res, err := Run(context.Background(), cfg, db.connect, &probe{})
			if err != nil || res == nil || res.Ramp == nil {
				t.Fatalf("err=%v res=%v", err, res)
			}
			if db.closed.Load() != db.opened.Load() {
				t.Errorf("closed %d of %d connections", db.closed.Load(), db.opened.Load())
			}
			c.check(t, resultView{res}, db)
		})
	}
}

// A stage that finds no free connection waits for one, and that wait is latency: one connection
// shared by four clients whose statements take 5 ms each.
func TestStagePoolWaitIsLatency(t *testing.T) {
	cfg := config(4, 600*time.Millisecond)
	cfg.Ramp = &Ramp{Add: 4, Every: time.Second, Max: 4, Stages: true, Pool: 1}
	db := &fakeDB{stmt: func(context.Context, *fakeConn) error { time.Sleep(5 * time.Millisecond); return nil }}
	res, err := Run(context.Background(), cfg, db.connect, &probe{})
	if err != nil {
		t.Fatal(err)
	}
	if res.LatencyMS.P50 < 8 {
		t.Errorf("p50 %.1f ms with 4 clients on one 5 ms connection: the wait for it was not counted", res.LatencyMS.P50)
	}
}
