package report

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fairbench/fairbench/internal/interval"
	"github.com/fairbench/fairbench/internal/result"
)

var useCases = map[string]string{
	"oltp_read_write":   "Mixed OLTP (reads + writes)",
	"oltp_read_only":    "Read-heavy",
	"oltp_point_select": "Key-value lookups",
	"oltp_insert":       "Ingest / insert-heavy",
	"oltp_write_only":   "Write-heavy",
}

func useCase(workload string) string {
	if u, ok := useCases[workload]; ok {
		return u
	}
	return workload
}

type decision struct {
	Workload string
	UseCase  string
	Threads  int
	Pick     string
	Why      string
	Winner   *variant   // nil on a tie, an unconfirmed lead, or when nothing completed
	Tied     []*variant // the engines whose interval against the best includes no difference, best first
	Lead     *variant   // the best by median on an unconfirmed lead (single runs), else nil
	// Ramp marks a decision between ramp runs, by saturation throughput; Workload then carries
	// " (ramp)" and Threads is the winner's saturation point.
	Ramp bool
	// TPCH marks a decision between TPC-H runs, by geometric mean or queries per hour; UseCase
	// then names the test and scale factor.
	TPCH bool
	// Resource marks a decision by memory footprint or disk writes (lower is better); UseCase
	// then says which.
	Resource bool
	// Capacity marks a decision by the arrival rate carried within a latency objective; UseCase
	// then names the objective.
	Capacity bool
	// Open are the variants in question where more rounds could decide the pick: the leader
	// and every variant it is not yet placed against (resource rows; throughput rows keep them
	// in their ranking). OpenRounds is the fewest rounds any of them shares with the leader,
	// OpenNearness the least near of their intervals (interval.Ratio.Nearness).
	Open         []*variant
	OpenRounds   int
	OpenNearness float64
	// OpenDecide is the most rounds in all that any of them needs to be decided (toDecide).
	OpenDecide int
}

// outcome is what the repeats allow to be said of the best candidate against another.
type outcome int

const (
	// decided: the interval of the ratio lies wholly beyond 1: the best is faster.
	decided outcome = iota
	// tied: the interval lies within the equivalence margin: the two are as fast, for any
	// purpose a reader has.
	tied
	// undecided: the interval includes 1 but reaches beyond the margin: the repeats can say
	// neither that one is faster nor that they are equal. Absence of a difference is not
	// evidence of equality, so this is never called a tie.
	undecided
	// unconfirmed: a side has a single run, which measures no noise; no verdict is drawn.
	unconfirmed
)

// equivalenceMargin is interval.Margin: a tie is the whole interval within ±5%.
const equivalenceMargin = interval.Margin

func withinMargin(r interval.Ratio) bool { return r.WithinMargin() }

// judge compares the best candidate's figures with another's, higher being better: the ratio
// best/other with its interval, paired by round (runs in the order they started).
func judge(rule interval.Rule, best, other []float64) (interval.Ratio, outcome) {
	r, ok := rule.Of(best, other, true)
	switch {
	case !ok:
		return r, unconfirmed
	case withinMargin(r):
		return r, tied // also when it excludes 1: a difference shown to be under 5% is no pick
	case r.Lo > 1:
		return r, decided
	}
	// Includes 1 and reaches beyond the margin; also an interval wholly below 1 (the median
	// ranked first, the geometric means the other way), which is no evidence for either order.
	return r, undecided
}

// ranking orders the candidates of one decision: complete groups by median TPS, best first;
// the incomplete ones are never ranked. tied holds the best and every group whose interval
// against it includes no difference.
type ranking struct {
	ranked, excluded []*group
	tied             []*group
	lone             bool           // a ranked group has one run: no interval, no verdict
	open             *group         // the first group the repeats cannot place against the best
	opens            []*group       // every such group
	openVs           interval.Ratio // best over open
	openNear         float64        // the least near of the open groups' intervals (Ratio.Nearness)
	openMore         string         // what more rounds would take to decide openVs (moreRounds)
	openDecide       int            // the most rounds in all an open group needs (toDecide)
	vs               interval.Ratio // best over the runner-up, or over the last tied group
	suffix           string         // names the excluded groups
}

