package capacity

import (
	"context"
	"errors"
	"fmt"
	"github.com/fairbench/fairbench/internal/slo"
	"io"
	"strings"
	"time"

	"github.com/fairbench/fairbench/internal/histogram"
	"github.com/fairbench/fairbench/internal/machineload"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/runner"
	"github.com/fairbench/fairbench/internal/runspec"
)

// Settings are a search as a command gives it.
type Settings struct {
	SLO  slo.SLO
	Plan Plan
	// Connections is the open loop's clients, each on a connection of its own.
	Connections    int
	Window, Warmup time.Duration
	// Budget bounds the whole search: a rate that would end past it is not started.
	Budget time.Duration
	Log    io.Writer
}

// Measure runs one rate as a measured step (job.Measured with the server's watcher).
type Measure func(ctx context.Context, cfg runner.Config) (*result.Result, error)

// Search measures rate after rate as the plan says until it finishes, the budget is spent, the
// server fails or ctx ends, and returns the result of the last window at the capacity's passing
// rate with the search's record attached (Capacity). A server that failed, or an interrupted
// search, leaves that result marked incomplete with what the search had found until then.
func Search(ctx context.Context, s Settings, measure Measure) (*result.Result, error) {
	began := time.Now()
	// Nothing a rate does (the settle's flush, a client's set-up, the window) may carry the
	// search past its budget by more than the grace: a server that froze mid-search ends it
	// there, with what it had.
	parent := ctx
	if s.Budget > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, began.Add(s.Budget+BudgetGrace))
		defer cancel()
	}
	var probes []Probe
	var windows []Window
	var results []*result.Result
	var stopped string
	var lastTook time.Duration
	for {
		next, finished := s.Plan.Next(probes)
		if finished {
			break
		}
		if ctx.Err() != nil {
			stopped = interruption(parent)
			break
		}
		if s.Budget > 0 && time.Since(began)+max(lastTook, s.Warmup+s.Window) > s.Budget {
			stopped = "budget"
			break
		}
		s.logf("   %s %.0f/s%s", next.Phase, next.Rate, roundText(next))
		t0 := time.Now()
		res, err := machineload.Unstolen(ctx, func(ctx context.Context) (*result.Result, error) { return measure(ctx, s.config(next.Rate)) },
			func(w result.SetAsideWindow) {
				s.logf("     the hypervisor stole %.0f%% of the machine over the window: measuring %.0f/s again", w.StealPctMean, next.Rate)
			})
		lastTook = time.Since(t0)
		if res == nil {
			// Nothing measured at this rate: the server did not take the clients (a connection,
			// a prepare), or the search was interrupted. The rates before it stand.
			stopped = interruption(parent)
			if ctx.Err() == nil {
				stopped = fmt.Sprintf("the server failed at %.0f/s: %v", next.Rate, err)
			}
			if len(results) == 0 {
				return nil, err
			}
			break
		}
		w := WindowOf(res, s.SLO, next.Rate, s.Connections)
		if err != nil && w.Failed == "" {
			w.Failed = err.Error()
		}
		next.Verdict = Judge(s.SLO, w)
		probes, windows, results = append(probes, next), append(windows, w), append(results, res)
		s.logf("     %s", verdictText(s.SLO, w, next.Verdict))
		if w.Failed != "" {
			stopped = "the server failed at " + fmt.Sprintf("%.0f/s", next.Rate) + ": " + w.Failed
			break
		}
	}
	if len(results) == 0 {
		return nil, errors.New("the capacity search measured no rate: " + stopped)
	}
	return s.record(probes, windows, results, stopped, time.Since(began)), nil
}

// BudgetGrace is how far past its budget a search may run when a rate it started does not end
// (a server that froze during its settle or its clients' set-up).
const BudgetGrace = 30 * time.Second

// interruption says why the search's context ended: the user's Ctrl-C, or its budget and grace
// spent on a server that did not answer.
func interruption(parent context.Context) string {
	if parent.Err() != nil {
		return "interrupted"
	}
	return "budget (and its " + BudgetGrace.String() + " grace) spent on a rate the server did not finish: it froze or fell over"
}

func (s Settings) config(rate float64) runner.Config {
	return runner.Config{Threads: s.Connections, Duration: s.Window, Warmup: s.Warmup, Rate: rate,
		MaxTries: runspec.DefaultMaxTries, ReportInterval: runspec.DefaultReportInterval}
}

