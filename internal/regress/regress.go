// Package regress judges whether one set of results is faster or slower than another, with a
// statistical test rather than a single number: `fairbench diff A B`.
//
// Method. For each engine and workload present on both sides, the samples are the repeats of
// that step when each side has at least MinRepeats of them (independent runs, the better unit),
// otherwise the measured intervals of the runs (one throughput or p99 value per
// --report-interval). The two samples are compared with the Mann-Whitney U test (two-sided,
// alpha 0.05) as benchstat does, through golang.org/x/perf/benchmath, which makes no assumption
// about the distribution. A change is called "faster" or "slower" only when it is both
// significant (p < alpha) and at least MinChange in size: intervals of one run are correlated,
// so with many of them the test alone would call a 1% wobble significant.
//
// What is judged: throughput for closed-loop runs; for open-loop runs (a fixed --rate) the
// throughput is set by the rate, so p99 latency decides; for capacity searches (compare --slo,
// fairbench capacity) the capacity each search found, one sample per search.
package regress

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/perf/benchmath"

	"github.com/fairbench/fairbench/internal/histogram"
	"github.com/fairbench/fairbench/internal/interval"
	"github.com/fairbench/fairbench/internal/result"
)

// MinRepeats is how many repeats per side make repeats, not intervals, the samples. Four is the
// fewest with which the test can reach p < 0.05 at all (3+3 samples give at least p = 0.1, so
// `--repeat 3` would always read "no significant change"); with fewer, the repeats' intervals
// pooled are the samples.
const MinRepeats = 4

// Verdicts.
const (
	Faster        = "faster"
	Slower        = "slower"
	NoChange      = "no significant change"
	NotComparable = "not comparable"
)

// Options tune the judgement.
type Options struct {
	Alpha     float64 // significance level; 0 means 0.05
	MinChange float64 // smallest relative change called faster/slower; 0 means DefaultMinChange
}

// DefaultMinChange is the smallest change in the judged figure that counts, as a fraction.
const DefaultMinChange = 0.02

// Row is one engine and workload step judged across the two sides.
type Row struct {
	Key     Key
	Metric  string // "tps" or "p99_ms": the figure that was judged
	Unit    string // "repeats" or "intervals": what the samples were
	A, B    float64
	Change  float64 // (B - A) / A
	P       float64
	N1, N2  int
	Verdict string
	Why     string // for not comparable, or a warning from the test
	// P99 is p99 latency tested on the same samples when throughput was judged (closed loop); it
	// informs and does not change the verdict or the --fail-if gate.
	P99 *Judgement
	// Whole-run figures beside the judged one, from the merged histograms.
	TPSA, TPSB float64
	LatA, LatB result.Latency
	// Busy says which runs shared a busy machine (others' CPU above machineload's threshold),
	// e.g. "3 of 8 runs in B"; "" when none did. Such a verdict is weak evidence either way.
	Busy string
	// PlansChanged are the read statements ("search #1") whose plan differs between the sides,
	// where both recorded plans (workload files, answers[].plan): beside a timing change, the
	// first place to look.
	PlansChanged []string
}

// Key identifies the same step on both sides. The engine's version is left out on purpose, so an
// upgrade can be diffed.
type Key struct {
	Engine, Workload, Label string
	Threads                 int
	Rate                    float64
	// SLO is a capacity search's objective: its searches pair by it, whatever rates they tried.
	SLO string
}

func (k Key) String() string {
	s := k.Engine + " " + k.Workload
	if k.Label != "" {
		s += " " + k.Label
	} else if k.Threads > 0 {
		s += fmt.Sprintf(" threads=%d", k.Threads)
	}
	if k.Rate > 0 {
		s += fmt.Sprintf(" rate=%g/s", k.Rate)
	}
	if k.SLO != "" {
		s += " capacity at " + strings.Replace(k.SLO, "<=", " ≤ ", 1)
	}
	return s
}

// keyOf is the step a run belongs to. A capacity search's rate is whatever its last probe ran
// at, so searches pair by their objective instead.
func keyOf(r *result.Result) Key {
	if c := r.Capacity; c != nil {
		return Key{Engine: r.Engine.Kind, Workload: r.WorkloadID(), Label: r.Label, Threads: r.Threads, SLO: c.SLO}
	}
	return Key{Engine: r.Engine.Kind, Workload: r.WorkloadID(), Label: r.Label, Threads: r.Threads, Rate: r.Rate}
}