func rank(rule interval.Rule, cands []*group) ranking {
	var rk ranking
	for _, g := range cands {
		if g.Incomplete {
			rk.excluded = append(rk.excluded, g)
		} else {
			rk.ranked = append(rk.ranked, g)
		}
	}
	// Ranked by the estimator of the ratio (the geometric mean of the rounds), so that the leader
	// named and the ratio given never disagree: by medians, a leader could trail by 0.97×.
	sort.SliceStable(rk.ranked, func(i, j int) bool {
		if a, b := rankFigure(rk.ranked[i]), rankFigure(rk.ranked[j]); a != b {
			return a > b
		}
		return rk.ranked[i].V.Index < rk.ranked[j].V.Index
	})
	if len(rk.excluded) > 0 {
		names := make([]string, len(rk.excluded))
		for i, g := range rk.excluded {
			names[i] = g.V.Name
		}
		rk.suffix = "; " + joinAnd(names) + " not ranked (incomplete)"
	}
	rk.suffix += leftOut(rk.ranked)
	if len(rk.ranked) == 0 {
		return rk
	}
	best := rk.ranked[0]
	rk.tied = []*group{best}
	for i, g := range rk.ranked[1:] {
		x, y := paired(best, g)
		r, out := judge(rule, x, y)
		switch out {
		case unconfirmed:
			rk.lone = true
		case undecided:
			if rk.open == nil {
				rk.open, rk.openVs, rk.openNear, rk.openMore = g, r, r.Nearness(), moreRounds(rule, r)
			}
			rk.openNear = min(rk.openNear, r.Nearness())
			rk.openDecide = max(rk.openDecide, toDecide(rule, r))
			rk.opens = append(rk.opens, g)
		case tied:
			rk.tied = append(rk.tied, g)
			rk.vs = r
		case decided:
			if i == 0 {
				rk.vs = r
			}
		}
	}
	return rk
}

// moreRounds says what would decide an open ratio r: about how many rounds in all, at the spread
// its rounds showed and if it holds (interval.Rule.RoundsToDecide), so that a user who wants
// the answer knows what to ask for, or that no practical number would do.
// The count is in interval.DecideText's words, which knob effects and reproduce's rows use too.
func moreRounds(rule interval.Rule, r interval.Ratio) string {
	n := toDecide(rule, r)
	if n > interval.DecideLimit {
		return interval.DecideText(n) + " at the spread of these rounds: the two are nearer than this machine's noise resolves in practice"
	}
	return interval.DecideText(n) + " at the spread of these rounds, if the ratio holds"
}

// toDecide is rule.DecideCount(r), as Open.ToDecide counts it.
func toDecide(rule interval.Rule, r interval.Ratio) int { return rule.DecideCount(r) }

// tiePick names a tie and records the tied variants on d.
func tiePick(d *decision, tied []*group) {
	names := make([]string, len(tied))
	for i, g := range tied {
		names[i] = g.V.Name
		d.Tied = append(d.Tied, g.V)
	}
	d.Pick = "tie: " + strings.Join(names, " ≈ ")
}