func (s Settings) logf(format string, args ...any) {
	if s.Log != nil {
		fmt.Fprintf(s.Log, format+"\n", args...)
	}
}

func roundText(p Probe) string {
	if p.Round > 0 {
		return fmt.Sprintf(" (round %d)", p.Round)
	}
	return ""
}

func verdictText(obj slo.SLO, w Window, v Verdict) string {
	head := fmt.Sprintf("completed %.0f/s, %s %s", w.Completed, pName(obj), ms(w.Latency))
	if v.Pass {
		return head + ": passes"
	}
	return head + ": fails: " + strings.Join(v.Failed, "; ")
}

// record is the search's result: the last window at the capacity's passing rate, with every
// probe's figures and the estimate.
func (s Settings) record(probes []Probe, windows []Window, results []*result.Result, stopped string, spent time.Duration) *result.Result {
	e := s.Plan.Estimate(probes)
	plan := s.Plan.withDefaults()
	c := &result.Capacity{SLO: s.SLO.String(), Percentile: s.SLO.Percentile, Kind: s.SLO.Kind, LimitMS: msOf(s.SLO.Limit),
		Connections: s.Connections, WindowS: s.Window.Seconds(), WarmupS: s.Warmup.Seconds(), Resolution: plan.Resolution,
		Rounds: plan.Rounds, BudgetS: s.Budget.Seconds(), SpentS: spent.Seconds(),
		PerS: e.Capacity, LowPerS: e.Low, HighPerS: e.High, Reached: e.Reached, AtLeast: e.AtLeast,
		GaveWay: e.GaveWay, Advice: e.Advice, Stopped: stopped, Contradicted: e.Contradicted, Refuted: e.Refuted, Floor: e.Floor}
	for i, p := range probes {
		c.Steps = append(c.Steps, step(p, windows[i], results[i]))
	}
	base := baseProbe(probes)
	res := results[base]
	res.Capacity = c
	if stopped != "" && stopped != "budget" {
		res.Fail(errors.New("capacity search stopped: " + stopped))
	}
	return res
}

// baseProbe is the probe whose window the search's result shows: the last at the bracket's
// passing rate, else the last that passed, else the last.
func baseProbe(probes []Probe) int {
	lo, _, _ := bracket(probes)
	last := -1
	for i, p := range probes {
		if p.Verdict.Pass && p.Rate == lo {
			last = i
		}
	}
	if last >= 0 {
		return last
	}
	for i := len(probes) - 1; i >= 0; i-- {
		if probes[i].Verdict.Pass {
			return i
		}
	}
	return len(probes) - 1
}

// step is one probe's figures as the results file keeps them: the window it was judged on, and
// its result's percentiles and server figures.
func step(p Probe, w Window, r *result.Result) result.CapacityStep {
	st := result.CapacityStep{Phase: p.Phase, Round: p.Round, OfferedPerS: p.Rate, CompletedPerS: w.Completed,
		LatencyMS: msOf(w.Latency), P50MS: r.LatencyMS.P50, P99MS: r.LatencyMS.P99, P999MS: r.LatencyMS.P999,
		LagStartMS: msOf(w.LagStart), LagEndMS: msOf(w.LagEnd), ServiceMS: msOf(w.Service), Busy: w.Busy,
		Pass: p.Verdict.Pass, Failed: p.Verdict.Failed, GaveWay: p.Verdict.GaveWay}
	if r.Server != nil {
		st.ServerCPUPct = r.Server.CPUPct
	}
	st.Waits = topWaits(r.Waits)
	if m := r.Machine; m != nil {
		st.StealPct, st.SetAside, st.MemoryNS = m.StealPctMean, m.SetAside, m.MemoryNSBefore
	}
	return st
}

// topWaits names the biggest shares of the clients' sessions on the server: "61% log_flush, 20% cpu".
func topWaits(w *result.Waits) string {
	var parts []string
	for _, c := range w.Ranked() {
		if len(parts) == 3 || w.Share(c.Category) < 0.05 {
			break
		}
		parts = append(parts, fmt.Sprintf("%.0f%% %s", 100*w.Share(c.Category), c.Category))
	}
	return strings.Join(parts, ", ")
}

