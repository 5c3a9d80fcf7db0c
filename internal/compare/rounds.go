package compare

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/fairbench/fairbench/internal/interval"
	"github.com/fairbench/fairbench/internal/report"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/suite"
)

// Rounds until decided. After the suite's rounds (the minimum), the picks that are still open
// get more rounds: only their steps, only the engines in question, the engine order rotated as
// before, until every pick is decided or the next look's rounds would not fit in the budget.
// The looks and the error each may spend are interval.Sequential's, fixed before the first
// round; the report judges every pick at the look its rounds reached.

// UntilDecided says whether o runs rounds until decided.
func (o *Options) UntilDecided() bool { return o.Budget > 0 }

// MinimumTime is what the suite's own rounds take on insts, measured windows only: the least a
// budget must allow. Starting servers and loading data come on top.
func MinimumTime(o *Options, insts []Contender) time.Duration {
	runs := len(insts)*max(1, len(o.ServerCPUs)) + len(explainRuns(o.Explain, insts))
	return o.Suite.Estimate() * time.Duration(runs)
}

// DefaultBudget is the budget when neither the command line nor the suite gives one: the suite's
// own rounds' time again, for the open picks' rounds.
func DefaultBudget(o *Options, insts []Contender) time.Duration {
	return 2 * MinimumTime(o, insts)
}

// CheckBudget refuses, before any server starts, a budget that cannot hold the suite's own
// rounds, or rounds until decided where they cannot be added.
func CheckBudget(o *Options, insts []Contender) error {
	if o.Budget <= 0 {
		return nil
	}
	switch {
	case o.Suite.Repeat < 2:
		return fmt.Errorf("--budget %s needs at least 2 rounds to measure noise, and the suite runs %d: give --repeat 3 or more, or --budget 0", o.Budget, o.Suite.Repeat)
	case len(o.ServerCPUs) > 1:
		return fmt.Errorf("--budget %s adds rounds to plain comparisons, and --server-cpus %d sweeps core counts: give --budget 0", o.Budget, len(o.ServerCPUs))
	}
	if least := MinimumTime(o, insts); o.Budget < least {
		return fmt.Errorf("--budget %s is less than the suite's own %d rounds take (%s measured on %d engines, before servers start and data loads): give at least %s, or --budget 0 for the rounds alone",
			o.Budget, o.Suite.Repeat, least, len(insts), (2 * least).Round(time.Minute))
	}
	return nil
}

// costs are what the rounds so far took, to tell whether the next look's rounds fit.
type costs struct {
	// overhead is an engine's last round outside its steps: start, load, fingerprint, stop.
	overhead map[string]time.Duration
	// step is an engine's last run of a step, by engine name and step key.
	step map[string]time.Duration
}

func stepKey(st suite.Resolved) string { return st.Workload + "\x00" + st.Name }

// openRound is what one added round runs: per engine name, the steps (by key) and the thread
// count of each; and per engine name and --explain knob, the steps its flipped profile runs
// beside the engine's own (whose steps include them: an effect is judged against the engine's
// run of the same round).
type openRound struct {
	steps map[string]map[string]int
	knobs map[string]map[string]map[string]int
}

// add puts a step at threads into the engine's round, and into its flipped run of knob where
// knob is set.
func (r openRound) add(engine, knob, key string, threads int) {
	if r.steps[engine] == nil {
		r.steps[engine] = map[string]int{}
	}
	r.steps[engine][key] = threads
	if knob == "" {
		return
	}
	if r.knobs[engine] == nil {
		r.knobs[engine] = map[string]map[string]int{}
	}
	if r.knobs[engine][knob] == nil {
		r.knobs[engine][knob] = map[string]int{}
	}
	r.knobs[engine][knob][key] = threads
}