// verdict fills d's pick from a ranking of two or more groups, the same way for fixed runs and
// ramps: no verdict from single runs; undecided when an interval reaches both sides of 1 beyond
// the equivalence margin; a tie when every interval against the best lies within the margin;
// else the best with its ratio over the runner-up. lead describes the best, other another group, and
// detail adds figures to a decided pick.
func verdict(d *decision, rk ranking, lead string, other func(*group) string, detail func(best, second *group) string) {
	best, second := rk.ranked[0], rk.ranked[1]
	switch {
	case rk.lone:
		d.Pick, d.Lead = "unconfirmed: "+best.V.Name+" leads", best.V
		d.Why = fmt.Sprintf("%s vs %s; a single run measures no noise, so no verdict: run with --repeat 3 or more for an interval",
			lead, other(second)) + rk.suffix
	case rk.open != nil:
		d.Pick, d.Lead = "undecided: "+best.V.Name+" leads", best.V
		d.Why = fmt.Sprintf("%s vs %s%s: ratio %s (%s, %s) includes 1 and reaches beyond ±%s: neither faster nor equal is shown; %s",
			lead, other(rk.open), mediansBehind(best, rk.open), rk.openVs, rk.openVs.LevelText(), rk.openVs.Basis(), fmtPct(equivalenceMargin), rk.openMore) + rk.suffix
	case len(rk.tied) > 1:
		tiePick(d, rk.tied)
		others := make([]string, 0, len(rk.tied)-1)
		for _, g := range rk.tied[1:] {
			others = append(others, other(g))
		}
		d.Why = fmt.Sprintf("%s vs %s: ratio %s lies within ±%s (%s, %s)", lead, strings.Join(others, ", "),
			rk.vs, fmtPct(equivalenceMargin), rk.vs.LevelText(), rk.vs.Basis()) + rk.suffix
	default:
		d.Pick, d.Winner = fmt.Sprintf("%s, %s, %s", best.V.Name, rk.vs, rk.vs.Basis()), best.V
		d.Why = fmt.Sprintf("%s vs %s, %s", lead, other(second), detail(best, second)) + rk.suffix
	}
}

// mediansBehind explains a leader whose median figure is the lower one: the row shows medians,
// as the tables do, while the leader and the ratio come from the rounds' geometric means, and a
// reader seeing "postgres leads" beside 72,632 vs 76,070 would otherwise read a contradiction.
func mediansBehind(best, open *group) string {
	if best.TPS >= open.TPS {
		return ""
	}
	return fmt.Sprintf(" (medians; %s leads by the rounds' geometric mean, which the ratio compares)", best.V.Name)
}

// decide picks the engine for one workload from the groups measured at the same thread count.
func decide(rule interval.Rule, workload string, threads int, cands []*group) decision {
	d := decision{Workload: workload, UseCase: useCase(workload), Threads: threads}
	rk := rank(rule, cands)
	if len(rk.ranked) == 0 {
		d.Pick = "none (no complete result)"
		d.Why = "every run of this workload is incomplete" + rk.suffix
		return d
	}
	best := rk.ranked[0]
	if len(rk.ranked) == 1 {
		d.Pick, d.Winner = best.V.Name, best.V
		d.Why = fmt.Sprintf("only complete result: %s TPS, p95 %s ms", fmtRate(best.TPS), fmtMS(best.Lat.P95)) + rk.suffix
		return d
	}
	verdict(&d, rk, fmtRate(best.TPS)+" TPS",
		func(g *group) string { return fmt.Sprintf("%s (%s)", fmtRate(g.TPS), g.V.Name) },
		func(best, second *group) string {
			return fmt.Sprintf("p95 %s ms vs %s ms", fmtMS(best.Lat.P95), fmtMS(second.Lat.P95))
		})
	return d
}