// WindowOf reads what a rate's measured window showed from its result.
func WindowOf(r *result.Result, obj slo.SLO, rate float64, connections int) Window {
	w := Window{Offered: rate, Completed: r.TPS, Seconds: r.DurationS, Connections: connections, Latency: percentile(r, obj)}
	w.LagStart, w.LagEnd = lagThirds(r.Intervals)
	if r.ScheduleLagMS != nil {
		w.LagP99 = time.Duration(r.ScheduleLagMS.P99 * float64(time.Millisecond))
		w.Service = time.Duration(max(0, r.LatencyMS.Avg-r.ScheduleLagMS.Avg) * float64(time.Millisecond))
	}
	if connections > 0 {
		w.Busy = w.Completed * w.Service.Seconds() / float64(connections)
	}
	if !r.Complete {
		w.Failed = r.Error
	}
	return w
}

// percentile is the objective's percentile of the window's latency, from the scheduled arrival:
// read from the histogram (every percentile exactly), of the objective's kind of transaction
// where it names one.
func percentile(r *result.Result, obj slo.SLO) time.Duration {
	enc := r.Histogram
	if obj.Kind != "" {
		enc = ""
		if k := r.ByKind[obj.Kind]; k != nil {
			enc = k.Histogram
		}
	}
	h, err := histogram.Decode(enc)
	if err != nil || h.Count() == 0 {
		return time.Duration(1 << 62) // nothing completed: no latency meets any limit
	}
	return time.Duration(h.PercentileMS(obj.Percentile) * float64(time.Millisecond))
}

// lagThirds is the intervals' mean schedule lag over the window's first and last thirds: how far
// behind the arrivals were as it began and as it ended.
func lagThirds(ivs []result.Interval) (start, end time.Duration) {
	n := len(ivs) / 3
	if n == 0 {
		return 0, 0
	}
	mean := func(part []result.Interval) time.Duration {
		sum := 0.0
		for _, iv := range part {
			sum += iv.LagMeanMS
		}
		return time.Duration(sum / float64(len(part)) * float64(time.Millisecond))
	}
	return mean(ivs[:n]), mean(ivs[len(ivs)-n:])
}

func msOf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Line is the search's answer in one line.
func Line(c *result.Capacity) string {
	slo := strings.Replace(c.SLO, "<=", " ≤ ", 1)
	var s string
	switch {
	case c.Reached == "no rate":
		s = fmt.Sprintf("capacity at %s: no rate met it; the lowest tried failed (%s)", slo, firstFailure(c))
	case c.AtLeast:
		s = fmt.Sprintf("capacity at %s: at least %.0f/s (%s)", slo, c.PerS, map[bool]string{true: "the client gave way", false: "every rate tried passed"}[c.GaveWay == "client"])
	default:
		s = fmt.Sprintf("capacity at %s: %.0f/s [%.0f, %.0f] with %d connections (%s)", slo, c.PerS, c.LowPerS, c.HighPerS, c.Connections, c.Reached)
	}
	if c.Contradicted > 0 {
		s += fmt.Sprintf("; the lower rate failed in %d of %d rounds: one rate's windows vary more than the resolution", c.Contradicted, c.Rounds)
	}
	if note := c.RefutedNote(); note != "" {
		s += "; " + note
	}
	if note := c.FloorNote(); note != "" {
		s += "; " + note
	}
	if c.Stopped != "" {
		s += "; the search stopped: " + c.Stopped
	}
	return s + fmt.Sprintf("; %d rates in %.0f s", len(c.Steps), c.SpentS)
}

func firstFailure(c *result.Capacity) string {
	if len(c.Steps) == 0 {
		return "nothing measured"
	}
	return fmt.Sprintf("%.0f/s: %s", c.Steps[0].OfferedPerS, strings.Join(c.Steps[0].Failed, "; "))
}

// Bracket is the highest passing rate below the lowest failing one that a search measured, from
// its record: where the next search of the same server may start (Plan's hint).
func Bracket(c *result.Capacity) (lo, hi float64, ok bool) {
	var probes []Probe
	for _, st := range c.Steps {
		probes = append(probes, Probe{Rate: st.OfferedPerS, Phase: st.Phase, Verdict: Verdict{Pass: st.Pass}})
	}
	return bracket(probes)
}
