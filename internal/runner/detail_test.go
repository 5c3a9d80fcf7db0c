package runner

import (
	"context"
	"testing"
	"time"
)

// The live metrics' feed: every measured transaction reaches an Observer that wants the detail exactly once, the
// last partial interval included, and each interval's histogram holds its transactions. In open
// loop the schedule lags come along too.
func TestIntervalDetailsAddUpToTheResult(t *testing.T) {
	for _, rate := range []float64{0, 500} {
		db := &fakeDB{stmt: func(context.Context, *fakeConn) error { spin(100 * time.Microsecond); return nil }}
		cfg := config(2, 1300*time.Millisecond)
		cfg.Rate = rate
		cfg.ReportInterval = 200 * time.Millisecond
		var txns, histCount, lagCount int64
		cfg.Observers = []Observer{Hooks{OnDetail: func(d IntervalDetail) {
			txns += d.Transactions
			histCount += d.Latency.Count()
			lagCount += d.Lag.Count()
		}}}
		res, err := Run(context.Background(), cfg, db.connect, &probe{})
		if err != nil {
			t.Fatal(err)
		}
		if txns != res.Transactions || histCount != res.Transactions {
			t.Errorf("rate %v: details carried %d transactions (%d in histograms), the result %d", rate, txns, histCount, res.Transactions)
		}
		if wantLag := rate > 0; (lagCount == res.Transactions) != wantLag || (!wantLag && lagCount != 0) {
			t.Errorf("rate %v: %d schedule lags for %d transactions", rate, lagCount, res.Transactions)
		}
	}
}

// A workload with transaction types: each interval's detail splits by type, and the parts add up
// to the result's totals per type.
func TestIntervalDetailsByKind(t *testing.T) {
	db := &fakeDB{stmt: func(context.Context, *fakeConn) error { spin(100 * time.Microsecond); return nil }}
	cfg := config(2, 1300*time.Millisecond)
	cfg.ReportInterval = 200 * time.Millisecond
	txns, hist := map[string]int64{}, map[string]int64{}
	cfg.Observers = []Observer{Hooks{OnDetail: func(d IntervalDetail) {
		var sum int64
		for _, k := range d.Kinds {
			txns[k.Kind] += k.Transactions
			hist[k.Kind] += k.Latency.Count()
			sum += k.Transactions
		}
		if sum != d.Transactions {
			t.Errorf("interval at %.1fs: kinds hold %d transactions, the interval %d", d.Interval.T, sum, d.Transactions)
		}
	}}}
	res, err := Run(context.Background(), cfg, db.connect, &typedProbe{})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a", "b"} {
		want := res.ByKind[name].Transactions
		if want == 0 || txns[name] != want || hist[name] != want {
			t.Errorf("kind %s: details carried %d transactions (%d in histograms), the result %d", name, txns[name], hist[name], want)
		}
	}
}