// untilDecided adds rounds to the open picks after the suite's own rounds, recording in the
// environment what it did and why it stopped.
func (c *comparison) untilDecided(ctx context.Context, insts []Contender) error {
	o := c.opts
	plan := &result.Rounds{Rule: "sequential", MinRounds: o.Suite.Repeat, BudgetS: o.Budget.Seconds()}
	c.env.Rounds = plan
	defer func() { plan.SpentS = time.Since(c.started).Seconds() }()
	rule := interval.Sequential(o.Suite.Repeat)
	for n := o.Suite.Repeat; ; {
		picks, err := c.openPicks()
		if err != nil {
			return err
		}
		if len(picks) == 0 {
			plan.Stopped = "decided"
			c.logf("== every pick decided after %d rounds (%s)", n, time.Since(c.started).Round(time.Second))
			return nil
		}
		left := o.Budget - time.Since(c.started)
		fit := c.fitting(picks, rule, n, left)
		if len(fit) == 0 {
			all := c.roundFor(picks, rule, n)
			plan.Stopped = "budget"
			c.logf("== budget: %s open after %d rounds; the %d rounds to the next look need about %s, %s left", strings.Join(all.names, ", "), n, all.toLook, c.need(all).Round(time.Second), left.Round(time.Second))
			c.logToDecide(picks, rule, n)
			return nil
		}
		r := c.roundFor(fit, rule, n)
		deferred := deferredPicks(picks, fit)
		if len(deferred) > 0 {
			c.logf("== the budget (%s left) holds the next look of %d of the %d open picks: the nearest to a decision", left.Round(time.Second), len(fit), len(picks))
		}
		next := n + r.toLook
		c.logf("== rounds %d-%d for the open picks: %s", n+1, next, strings.Join(r.names, ", "))
		for rep := n + 1; rep <= next; rep++ {
			if err := c.addedRound(ctx, insts, r.round, rep); err != nil {
				if errors.Is(err, context.Canceled) {
					plan.Stopped = "interrupted"
				} else {
					plan.Stopped = "failed: " + err.Error()
				}
				return err
			}
			added := addedRecord(r.round, rep, c.steps)
			added.Deferred = deferred
			plan.Added = append(plan.Added, added)
		}
		n = next
	}
}

// openPicks asks the report which picks the results so far leave open, keeping those compare
// can run again (a step of this suite).
func (c *comparison) openPicks() ([]report.Open, error) {
	in, err := report.Load(c.opts.OutDir)
	if err != nil {
		return nil, err
	}
	in.Environment = c.env // the plan, which environment.json does not hold yet
	var out []report.Open
	for _, p := range report.OpenPicks(in) {
		if _, ok := c.stepOf[p.Workload]; ok {
			out = append(out, p)
		}
	}
	return out, nil
}

// plannedRound is the round that would decide some open picks, their names for the log, and
// how many such rounds bring the nearest of them to the plan's next look.
type plannedRound struct {
	round  openRound
	names  []string
	toLook int
}

// roundFor plans the round for picks after n rounds: the look after n, except for a pick that
// lost rounds (an engine's round stolen from, or failed), whose interval has fewer and whose look
// is nearer. The picks are asked again after those rounds, so none runs past its look unjudged.
func (c *comparison) roundFor(picks []report.Open, rule interval.Rule, n int) plannedRound {
	r := plannedRound{round: openRound{steps: map[string]map[string]int{}, knobs: map[string]map[string]map[string]int{}}}
	for _, p := range picks {
		if p.Knob != "" {
			r.names = append(r.names, fmt.Sprintf("%s with %s flipped (%s)", p.Workload, p.Knob, strings.Join(p.Engines, ", ")))
		} else {
			r.names = append(r.names, fmt.Sprintf("%s (%s)", p.Workload, strings.Join(p.Engines, ", ")))
		}
		for _, e := range p.Engines {
			r.round.add(e, p.Knob, c.stepOf[p.Workload], p.Threads)
		}
		r.toLook = fewerToLook(r.toLook, rule, p.Rounds, n)
	}
	return r
}

// need is what a planned round's rounds to the look should take, with a margin: a look's rounds
// cost more than the engines' last ones now and then (a quick-suite run overran its 10 minutes by
// 14 s without it).
func (c *comparison) need(r plannedRound) time.Duration {
	return time.Duration(r.toLook) * c.roundCost(r.round) * 115 / 100
}

// fitting is the open picks whose rounds to their next look fit in left: all of them when they
// fit, else the nearest to a decision first (report.Open.Nearness), each added while the round
// still fits. A budget that cannot hold every pick's rounds is spent on those likeliest to decide
// rather than on none; the looks stay where the plan put them, so the error rule is unchanged.
func (c *comparison) fitting(picks []report.Open, rule interval.Rule, n int, left time.Duration) []report.Open {
	if c.need(c.roundFor(picks, rule, n)) <= left {
		return picks
	}
	byNear := slices.Clone(picks)
	slices.SortStableFunc(byNear, func(a, b report.Open) int { return cmp.Compare(b.Nearness, a.Nearness) })
	var fit []report.Open
	for _, p := range byNear {
		if try := append(slices.Clone(fit), p); c.need(c.roundFor(try, rule, n)) <= left {
			fit = try
		}
	}
	return fit
}

// deferredPicks names the open picks left out of fit, as the environment records them: a
// workload, and "with KNOB flipped" for a knob's effect.
func deferredPicks(picks, fit []report.Open) []string {
	var out []string
	for _, p := range picks {
		if slices.ContainsFunc(fit, func(f report.Open) bool { return f.Workload == p.Workload && f.Knob == p.Knob }) {
			continue
		}
		out = append(out, openName(p))
	}
	return out
}

