package capacity

import (
	"math"
	"slices"

	"github.com/fairbench/fairbench/internal/interval"
)

// Phases of the search.
const (
	Climb   = "climb"   // geometric steps up from Start until a rate fails
	Bisect  = "bisect"  // the geometric midpoint of the highest pass and the lowest failure
	Confirm = "confirm" // the bracket measured again, round by round, for the interval
)

// Plan is the search's settings. Its zero values take the defaults.
type Plan struct {
	Start      float64 // the first rate tried, per second (default 10)
	Factor     float64 // the climb's step (default 2)
	Resolution float64 // bisection stops when the bracket's top is within this of its bottom (default 0.05)
	Rounds     int     // confirmation rounds (default 5)
	MaxRate    float64 // the climb stops here: a rate the client cannot offer (0: no limit)
	// HintLow and HintHigh are a bracket found before (an earlier round of compare on the same
	// engine and step): the search measures them first instead of climbing from Start, and
	// climbs or descends from there where the server moved.
	HintLow, HintHigh float64
}

func (p Plan) withDefaults() Plan {
	if p.Start <= 0 {
		p.Start = 10
	}
	if p.Factor <= 1 {
		p.Factor = 2
	}
	if p.Resolution <= 0 {
		p.Resolution = 0.05
	}
	if p.Rounds <= 0 {
		p.Rounds = 5
	}
	return p
}

// Probe is one rate measured, or to measure, in a phase of the search.
type Probe struct {
	Rate    float64
	Phase   string
	Round   int // the confirmation round, from 1
	Verdict Verdict
}

// Next is the rate to measure after done (in the order measured), or finished when the search
// has all it needs. It is a pure function of done: a search that stopped may go on from the same
// probes, and the tests feed it fake servers.
func (p Plan) Next(done []Probe) (next Probe, finished bool) {
	p = p.withDefaults()
	hinted := p.HintLow > 0 && p.HintHigh > p.HintLow
	if len(done) == 0 {
		if hinted {
			return Probe{Rate: p.HintLow, Phase: Bisect}, false
		}
		return Probe{Rate: p.Start, Phase: Climb}, false
	}
	lo, hi, ok := bracket(done)
	if f := lowestFailure(done); f != nil && f.Phase != Confirm && !decided(done, f.Rate) {
		// One failed window is not yet a failed rate. A stall of the machine fails a window at
		// any rate (here every 8 s window held one of 13-72 ms, enough for a 5 ms p99), as does a
		// client held back for a moment by the hypervisor; an overloaded server fails every
		// window. So a failure is measured again before it bounds the search, and where the two
		// windows disagree a third decides. Stalls only ever fail windows, so only failures are
		// measured again. A bracket's bottom refuted by its confirmation rounds is decided by
		// them (confirmation).
		return Probe{Rate: f.Rate, Phase: f.Phase}, false
	}
	switch {
	case !ok && lo == 0 && hi <= p.Start: // the lowest rate tried failed: no rate meets the objective
		return Probe{}, true
	case !ok && lo == 0: // a hint's rate failed: descend towards Start
		return Probe{Rate: max(p.Start, hi/p.Factor), Phase: Climb}, false
	case !ok && hinted && !measured(done, p.HintHigh):
		return Probe{Rate: p.HintHigh, Phase: Bisect}, false
	case !ok: // every rate passed so far: climb on
		up := lo * p.Factor
		if p.MaxRate > 0 && lo >= p.MaxRate {
			return Probe{}, true
		}
		if p.MaxRate > 0 {
			up = min(up, p.MaxRate)
		}
		return Probe{Rate: up, Phase: Climb}, false
	case hi/lo-1 > p.Resolution && !confirming(done):
		return Probe{Rate: math.Sqrt(lo * hi), Phase: Bisect}, false
	case clientLimited(done):
		// The bracket's top is what the client could not offer: the server's capacity is only
		// known to be above its bottom, and rounds would measure the client again.
		return Probe{}, true
	}
	return p.nextConfirmation(done)
}

