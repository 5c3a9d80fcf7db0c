package runner

import (
	"math"
	"sync"
	"time"

	"github.com/fairbench/fairbench/internal/histogram"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/workload"
)

// counts is what a client adds up: per transaction, per interval and in total.
type counts struct {
	txns, errors, retries, rollbacks int64
	// reconnects are connections reopened after one was lost; inDoubt, transactions whose COMMIT
	// got no answer (also counted in errors).
	reconnects, inDoubt int64
	// reads, writes and other are the statements the client's connection sent, by class
	// (sqldb.Counters): no workload counts its own.
	reads, writes, other int64
	q                    workload.Txn
}

func (c *counts) add(o *counts) {
	c.txns += o.txns
	c.errors += o.errors
	c.retries += o.retries
	c.rollbacks += o.rollbacks
	c.reconnects += o.reconnects
	c.inDoubt += o.inDoubt
	c.reads += o.reads
	c.writes += o.writes
	c.other += o.other
}

func (c *counts) queries() int64 { return c.reads + c.writes + c.other }

// sent adds the statements a connection sent since an earlier reading of its counters.
func (c *counts) sent(d sqldb.Counters) {
	c.reads += d.Reads
	c.writes += d.Writes
	c.other += d.Other()
}

// tally is one client's record of what it measured. The client feeds it after every
// transaction, the reporter takes its interval part once per interval, and the fold reads the
// totals at the end. One lock guards it all: it is contended only once per interval, so it costs
// a few nanoseconds per transaction, far below any transaction's latency, and the fold can close
// the tally of a client that never came back from the server without racing with it.
type tally struct {
	mu sync.Mutex
	// closed is set by the fold: a client still running then (abandoned in a stalled statement)
	// records nothing more.
	closed   bool
	interval counts
	ivHist   *histogram.Histogram
	ivLag    *histogram.Histogram // open loop: this interval's schedule lag, for live metrics

	total     counts
	totalHist *histogram.Histogram
	lagHist   *histogram.Histogram
	// byKind holds per-transaction-type totals for workloads with Traits.TransactionKinds.
	byKind []kindTotals
	// ivKinds is this interval's part of byKind, kept only when live metrics are served: they
	// are the one reader of interval figures per kind, and without them a transaction costs no
	// third histogram record.
	ivKinds []kindTotals
	// stmts are the measured executions of each timed statement (workloads with Traits.StatementLabels).
	stmts []stmtTotals
	// maxPause is the longest on-purpose pause (TPC-C's think times) of one transaction: the end
	// of a run waits that long for a client before it counts it as stuck.
	maxPause time.Duration
	_        [64]byte // keep neighbouring clients' locks off one cache line
}

// stmtTotals is one statement's executions, failures and time in nanoseconds.
type stmtTotals struct{ calls, failed, total, max int64 }

func (s *stmtTotals) add(o stmtTotals) {
	s.calls += o.calls
	s.failed += o.failed
	s.total += o.total
	s.max = max(s.max, o.max)
}

// addTimes adds one transaction's timed statements.
func addTimes(into []stmtTotals, times []workload.StatementTime) {
	for _, st := range times {
		if st.Index < 0 || st.Index >= len(into) {
			continue
		}
		ns := st.Elapsed.Nanoseconds()
		into[st.Index].add(stmtTotals{calls: 1, total: ns, max: ns})
		if st.Failed {
			into[st.Index].failed++
		}
	}
}

type kindTotals struct {
	n    counts
	hist *histogram.Histogram
}

// newTally makes a client's tally for a workload of this shape; live keeps each interval's
// figures per transaction type too.
func newTally(sh shape, live bool) *tally {
	t := &tally{ivHist: histogram.New(), ivLag: histogram.New(), totalHist: histogram.New(), lagHist: histogram.New()}
	t.byKind = newKindTotals(len(sh.kinds))
	if live {
		t.ivKinds = newKindTotals(len(sh.kinds))
	}
	t.stmts = make([]stmtTotals, len(sh.statements))
	return t
}

func newKindTotals(n int) []kindTotals {
	var ks []kindTotals
	for range n {
		ks = append(ks, kindTotals{hist: histogram.New()})
	}
	return ks
}

// add records one transaction of this kind.
func (k *kindTotals) add(n *counts, micros int64) {
	k.n.add(n)
	if n.txns > 0 {
		k.hist.Record(micros)
	}
}