// Diff judges every step present on both sides; steps on one side only are reported as not
// comparable. TPC-H runs are judged by their own figure over repeats (judgeTPCH).
func Diff(a, b []*result.Result, o Options) []Row {
	if o.Alpha == 0 {
		o.Alpha = 0.05
	}
	if o.MinChange == 0 {
		o.MinChange = DefaultMinChange
	}
	ga, gb := group(a), group(b)
	var rows []Row
	for _, k := range keys(ga, gb) {
		ra, rb := ga[k], gb[k]
		switch {
		case len(ra) == 0:
			rows = append(rows, Row{Key: k, Verdict: NotComparable, Why: "only in B"})
		case len(rb) == 0:
			rows = append(rows, Row{Key: k, Verdict: NotComparable, Why: "only in A"})
		default:
			rows = append(rows, judge(k, ra, rb, o))
		}
	}
	return rows
}

func group(rs []*result.Result) map[Key][]*result.Result {
	g := map[Key][]*result.Result{}
	for _, r := range rs {
		g[keyOf(r)] = append(g[keyOf(r)], r)
	}
	return g
}

func keys(ga, gb map[Key][]*result.Result) []Key {
	seen := map[Key]bool{}
	var ks []Key
	for _, g := range []map[Key][]*result.Result{ga, gb} {
		for k := range g {
			if !seen[k] {
				seen[k] = true
				ks = append(ks, k)
			}
		}
	}
	sort.Slice(ks, func(i, j int) bool { return ks[i].String() < ks[j].String() })
	return ks
}

// judge compares one step's runs on side A with side B.
func judge(k Key, ra, rb []*result.Result, o Options) Row {
	row := Row{Key: k, Metric: "tps", Unit: "intervals"}
	if k.Rate > 0 {
		row.Metric = "p99_ms"
	}
	row.TPSA, row.LatA = pooled(ra)
	row.TPSB, row.LatB = pooled(rb)
	row.Busy = busyRuns(ra, rb)
	row.PlansChanged = planChanges(ra, rb)
	if bad := unusable(ra, rb); bad != "" {
		row.Verdict, row.Why = NotComparable, bad
		return row
	}
	if ra[0].TPCH != nil && rb[0].TPCH != nil {
		return judgeTPCH(row, ra, rb, o)
	}
	if k.SLO != "" {
		return judgeCapacity(row, ra, rb, o)
	}
	if len(ra) >= MinRepeats && len(rb) >= MinRepeats {
		row.Unit = "repeats"
	}
	sa, sb := samples(ra, row.Metric, row.Unit), samples(rb, row.Metric, row.Unit)
	if len(sa) < 2 || len(sb) < 2 {
		row.Verdict = NotComparable
		row.Why = fmt.Sprintf("too few samples (%d and %d %s); run longer or with --repeat", len(sa), len(sb), row.Unit)
		return row
	}
	j := test(sa, sb, row.Metric, o)
	row.A, row.B, row.Change, row.P, row.N1, row.N2, row.Verdict, row.Why = j.A, j.B, j.Change, j.P, j.N1, j.N2, j.Verdict, j.Warning
	if row.Metric == "tps" {
		// Closed loop: throughput decides, and p99 is tested on the same samples beside it, so
		// a change that moved the tail and not the rate is seen too.
		if la, lb := samples(ra, "p99_ms", row.Unit), samples(rb, "p99_ms", row.Unit); len(la) >= 2 && len(lb) >= 2 {
			p99 := test(la, lb, "p99_ms", o)
			row.P99 = &p99
		}
	}
	return row
}

// judgeTPCH compares TPC-H runs by the test's own figure: the power test's geometric mean of
// the query times, the throughput test's queries per hour. A run has no intervals, so the
// samples are runs, and with fewer than MinRepeats a side the change is shown, not judged. A
// query whose plan changed is named with its time on each side (the median over runs).
func judgeTPCH(row Row, ra, rb []*result.Result, o Options) Row {
	row.Metric, row.Unit = "geomean_s", "repeats"
	if ra[0].TPCH.Mode == "throughput" {
		row.Metric = "queries_per_hour"
	}
	for i, name := range row.PlansChanged {
		row.PlansChanged[i] = fmt.Sprintf("%s (%s → %s s)", name, num(queryTime(ra, name)), num(queryTime(rb, name)))
	}
	sa, sb := samples(ra, row.Metric, row.Unit), samples(rb, row.Metric, row.Unit)
	if len(sa) < MinRepeats || len(sb) < MinRepeats {
		row.A, row.B, row.N1, row.N2 = median(sa), median(sb), len(sa), len(sb)
		if row.A != 0 {
			row.Change = (row.B - row.A) / row.A
		}
		row.Verdict = NotComparable
		row.Why = fmt.Sprintf("%d and %d runs: a TPC-H run has no intervals, so %d runs a side are needed to judge", len(sa), len(sb), MinRepeats)
		return row
	}
	j := test(sa, sb, row.Metric, o)
	row.A, row.B, row.Change, row.P, row.N1, row.N2, row.Verdict, row.Why = j.A, j.B, j.Change, j.P, j.N1, j.N2, j.Verdict, j.Warning
	return row
}