// decideRamp picks the engine for one workload from its ramp runs. Each engine saturates at its
// own thread count, so the ramps are ranked by throughput at the saturation point, and never
// against fixed-thread runs, which measured something else.
func decideRamp(rule interval.Rule, workload string, cands []*group) decision {
	d := decision{Workload: workload + " (ramp)", UseCase: useCase(workload), Ramp: true}
	// A ramp that recorded no saturation point has no figure to rank.
	var withPoint []*group
	var noPoint []string
	for _, g := range cands {
		if g.Ramp != nil && g.Ramp.SaturationThreads > 0 {
			withPoint = append(withPoint, g)
		} else {
			noPoint = append(noPoint, g.V.Name)
		}
	}
	rk := rank(rule, withPoint)
	if len(noPoint) > 0 {
		rk.suffix += "; " + joinAnd(noPoint) + " not ranked (no saturation point)"
	}
	if len(rk.ranked) == 0 {
		d.Pick = "none (no complete result)"
		d.Why = "no complete ramp of this workload has a saturation point" + rk.suffix
		return d
	}
	best := rk.ranked[0]
	d.Threads = best.Threads
	lead := fmt.Sprintf("saturates at %s with %s TPS", threadsText(best.Threads), fmtRate(best.TPS))
	if len(rk.ranked) == 1 {
		d.Pick, d.Winner = best.V.Name, best.V
		d.Why = "only complete ramp: " + lead + ", p99 " + fmtMS(best.Lat.P99) + " ms" + rk.suffix
		return d
	}
	verdict(&d, rk, lead,
		func(g *group) string {
			return fmt.Sprintf("%s (%s at %s)", fmtRate(g.TPS), g.V.Name, threadsText(g.Threads))
		},
		func(best, second *group) string {
			return fmt.Sprintf("p99 there %s ms vs %s ms", fmtMS(best.Lat.P99), fmtMS(second.Lat.P99))
		})
	return d
}

// decisions gives one row per workload with fixed-thread runs, one more per workload with ramp
// runs and one per TPC-H comparison.
func (m *model) decisions() []decision {
	var out []decision
	for _, w := range m.CapacityWorkloads { // the answer an application's owner asks first
		gs := m.capacityGroupsFor(w)
		d := decideCapacity(m.rule, w, gs)
		d.Why += busyNote(gs)
		out = append(out, d)
	}
	for _, w := range m.AllWorkloads {
		if len(m.Threads[w]) > 0 {
			t := m.Headline[w]
			var cands []*group
			for _, v := range m.variantsFor(w) {
				if g := m.group(v, w, t); g != nil {
					cands = append(cands, g)
				}
			}
			d := decide(m.rule, w, t, cands)
			d.Why += busyNote(cands)
			out = append(out, d)
			out = append(out, upgrades(m.rule, w, t, cands)...)
		}
		if gs := m.rampGroupsFor(w); len(gs) > 0 {
			d := decideRamp(m.rule, w, gs)
			d.Why += busyNote(gs)
			out = append(out, d)
		}
		for _, s := range m.tpchSetsFor(w) {
			out = append(out, decideTPCH(m.rule, s))
		}
	}
	return append(out, m.resourceDecisions()...)
}

// busyNote says, beside a pick, which of its runs shared the machine with other work (their
// others' CPU above machineload.BusyPct on average, or another fairbench's servers running): a
// pick drawn from them is weak evidence.
func busyNote(cands []*group) string {
	var busy, shared []string
	for _, g := range cands {
		worst, other := 0.0, false
		for _, r := range g.Used {
			if r.Machine != nil && r.Machine.Busy {
				worst = max(worst, r.Machine.OthersCPUPctMean)
				other = other || len(r.Machine.OtherFairbench) > 0
			}
		}
		if worst > 0 {
			busy = append(busy, fmt.Sprintf("%s %s", g.V.Name, fmtPct(worst/100)))
		}
		if other {
			shared = append(shared, g.V.Name)
		}
	}
	var notes []string
	if len(busy) > 0 {
		notes = append(notes, "other processes used the CPU ("+strings.Join(busy, ", ")+" of the machine)")
	}
	if len(shared) > 0 {
		notes = append(notes, "another fairbench ran servers on this machine ("+strings.Join(shared, ", ")+")")
	}
	again, stolen, limit := stealCounts(cands)
	if stolen != "" {
		notes = append(notes, "the hypervisor stole more than "+fmtPct(limit/100)+" of the machine, however often measured again ("+stolen+")")
	}
	text := ""
	if again != "" {
		text = "; measured again after a window the hypervisor stole more than " + fmtPct(limit/100) + " of the machine from: " + again
	}
	if len(notes) == 0 {
		return text
	}
	return text + "; ⚠ measured while " + strings.Join(notes, " and ") + ": weak evidence, rerun on a quiet machine"
}