// takeKinds adds ks to into (as long as both are) and empties ks.
func takeKinds(ks, into []kindTotals) {
	for i := range min(len(ks), len(into)) {
		into[i].n.add(&ks[i].n)
		into[i].hist.Merge(ks[i].hist)
		ks[i].n = counts{}
		ks[i].hist.Reset()
	}
}

// record adds one transaction that took latency from its due time, having started lag after
// it (open loop only). It returns false once the tally is closed.
func (t *tally) record(n *counts, latency, lag time.Duration, open bool) bool {
	micros := latency.Microseconds()
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return false
	}
	t.total.add(n)
	t.totalHist.Record(micros)
	if open {
		t.lagHist.Record(lag.Microseconds())
		t.ivLag.Record(lag.Microseconds())
	}
	if k := n.q.Kind; k >= 0 && k < len(t.byKind) {
		t.byKind[k].add(n, micros)
		if k < len(t.ivKinds) {
			t.ivKinds[k].add(n, micros)
		}
	}
	addTimes(t.stmts, n.q.Times.All())
	t.maxPause = max(t.maxPause, n.q.Paused)
	t.interval.add(n)
	t.ivHist.Record(micros)
	t.mu.Unlock()
	return true
}

// takeInterval adds the interval's counts, latencies and lags to sum, merged and lag, its
// figures per transaction type to kinds (live metrics only), and starts the next.
func (t *tally) takeInterval(sum *counts, merged, lag *histogram.Histogram, kinds []kindTotals) {
	t.mu.Lock()
	takeKinds(t.ivKinds, kinds)
	sum.add(&t.interval)
	t.interval = counts{}
	merged.Merge(t.ivHist)
	t.ivHist.Reset()
	lag.Merge(t.ivLag)
	t.ivLag.Reset()
	t.mu.Unlock()
}

// pause is the longest on-purpose pause recorded so far.
func (t *tally) pause() time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.maxPause
}

// close stops the tally taking records; what it holds is final from then on.
func (t *tally) close() {
	t.mu.Lock()
	t.closed = true
	t.mu.Unlock()
}

// intervals turns the clients' interval slots into interval records. Each interval's length is
// read from the clock when its slots are taken, not from the ticker that woke the reporter: a
// reporter starved of CPU runs late, and a stale tick time would divide several seconds of
// transactions by one. Interval ends are contiguous from the measurement's start, so the
// intervals' transactions add up to the totals.
type intervals struct {
	tallies []*tally
	merged  *histogram.Histogram // the last interval's latencies
	lag     *histogram.Histogram // the last part's schedule lags (open loop)
	start   time.Time            // measurement start
	last    time.Time            // end of the last interval
	lastLen time.Duration
	lastSum counts
	list    []result.Interval
	// observers are given each interval, with its raw counts and histograms where one wants them.
	observers observers
	detailed  bool
	// kindNames and kinds: the last part's figures per transaction type, for the detail.
	kindNames []string
	kinds     []kindTotals
}

// IntervalDetail is one interval as the live metrics need it: its record (server figures
// included, once the observers before have seen it), and the counts and histograms behind it. The histograms
// are the runner's own and valid only during the call.
type IntervalDetail struct {
	Interval                      *result.Interval
	Transactions, Errors, Retries int64
	Latency, Lag                  *histogram.Histogram
	// Kinds splits the interval by transaction type, for workloads that have types (TPC-C's
	// new_order, payment...); nil for others.
	Kinds []KindDetail
}

// KindDetail is one transaction type's part of an interval.
type KindDetail struct {
	Kind                          string
	Transactions, Errors, Retries int64
	Latency                       *histogram.Histogram
}

func newIntervals(tallies []*tally, start time.Time, obs []Observer, kinds []string) *intervals {
	s := &intervals{tallies: tallies, merged: histogram.New(), lag: histogram.New(), start: start, last: start,
		observers: obs, detailed: observers(obs).wantDetail()}
	if s.detailed {
		s.kindNames, s.kinds = kinds, newKindTotals(len(kinds))
	}
	return s
}

// resetKinds empties the per-type figures before a part's slots are taken.
func (s *intervals) resetKinds() {
	for i := range s.kinds {
		s.kinds[i].n = counts{}
		s.kinds[i].hist.Reset()
	}
}