// openName is an open pick as the environment and the log name it: a workload, and "with KNOB
// flipped" for a knob's effect.
func openName(p report.Open) string {
	if p.Knob != "" {
		return p.Workload + " with " + p.Knob + " flipped"
	}
	return p.Workload
}

// logToDecide says, of each pick the budget left open, about how many rounds in all would decide
// it at the spread its rounds showed (report.Open.ToDecide) and what they would take at this
// comparison's pace, and the budget that would hold them all: what to ask for next time, rather
// than a guess. The time is an upper bound, since an added round starts each engine once for all
// its open steps.
func (c *comparison) logToDecide(picks []report.Open, rule interval.Rule, n int) {
	total, holds := time.Since(c.started), true
	for _, p := range picks {
		have := roundsHad(p.Rounds, n)
		switch {
		case p.ToDecide == 0: // not known
			holds = false
			continue
		case p.ToDecide > interval.DecideLimit:
			c.logf("   %s: %s at the spread so far: the engines are nearer than this machine's noise resolves", openName(p), interval.DecideText(p.ToDecide))
			holds = false
			continue
		}
		more := max(0, p.ToDecide-have)
		cost := time.Duration(more) * c.roundCost(c.roundFor([]report.Open{p}, rule, n).round)
		total += cost
		c.logf("   %s: %s at the spread so far, %d more: about %s at this run's pace", openName(p), interval.DecideText(p.ToDecide), more, cost.Round(time.Second))
	}
	if holds {
		c.logf("   --budget %s would hold them all", total.Truncate(time.Minute)+time.Minute)
	}
}

// fewerToLook is the smaller of toLook (0: none yet) and the rounds a pick whose interval uses
// have of them (0: not known, taken as all n run) needs to reach the plan's next look.
func fewerToLook(toLook int, rule interval.Rule, have, n int) int {
	have = roundsHad(have, n)
	need := rule.NextLook(have) - have
	if toLook == 0 || need < toLook {
		return need
	}
	return toLook
}

// roundsHad is the rounds a pick's interval uses, of the n run: have, or n where have is not
// known (0) or not believable.
func roundsHad(have, n int) int {
	if have <= 0 || have > n {
		return n
	}
	return have
}

// roundCost is what one added round should take, from the engines' last rounds.
func (c *comparison) roundCost(round openRound) time.Duration {
	var d time.Duration
	cost := func(e string, steps map[string]int) {
		d += c.costs.overhead[e]
		for key := range steps {
			d += c.costs.step[e+"|"+key]
		}
	}
	for e, steps := range round.steps {
		cost(e, steps)
		for _, knobSteps := range round.knobs[e] {
			cost(e, knobSteps)
		}
	}
	return d
}

// addedRound runs round number rep: each engine in question, in the rotated order, on the open
// steps only.
func (c *comparison) addedRound(ctx context.Context, insts []Contender, round openRound, rep int) error {
	var in []Contender
	for _, inst := range insts {
		if round.steps[inst.Name()] != nil {
			in = append(in, inst)
		}
	}
	defer func() { c.only = nil }()
	for _, inst := range roundOrder(in, rep) {
		runs := []func() error{func() error {
			c.only = round.steps[inst.Name()]
			c.totalSteps += len(c.only)
			return c.engine(ctx, inst, rep, c.opts.Profile)
		}}
		knobs := round.knobs[inst.Name()]
		for _, knob := range slices.Sorted(maps.Keys(knobs)) {
			runs = append(runs, func() error {
				c.only = knobs[knob]
				c.totalSteps += len(c.only)
				return c.flipped(ctx, inst, rep, knob)
			})
		}
		if err := inTurn(runs, rep); err != nil {
			return err
		}
	}
	return nil
}

// addedRecord is the environment's line for an added round.
func addedRecord(round openRound, rep int, steps []suite.Resolved) result.AddedRound {
	a := result.AddedRound{Round: rep}
	seen := map[string]bool{}
	for e, keys := range round.steps {
		a.Engines = append(a.Engines, e)
		for _, st := range steps {
			if _, ok := keys[stepKey(st)]; ok && !seen[stepKey(st)] {
				seen[stepKey(st)] = true
				a.Workloads = append(a.Workloads, cmpName(st))
			}
		}
		for knob := range round.knobs[e] {
			if !slices.Contains(a.Knobs, knob) {
				a.Knobs = append(a.Knobs, knob)
			}
		}
	}
	slices.Sort(a.Engines)
	slices.Sort(a.Workloads)
	slices.Sort(a.Knobs)
	return a
}

// cmpName is a step as the log and the environment name it: its workload, and its name where it
// has one.
func cmpName(st suite.Resolved) string {
	if st.Name == "" {
		return st.Workload
	}
	return st.Workload + " (" + st.Name + ")"
}