// nextConfirmation measures the bracket's two rates again in each round, in alternating order,
// so that neither always runs on a server the other has just warmed or loaded.
func (p Plan) nextConfirmation(done []Probe) (Probe, bool) {
	lo, hi, ok := bracket(done) // the climb's and bisection's: confirmation does not move it
	if !ok {
		return Probe{}, true
	}
	current, _ := confirmation(done)
	n := len(current)
	if n >= 2*p.Rounds {
		return Probe{}, true
	}
	round := n/2 + 1
	rates := [2]float64{lo, hi}
	if round%2 == 0 {
		rates = [2]float64{hi, lo}
	}
	return Probe{Rate: rates[n%2], Phase: Confirm, Round: round}, false
}

// decided says whether the climb's and bisection's windows at rate have settled its verdict: a
// first window that passed, or two windows alike (pass, fail, pass is a pass). The last window
// measured then carries the verdict (latest).
func decided(done []Probe, rate float64) bool {
	passes, fails := 0, 0
	for _, pr := range done {
		if pr.Phase != Confirm && pr.Rate == rate {
			if pr.Verdict.Pass {
				passes++
			} else {
				fails++
			}
		}
	}
	return fails == 0 || fails >= 2 || passes >= 2
}

func measured(done []Probe, rate float64) bool {
	return slices.ContainsFunc(done, func(pr Probe) bool { return pr.Rate == rate })
}

// confirming says whether the bracket the climb and bisection found is being confirmed.
func confirming(done []Probe) bool {
	current, _ := confirmation(done)
	return len(current) > 0
}

// confirmation splits the confirmation probes of done: current are those of the bracket now being
// confirmed, and refuted the indices of the windows that refuted an earlier bracket's bottom.
//
// A bracket's bottom passed in the climb or the bisection on one window. Where latency sits near
// the objective at every rate around it (a read-write transaction whose own p99 is about the
// limit), one rate's windows pass and fail by turns, and that one pass was luck: PostgreSQL's
// read-write at p99 ≤ 5 ms here was bracketed at 575/s, whose confirmation failed in 3 of 3
// rounds, and runs at 410/s then missed. So a bottom that fails in two confirmation rounds, and
// in more than it passes, is refuted: it counts as the rate that failed (its last failed window),
// the confirmation starts over, and the search bisects below it. One failed round is a stall's
// as readily as the server's, and leaves the bracket standing, as a failure in the climb does.
func confirmation(done []Probe) (current []Probe, refuted []int) {
	for i, pr := range done {
		if pr.Phase != Confirm {
			current = nil
			continue
		}
		current = append(current, pr)
		if bottomRefuted(current) {
			refuted, current = append(refuted, i), nil
		}
	}
	return current, refuted
}

// bottomRefuted says whether one bracket's confirmation probes have refuted its bottom: failed
// there in at least two rounds and in more rounds than it passed.
func bottomRefuted(probes []Probe) bool {
	bottom := math.Inf(1)
	for _, pr := range probes {
		bottom = min(bottom, pr.Rate)
	}
	passes, fails := 0, 0
	for _, pr := range probes {
		switch {
		case pr.Rate != bottom:
		case pr.Verdict.Pass:
			passes++
		default:
			fails++
		}
	}
	return fails >= 2 && fails > passes
}

// bracket is the highest rate that passed below the lowest that failed (ok), or, where none
// failed, the highest that passed (ok false); lo is 0 where the lowest rate failed. A pass above
// a failure (noise near the knee) does not move the bracket up: the failure stands.
func bracket(done []Probe) (lo, hi float64, ok bool) {
	searched := latest(done)
	hi = math.Inf(1)
	for _, pr := range searched {
		if !pr.Verdict.Pass {
			hi = min(hi, pr.Rate)
		}
	}
	for _, pr := range searched {
		if pr.Verdict.Pass && pr.Rate < hi {
			lo = max(lo, pr.Rate)
		}
	}
	return lo, hi, !math.IsInf(hi, 1) && lo > 0
}