// stealCounts says, per candidate, how many of its rounds compare measured again for steal
// ("postgres 3 of 12 rounds"), in how many even the last try was stolen from, and the limit the
// results recorded.
func stealCounts(cands []*group) (again, stolen string, limit float64) {
	var a, s []string
	for _, g := range cands {
		n, last := 0, 0
		for _, r := range g.Used {
			if r.Machine == nil || len(r.Machine.SetAside) == 0 {
				continue
			}
			n++
			limit = r.Machine.StealLimitPct
			if r.Machine.StealPctMean > limit {
				last++
			}
		}
		if n > 0 {
			a = append(a, fmt.Sprintf("%s %d of %d rounds", g.V.Name, n, len(g.Used)))
		}
		if last > 0 {
			s = append(s, fmt.Sprintf("%s %d of %d rounds", g.V.Name, last, len(g.Used)))
		}
	}
	return strings.Join(a, ", "), strings.Join(s, ", "), limit
}

// upgrades gives, for every engine with two or more releases in the comparison, one row per
// step from an older release to the next newer one: what the upgrade changed on this workload,
// judged by the interval of the ratio newer/older, as the engine picks are.
func upgrades(rule interval.Rule, workload string, threads int, cands []*group) []decision {
	var out []decision
	for i, older := range cands {
		for _, newer := range cands[i+1:] {
			if newer.V.Kind != older.V.Kind || newer.V.Label != older.V.Label || newer.V.Engine == older.V.Engine || newer.V.Alias != "" || older.V.Alias != "" {
				continue
			}
			out = append(out, upgrade(rule, workload, threads, older, newer))
			break // the next step starts from newer
		}
	}
	return out
}

func upgrade(rule interval.Rule, workload string, threads int, older, newer *group) decision {
	d := decision{Workload: workload, Threads: threads,
		UseCase: "Upgrade " + older.V.Name + " → " + newer.V.Name}
	if older.Incomplete || newer.Incomplete || older.TPS <= 0 {
		d.Pick = "not measured (incomplete run)"
		d.Why = "an upgrade is only judged on complete runs of both releases"
		return d
	}
	change := (newer.TPS - older.TPS) / older.TPS
	figures := fmt.Sprintf("%s TPS vs %s at %s, p95 %s ms vs %s ms", fmtRate(newer.TPS), fmtRate(older.TPS), threadsText(threads),
		fmtMS(newer.Lat.P95), fmtMS(older.Lat.P95))
	sign, word := "+", "faster"
	if change < 0 {
		sign, word = "−", "slower"
	}
	moved := sign + fmtPct(math.Abs(change))
	x, y := paired(newer, older)
	r, ok := rule.Of(x, y, true)
	switch {
	case !ok:
		d.Pick = "unconfirmed: " + moved + " TPS"
		d.Why = figures + "; a single run measures no noise, so no verdict: run with --repeat 3 or more for an interval"
	case withinMargin(r):
		d.Pick = "no change"
		d.Why = fmt.Sprintf("%s: ratio %s lies within ±%s (%s, %s)", figures, r, fmtPct(equivalenceMargin), r.LevelText(), r.Basis())
	case !r.Excludes(1):
		d.Pick = "undecided: " + moved + " TPS"
		d.Why = fmt.Sprintf("%s: ratio %s (%s, %s) includes 1 and reaches beyond ±%s; %s", figures, r,
			r.LevelText(), r.Basis(), fmtPct(equivalenceMargin), moreRounds(rule, r))
	default:
		d.Pick = fmt.Sprintf("%s TPS (%s), %s, %s", moved, word, r, r.Basis())
		d.Why = figures
	}
	return d
}