// judgeCapacity compares capacity searches by the capacity each found, one sample per search
// (a search has no intervals of its own figure); searches that found no knee (no rate, or only
// a lower bound) are not samples and are counted aside. With fewer than MinRepeats a side the
// change is shown, not judged.
func judgeCapacity(row Row, ra, rb []*result.Result, o Options) Row {
	row.Metric, row.Unit = "capacity_per_s", "repeats"
	sa, sb := samples(ra, row.Metric, row.Unit), samples(rb, row.Metric, row.Unit)
	var aside []string
	for i, n := range []int{len(ra) - len(sa), len(rb) - len(sb)} {
		if n > 0 {
			aside = append(aside, fmt.Sprintf("%d search%s in %c found no capacity (no rate, or a lower bound)", n, plural(n), 'A'+i))
		}
	}
	if len(sa) < MinRepeats || len(sb) < MinRepeats {
		row.A, row.B, row.N1, row.N2 = median(sa), median(sb), len(sa), len(sb)
		if row.A != 0 {
			row.Change = (row.B - row.A) / row.A
		}
		row.Verdict = NotComparable
		row.Why = strings.Join(append([]string{fmt.Sprintf("%d and %d searches with a capacity: %d a side are needed to judge", len(sa), len(sb), MinRepeats)}, aside...), "; ")
		return row
	}
	j := test(sa, sb, row.Metric, o)
	row.A, row.B, row.Change, row.P, row.N1, row.N2, row.Verdict = j.A, j.B, j.Change, j.P, j.N1, j.N2, j.Verdict
	row.Why = strings.Join(append(nonEmpty(j.Warning), aside...), "; ")
	return row
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "es"
}

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

// queryTime is the median time of TPC-H query name ("Q18") over the runs that answered it.
func queryTime(rs []*result.Result, name string) float64 {
	var times []float64
	for _, r := range rs {
		for _, q := range r.TPCH.Queries {
			if fmt.Sprintf("Q%d", q.Query) == name && q.Seconds > 0 {
				times = append(times, q.Seconds)
			}
		}
	}
	return median(times)
}

func median(v []float64) float64 { return interval.Median(v) }

// Judgement is one figure's test between the two sides' samples.
type Judgement struct {
	A, B    float64 // the samples' medians
	Change  float64 // (B - A) / A
	P       float64
	N1, N2  int
	Verdict string
	Warning string // from the test, e.g. too few samples for alpha
}

// test runs the Mann-Whitney U test on two samples of metric and says what the change is.
func test(sa, sb []float64, metric string, o Options) Judgement {
	th := &benchmath.Thresholds{CompareAlpha: o.Alpha}
	s1, s2 := benchmath.NewSample(sa, th), benchmath.NewSample(sb, th)
	cmp := benchmath.AssumeNothing.Compare(s1, s2)
	j := Judgement{A: benchmath.AssumeNothing.Summary(s1, 0.95).Center, B: benchmath.AssumeNothing.Summary(s2, 0.95).Center,
		P: cmp.P, N1: cmp.N1, N2: cmp.N2}
	if len(cmp.Warnings) > 0 {
		j.Warning = cmp.Warnings[0].Error()
	}
	if j.A != 0 {
		j.Change = (j.B - j.A) / j.A
	}
	j.Verdict = verdict(metric, j.P, j.Change, o)
	return j
}

func verdict(metric string, p, change float64, o Options) string {
	if p >= o.Alpha || math.Abs(change) < o.MinChange {
		return NoChange
	}
	better := change > 0 // more throughput
	if metric == "p99_ms" || metric == "geomean_s" {
		better = change < 0 // less time
	}
	if better {
		return Faster
	}
	return Slower
}