// latest are the climb's and bisection's probes, each rate's last measurement only: a rate
// measured again after a failure counts as its last window says, which is its windows' majority
// (decided); a bracket's bottom that its confirmation refuted counts as the failed window that
// refuted it, unless the search measured it again since.
func latest(done []Probe) []Probe {
	last := map[float64]int{}
	for i, pr := range done {
		if pr.Phase != Confirm {
			last[pr.Rate] = i
		}
	}
	_, refuted := confirmation(done)
	for _, i := range refuted {
		if j, ok := last[done[i].Rate]; !ok || i > j {
			last[done[i].Rate] = i
		}
	}
	var out []Probe
	for i, pr := range done {
		if j, ok := last[pr.Rate]; ok && j == i {
			out = append(out, pr)
		}
	}
	return out
}

// clientLimited says whether the lowest rate that failed did so because the client could not
// offer it: a higher rate would measure the client, not the server.
func clientLimited(done []Probe) bool {
	f := lowestFailure(done)
	return f != nil && f.Verdict.GaveWay == ByClient
}

// Estimate is what a search found.
type Estimate struct {
	// Capacity is the highest sustainable rate (per second), with its 95% interval from the
	// confirmation rounds (Low = High = Capacity where there were fewer than two).
	Capacity, Low, High float64
	// PerRound are each confirmation round's estimates: the rate at which the stress crosses 1,
	// interpolated between the bracket's two rates measured in that round.
	PerRound []float64
	// Reached says how far the search got: "confirmed", "bisected", "climbing", "no rate".
	Reached string
	// AtLeast is set where the capacity is only a lower bound: every rate passed (the climb
	// reached its top), or the client, not the server, gave way.
	AtLeast bool
	// GaveWay is what limited the lowest failing rate, and Advice what to raise (empty for the
	// server).
	GaveWay, Advice string
	// Contradicted counts the confirmation rounds in which the bracket's bottom failed: the
	// rate's own windows then vary more than the resolution, and the capacity is that uncertain.
	Contradicted int
	// Refuted counts the brackets whose confirmation refuted their bottom (confirmation), each
	// sending the search below it.
	Refuted int
	// Floor is the objective's percentile at the start rate, over its limit (floor).
	Floor float64
}

// floor is the objective's percentile at the start rate, as a share of the limit (the least of
// that rate's windows): how near the workload's own latency, nearly unloaded, is to the
// objective. Where it is near, the capacity is set by the machine's speed more than by
// load: for a queue whose percentile grows as 1/(μ − λ), a floor f moves the capacity by 1/(1 − f)
// times any change in the server's speed μ (twice at f = 0.5, five times at 0.8), and a shared
// host's speed moves by ±15% here. 0 where the start was not measured: a search from a hint
// (a later round of compare) begins near the capacity, where the percentile is near the limit
// whatever the workload.
func floor(done []Probe, start float64) float64 {
	share := math.Inf(1)
	for _, pr := range done {
		if pr.Phase != Confirm && pr.Rate <= start {
			share = min(share, pr.Verdict.Ratios[0])
		}
	}
	if math.IsInf(share, 1) {
		return 0
	}
	return share
}

// Estimate reads the capacity from the probes of a finished or interrupted search.
func (p Plan) Estimate(done []Probe) Estimate {
	lo, hi, ok := bracket(done)
	current, refuted := confirmation(done)
	e := Estimate{Capacity: lo, Low: lo, High: lo, Refuted: len(refuted), Floor: floor(done, p.withDefaults().Start)}
	if lowest := lowestFailure(done); lowest != nil {
		e.GaveWay, e.Advice = lowest.Verdict.GaveWay, lowest.Verdict.Advice
	}
	switch {
	case len(done) == 0 || (!ok && lo == 0):
		e.Reached = "no rate"
		return e
	case !ok:
		e.Reached, e.AtLeast = Climb, true
		return e
	case e.GaveWay == ByClient:
		e.Reached, e.AtLeast = Bisect, true
		return e
	}
	e.Reached, e.High = Bisect, hi
	e.Capacity = math.Sqrt(lo * hi)
	if len(current) > 0 {
		e.Reached = Confirm
		e.PerRound = roundEstimates(current)
		e.Contradicted = contradicted(current, lo)
		e.Capacity, e.Low, e.High = withBracket(e.PerRound, hi-lo)
	}
	return e
}