// Open is a throughput pick that its rounds leave undecided, for compare's rounds until
// decided: the workload as the results name it (result.WorkloadID), the thread count the pick is
// made at, and the engines in question (the leader and each engine it is not yet placed
// against, as result.Engine.Name gives them). An engine already shown slower, or equal, needs
// no more rounds.
type Open struct {
	Workload string
	Threads  int
	Engines  []string
	// Knob, where set, is an --explain knob whose effect on the workload is open: its engine's
	// plain run and the run with the knob flipped both run again.
	Knob string
	// Rounds is how many rounds the pick's interval can use now (each in question paired with
	// the leader's), 0 where not known. A round an engine lost (stolen from, failed) leaves its
	// pick short of the round count compare has run, and the plan's next look is reached with
	// fewer added rounds than that count alone would ask for.
	Rounds int
	// Nearness is how near the pick is to a decision (interval.Ratio.Nearness of its least
	// decided interval; 0 for a knob's effect): compare gives its last rounds to the nearest
	// picks when the budget cannot hold every open pick's.
	Nearness float64
	// ToDecide is about how many rounds in all would decide the pick at the spread its rounds
	// showed (interval.Rule.RoundsToDecide), more than interval.DecideLimit when no practical
	// number would, 0 where not known.
	ToDecide int
}

// OpenPicks lists the fixed-thread picks of in that more rounds could decide, and the --explain
// knob effects (Open.Knob). Variants with a label (a core count) are left out: their runs are
// not compare's plain rounds.
func OpenPicks(in *Input) []Open {
	m := newModel(in)
	var out []Open
	for _, w := range m.Workloads {
		var cands []*group
		for _, v := range m.variantsFor(w) {
			if g := m.group(v, w, m.Headline[w]); g != nil && v.Label == "" {
				cands = append(cands, g)
			}
		}
		rk := rank(m.rule, cands)
		if len(rk.opens) == 0 || rk.lone {
			continue
		}
		vs := []*variant{rk.ranked[0].V}
		rounds := 0
		for _, g := range rk.opens {
			vs = append(vs, g.V)
			x, _ := paired(rk.ranked[0], g)
			rounds = fewestRounds(rounds, len(x))
		}
		out = addOpen(out, Open{Workload: w, Threads: m.Headline[w], Rounds: rounds, Nearness: rk.openNear, ToDecide: rk.openDecide}, vs)
	}
	// A workload's disk writes per transaction is a pick of its own: its open engines run the
	// workload's step again as well.
	for _, d := range m.resourceDecisions() {
		if len(d.Open) > 0 && slices.Contains(m.Workloads, d.Workload) {
			out = addOpen(out, Open{Workload: d.Workload, Threads: m.Headline[d.Workload], Rounds: d.OpenRounds, Nearness: d.OpenNearness, ToDecide: d.OpenDecide}, d.Open)
		}
	}
	return append(out, m.openKnobs()...)
}

// addOpen adds the plain variants of vs to the open pick of o's workload, or a new one.
func addOpen(out []Open, o Open, vs []*variant) []Open {
	i := slices.IndexFunc(out, func(p Open) bool { return p.Workload == o.Workload && p.Knob == "" })
	if i < 0 {
		out, i = append(out, o), len(out)
	}
	out[i].Rounds = fewestRounds(out[i].Rounds, o.Rounds)
	if o.Nearness < out[i].Nearness { // one step decides both picks only when the less near does
		out[i].Nearness = o.Nearness
	}
	out[i].ToDecide = max(out[i].ToDecide, o.ToDecide)
	for _, v := range vs {
		if v.Label == "" && !slices.Contains(out[i].Engines, v.Engine) {
			out[i].Engines = append(out[i].Engines, v.Engine)
		}
	}
	return out
}