// unusable says why a side's runs can't be judged: incomplete runs, or no transactions.
func unusable(sides ...[]*result.Result) string {
	for i, rs := range sides {
		for _, r := range rs {
			side := string(rune('A' + i))
			if !r.Complete {
				return fmt.Sprintf("a run in %s is incomplete (%s)", side, firstLine(r.Error))
			}
			if r.Transactions == 0 {
				return fmt.Sprintf("a run in %s has no transactions", side)
			}
		}
	}
	return ""
}

// planChanges names the read statements whose plan differs between the two sides' first runs
// that recorded plans, in the order the runs recorded them.
func planChanges(ra, rb []*result.Result) []string {
	a, b := firstWithPlans(ra), firstWithPlans(rb)
	if a == nil || b == nil {
		return nil
	}
	return result.PlansChanged(a, b)
}

// firstWithPlans is the first run that recorded any plan.
func firstWithPlans(rs []*result.Result) *result.Result {
	for _, r := range rs {
		if names, _ := r.Plans(); len(names) > 0 {
			return r
		}
	}
	return nil
}

// busyRuns counts, per side, the runs measured while others used the machine ("3 of 8 runs in
// B"); "" when none were.
func busyRuns(sides ...[]*result.Result) string {
	var parts []string
	for i, rs := range sides {
		n := 0
		for _, r := range rs {
			if r.Machine != nil && r.Machine.Busy {
				n++
			}
		}
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d of %d runs in %c", n, len(rs), 'A'+i))
		}
	}
	return strings.Join(parts, ", ")
}

func firstLine(s string) string {
	if s == "" {
		return "no reason recorded"
	}
	return strings.SplitN(s, "\n", 2)[0]
}

// samples are one value per repeat or per interval.
func samples(rs []*result.Result, metric, unit string) []float64 {
	var out []float64
	for _, r := range rs {
		if unit == "repeats" {
			switch metric {
			case "tps":
				out = append(out, r.TPS)
			case "geomean_s":
				out = append(out, r.TPCH.GeoMeanS)
			case "queries_per_hour":
				out = append(out, r.TPCH.QueriesPerHour)
			case "capacity_per_s":
				if c := r.Capacity; c != nil && !c.AtLeast && c.Reached != "no rate" && c.PerS > 0 {
					out = append(out, c.PerS)
				}
			default:
				out = append(out, r.LatencyMS.P99)
			}
			continue
		}
		for _, iv := range r.Intervals {
			v := iv.TPS
			if metric == "p99_ms" {
				v = iv.P99MS
			}
			if iv.TPS > 0 { // an interval with no transaction has no latency to compare
				out = append(out, v)
			}
		}
	}
	return out
}

// pooled is the side's throughput (transactions over measured seconds, all runs) and its latency
// from the runs' histograms merged exactly.
func pooled(rs []*result.Result) (float64, result.Latency) {
	var txns int64
	var secs float64
	merged := histogram.New()
	for _, r := range rs {
		txns += r.Transactions
		secs += r.DurationS
		if h, err := histogram.Decode(r.Histogram); err == nil {
			merged.Merge(h)
		}
	}
	tps := 0.0
	if secs > 0 {
		tps = float64(txns) / secs
	}
	return tps, merged.Latency()
}

// FailIf is a CI gate: fail when a step got slower by more than Slower (a fraction).
type FailIf struct{ SlowerThan float64 }

// ParseFailIf reads "slower-than=5%" (or 0.05).
func ParseFailIf(s string) (FailIf, error) {
	k, v, ok := strings.Cut(s, "=")
	if !ok || strings.TrimSpace(k) != "slower-than" {
		return FailIf{}, fmt.Errorf("--fail-if %q: write it as slower-than=5%%", s)
	}
	v = strings.TrimSpace(v)
	pct := strings.HasSuffix(v, "%")
	f, err := strconv.ParseFloat(strings.TrimSuffix(v, "%"), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
		return FailIf{}, fmt.Errorf("--fail-if %q: the threshold must be a percentage such as slower-than=5%%", s)
	}
	if pct {
		f /= 100
	}
	return FailIf{SlowerThan: f}, nil
}

// Failing lists the rows that break the gate: judged slower and by more than the threshold.
func (f FailIf) Failing(rows []Row) []Row {
	var bad []Row
	for _, r := range rows {
		if r.Verdict == Slower && math.Abs(r.Change) > f.SlowerThan {
			bad = append(bad, r)
		}
	}
	return bad
}