// withBracket is the rounds' mean with its 95% interval, widened by the interpolation's own
// error: the crossing lies somewhere in the bracket of width w, and a straight line through two
// points of a curved approach can miss it by up to about half of that, which no number of rounds
// removes. The two are added in quadrature, as independent errors.
func withBracket(estimates []float64, w float64) (mean, lo, hi float64) {
	mean, _, hi = interval.Mean(estimates)
	half := math.Hypot(hi-mean, w/2)
	return mean, mean - half, mean + half
}

// lowestFailure is the lowest rate that failed in the climb or the bisection: the knee's. A
// confirmation round's failure at the bracket's bottom is noise around it, which the rounds'
// estimates take in; it neither ends the search nor names what gave way.
func lowestFailure(done []Probe) *Probe {
	var out *Probe
	for _, pr := range latest(done) {
		if !pr.Verdict.Pass && (out == nil || pr.Rate < out.Rate) {
			out = &pr
		}
	}
	return out
}

func contradicted(done []Probe, lo float64) int {
	n := 0
	for _, pr := range done {
		if pr.Phase == Confirm && pr.Rate == lo && !pr.Verdict.Pass {
			n++
		}
	}
	return n
}

// roundEstimates gives each complete confirmation round's crossing: where the stress reaches 1
// between its two rates, linear in rate and in the stress's logarithm (a queue's latency grows
// about exponentially towards its knee). A round whose two rates both passed says at least the
// upper rate, and one whose two both failed at most the lower: each is taken at that bound.
func roundEstimates(done []Probe) []float64 {
	byRound := map[int][]Probe{}
	for _, pr := range done {
		if pr.Phase == Confirm {
			byRound[pr.Round] = append(byRound[pr.Round], pr)
		}
	}
	var out []float64
	for r := 1; r <= len(byRound); r++ {
		pair := byRound[r]
		if len(pair) != 2 {
			continue
		}
		a, b := pair[0], pair[1]
		if a.Rate > b.Rate {
			a, b = b, a
		}
		out = append(out, crossing(a, b))
	}
	return out
}

// crossing interpolates the condition that gave way at the upper rate (the largest of its
// ratios there) between the two rates: the overall stress would hide the latency's approach to
// its limit behind the throughput's constant 0.97 below the knee. A capacity is a promise, so
// where a round is out of line it errs low: both rates passing say "at least the upper" and count
// as it; both failing extrapolate the line below the lower rate (by at most two brackets), or,
// where the upper rate was no worse, count one bracket below it. Taking the lower rate itself for
// a round that failed there reported PostgreSQL's capacity at a rate that failed in every round.
func crossing(a, b Probe) float64 {
	w := b.Rate - a.Rate
	switch {
	case !a.Verdict.Pass && b.Verdict.Pass:
		return a.Rate // inverted by noise: the bracket's bottom is all it says
	case a.Verdict.Pass && b.Verdict.Pass:
		return b.Rate
	}
	k := b.Verdict.worst()
	sa, sb := logRatio(a.Verdict.Ratios[k]), logRatio(b.Verdict.Ratios[k])
	switch {
	case !a.Verdict.Pass && sb <= sa:
		return a.Rate - w
	case !a.Verdict.Pass:
		return max(a.Rate-2*w, a.Rate-w*sa/(sb-sa))
	case sb <= sa:
		return a.Rate
	}
	return a.Rate + w*(0-sa)/(sb-sa)
}

func logRatio(x float64) float64 {
	if math.IsInf(x, 1) || math.IsNaN(x) || x > 1e3 {
		x = 1e3
	}
	return math.Log(max(x, 1e-3))
}