// fewestRounds is the smaller of two round counts, 0 standing for one not known.
func fewestRounds(a, b int) int {
	if a == 0 || (b != 0 && b < a) {
		return b
	}
	return a
}

// rankFigure orders candidates: the geometric mean of the rounds' figures, which is what the
// ratio's estimate compares, or the median where there are no positive figures.
func rankFigure(g *group) float64 {
	if gm := interval.GeoMean(g.Samples); gm > 0 {
		return gm
	}
	return g.TPS
}

// roundsText says how the comparison chose its rounds, where it ran rounds until decided: the
// minimum, the plan's looks, the budget and what stopped it, and what each added round ran.
func (m *model) roundsText() string {
	if m.Env == nil || m.Env.Rounds == nil {
		return ""
	}
	r := m.Env.Rounds
	looks := []string{}
	for n, k := r.MinRounds, 0; k < 4; n, k = m.rule.NextLook(n), k+1 {
		looks = append(looks, strconv.Itoa(n))
	}
	text := fmt.Sprintf("Rounds until decided: every step ran %d rounds; a pick still open then got more rounds, only its step and the engines in question, judged at looks after %s, … rounds, look k at a 1 − %.0f%%/2^k level, so that the chance of any false pick over every look stays within %.0f%% (docs/decisions.md). Budget %s, spent %s; ",
		r.MinRounds, strings.Join(looks, ", "), 100*(1-interval.Confidence), 100*(1-interval.Confidence),
		time.Duration(r.BudgetS*float64(time.Second)).Round(time.Second), time.Duration(r.SpentS*float64(time.Second)).Round(time.Second))
	switch {
	case r.Stopped == "decided":
		text += "every pick was decided."
	case r.Stopped == "budget":
		text += "stopped by the budget: the next look's rounds would not have fitted."
	default:
		text += "stopped: " + r.Stopped + "."
	}
	if len(r.Added) > 0 {
		byRound := make([]string, len(r.Added))
		for i, a := range r.Added {
			byRound[i] = fmt.Sprintf("round %d: %s on %s", a.Round, strings.Join(a.Workloads, ", "), strings.Join(a.Engines, ", "))
			if len(a.Knobs) > 0 {
				byRound[i] += " (and with " + strings.Join(a.Knobs, ", ") + " flipped)"
			}
			if len(a.Deferred) > 0 {
				byRound[i] += " (the budget held only the picks nearest a decision: " + joinAnd(a.Deferred) + " waited)"
			}
		}
		text += " Added: " + strings.Join(byRound, "; ") + "."
	}
	return text
}

// leftOut names, for each ranked group, the rounds that did not feed its pick and why: a run
// marked incomplete (a server that froze, a failed data check), one that measured too little, or
// one still stolen from after compare's tries.
func leftOut(groups []*group) string {
	var parts []string
	for _, g := range groups {
		if g.IncompleteRuns == 0 {
			continue
		}
		var rounds []string
		for i, r := range result.ByStart(g.Runs) {
			if slices.Contains(g.Used, r) {
				continue
			}
			why := "incomplete"
			switch {
			case r.Error != "":
				why += ": " + firstLineOf(r.Error)
			case stillStolen(r):
				why = fmt.Sprintf("the hypervisor stole %s of the machine, however often measured again", fmtPct(r.Machine.StealPctMean/100))
			case r.Complete:
				why = "too little measured"
			}
			n := i + 1
			if r.Round > 0 {
				n = r.Round
			}
			rounds = append(rounds, fmt.Sprintf("round %d (%s)", n, why))
		}
		parts = append(parts, fmt.Sprintf("%s's %s left out of the pick", g.V.Name, joinAnd(rounds)))
	}
	if len(parts) == 0 {
		return ""
	}
	return "; " + strings.Join(parts, "; ")
}

func firstLineOf(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	if len(line) > 120 {
		line = line[:117] + "..."
	}
	return line
}