// detail is the interval's counts and histograms, nil where no observer wants them.
func (s *intervals) detail(iv *result.Interval, sum counts, lat *histogram.Histogram) *IntervalDetail {
	if !s.detailed {
		return nil
	}
	d := &IntervalDetail{Interval: iv, Transactions: sum.txns, Errors: sum.errors, Retries: sum.retries, Latency: lat, Lag: s.lag}
	for i, name := range s.kindNames {
		k := &s.kinds[i]
		d.Kinds = append(d.Kinds, KindDetail{Kind: name, Transactions: k.n.txns, Errors: k.n.errors, Retries: k.n.retries, Latency: k.hist})
	}
	return d
}

// cut closes the interval that ends now, with active clients running, and returns its counts,
// its length and its record (also kept in list). Each client's slot is taken at its own moment:
// a reporter starved of CPU may take seconds to get through them all, waiting on clients that
// were preempted. The interval ends at the mean of those moments, which makes its count over its
// length the sum of each client's rate over its own span, and keeps the intervals contiguous.
func (s *intervals) cut(active int) (counts, time.Duration, *result.Interval) {
	s.merged.Reset()
	s.lag.Reset()
	s.resetKinds()
	var sum counts
	var offsets time.Duration
	for _, t := range s.tallies {
		t.takeInterval(&sum, s.merged, s.lag, s.kinds)
		offsets += time.Since(s.start)
	}
	return s.close(active, s.start.Add(offsets/time.Duration(max(len(s.tallies), 1))), sum)
}

// close records the interval that ends at end with sum in it.
func (s *intervals) close(active int, end time.Time, sum counts) (counts, time.Duration, *result.Interval) {
	s.lastLen, s.lastSum = end.Sub(s.last), sum
	s.last = end
	s.list = append(s.list, s.record(active))
	iv := &s.list[len(s.list)-1]
	s.observers.interval(iv, s.detail(iv, sum, s.merged))
	return sum, s.lastLen, iv
}

// record is the interval record of the last interval.
func (s *intervals) record(active int) result.Interval {
	sum := &s.lastSum
	iv := result.Interval{T: math.Round(s.last.Sub(s.start).Seconds()*1000) / 1000, Threads: active,
		Errors: sum.errors, Retries: sum.retries, Reconnects: sum.reconnects, P95MS: s.merged.PercentileMS(95), P99MS: s.merged.PercentileMS(99)}
	if s.lag.Count() > 0 {
		iv.LagMeanMS = s.lag.SumMicros() / float64(s.lag.Count()) / 1000
	}
	if sec := s.lastLen.Seconds(); sec > 0 {
		iv.TPS = float64(sum.txns) / sec
		iv.QPS = float64(sum.queries()) / sec
	}
	return iv
}

// cutLast closes the last interval at end, when every client has stopped, and returns what it held that no interval had before,
// for the ramp. A tail shorter than sliver joins the interval before it instead of standing
// alone, where its rate would be noise.
func (s *intervals) cutLast(active int, end time.Time, sliver time.Duration) (counts, *histogram.Histogram) {
	var tail counts
	tailHist := histogram.New()
	s.lag.Reset()
	s.resetKinds()
	for _, t := range s.tallies {
		t.takeInterval(&tail, tailHist, s.lag, s.kinds)
	}
	if len(s.list) == 0 || end.Sub(s.last) >= sliver {
		s.merged.Reset()
		s.merged.Merge(tailHist)
		s.close(active, end, tail)
		return tail, tailHist
	}
	s.merged.Merge(tailHist)
	s.lastSum.add(&tail)
	s.lastLen += end.Sub(s.last)
	s.last = end
	// The runner's figures cover the longer interval; the server's, sampled at its cut, stay.
	prev := &s.list[len(s.list)-1]
	iv := s.record(active)
	prev.T, prev.Threads, prev.TPS, prev.QPS = iv.T, iv.Threads, iv.TPS, iv.QPS
	prev.P95MS, prev.P99MS, prev.Errors, prev.Retries = iv.P95MS, iv.P99MS, iv.Errors, iv.Retries
	prev.LagMeanMS = max(prev.LagMeanMS, iv.LagMeanMS)
	prev.Reconnects = iv.Reconnects
	s.detail(prev, tail, tailHist) // the live totals get the tail too
	return tail, tailHist
}
