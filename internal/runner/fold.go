package runner

import (
	"fmt"
	"time"

	"github.com/fairbench/fairbench/internal/histogram"
	"github.com/fairbench/fairbench/internal/result"
)

// A run must measure at least this much to mean anything: fewer transactions, or less time,
// and its throughput is noise (an interrupt in the warm-up once recorded 149,142 TPS from two
// transactions in 13 µs). Such a result is kept, marked, and never given as a throughput.
const (
	MinTransactions = 20
	MinMeasured     = time.Second
)

// fold adds every client's totals into res; measured is the measured window's wall time.
func fold(res *result.Result, tallies []*tally, sh shape, measured time.Duration) error {
	var total counts
	hist, lag := histogram.New(), histogram.New()
	for _, t := range tallies {
		t.close()
		total.add(&t.total)
		hist.Merge(t.totalHist)
		lag.Merge(t.lagHist)
	}
	secs := measured.Seconds()
	res.DurationS = secs
	res.Transactions = total.txns
	res.Errors = total.errors
	res.Retries = total.retries
	res.Rollbacks = total.rollbacks
	res.Queries = result.Queries{Read: total.reads, Write: total.writes, Other: total.other, Total: total.queries()}
	if secs > 0 {
		res.TPS = float64(total.txns) / secs
		res.QPS = float64(res.Queries.Total) / secs
	}
	res.LatencyMS = hist.Latency()
	if res.Rate > 0 {
		l := lag.Latency()
		res.ScheduleLagMS = &l
		var err error
		if res.LagHistogram, err = lag.Encode(); err != nil {
			return err
		}
	}
	var err error
	if res.ByKind, err = foldKinds(tallies, sh.kinds, secs); err != nil {
		return err
	}
	res.ClientStatements = foldStatements(tallies, sh.statements)
	enc, err := hist.Encode()
	res.Histogram = enc
	return err
}

// foldKinds is the per-transaction-type split of a workload with Traits.TransactionKinds, nil for others.
func foldKinds(tallies []*tally, kinds []string, secs float64) (map[string]*result.KindStats, error) {
	if len(kinds) == 0 {
		return nil, nil
	}
	out := map[string]*result.KindStats{}
	for k, name := range kinds {
		var sum counts
		h := histogram.New()
		for _, t := range tallies {
			sum.add(&t.byKind[k].n)
			h.Merge(t.byKind[k].hist)
		}
		ks := &result.KindStats{Transactions: sum.txns, Errors: sum.errors, Retries: sum.retries, Rollbacks: sum.rollbacks, LatencyMS: h.Latency()}
		if secs > 0 {
			ks.TPS = float64(sum.txns) / secs
		}
		var err error
		if ks.Histogram, err = h.Encode(); err != nil {
			return nil, err
		}
		out[name] = ks
	}
	return out, nil
}

// tooLittle says why a run measured too little to mean anything, or "" when it did not. The
// reason reads after "this run". inWarmup is true when the run stopped before its warm-up was over.
func tooLittle(res *result.Result, measured time.Duration, inWarmup bool) string {
	switch {
	case inWarmup:
		return "stopped during the warm-up"
	case measured < MinMeasured:
		return fmt.Sprintf("measured %.3f s, less than the %.0f s a rate needs", measured.Seconds(), MinMeasured.Seconds())
	case res.Transactions < MinTransactions:
		return fmt.Sprintf("counted %d transactions, fewer than the %d a rate needs", res.Transactions, MinTransactions)
	}
	return ""
}

// foldStatements adds the clients' per-statement figures, in the workload's order; nil for a
// workload that does not time its statements.
func foldStatements(tallies []*tally, labels []string) []result.ClientStatement {
	if len(labels) == 0 {
		return nil
	}
	out := make([]result.ClientStatement, len(labels))
	for i, label := range labels {
		var sum stmtTotals
		for _, t := range tallies {
			if i < len(t.stmts) {
				sum.add(t.stmts[i])
			}
		}
		out[i] = result.ClientStatement{Label: label, Executions: sum.calls, Failed: sum.failed,
			TotalMS: float64(sum.total) / 1e6, MaxMS: float64(sum.max) / 1e6}
		if sum.calls > 0 {
			out[i].MeanMS = out[i].TotalMS / float64(sum.calls)
		}
	}
	return out
}
