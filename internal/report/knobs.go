package report

import (
	"slices"
	"sort"
	"strings"

	"github.com/fairbench/fairbench/internal/document"
	"github.com/fairbench/fairbench/internal/interval"
	"github.com/fairbench/fairbench/internal/result"
)

// The knob section: compare --explain runs each engine again with one setting flipped; this
// section sets each flipped run's headline figure beside the comparison's own, so a reader can
// see how much of a gap one setting explains.

type knobKey struct {
	knob, kind, workload string
	threads              int
}

// knobRuns groups the flipped runs at each workload's headline thread count by knob, engine
// and workload.
func (m *model) knobRuns() map[knobKey][]*result.Result {
	runs := map[knobKey][]*result.Result{}
	for _, r := range m.Explain {
		if r.Ramp != nil || r.TPCH != nil || r.Threads != m.Headline[r.WorkloadID()] {
			continue
		}
		k := knobKey{strings.Join(r.Flipped, "+"), r.Engine.Kind, r.WorkloadID(), r.Threads}
		runs[k] = append(runs[k], r)
	}
	return runs
}

// knobKeys are knobRuns' keys in the report's order: knobs as first run, then engines and
// workloads in the report's order.
func (m *model) knobKeys() []knobKey {
	knobOrder := map[string]int{}
	for _, r := range m.Explain {
		if k := strings.Join(r.Flipped, "+"); knobOrder[k] == 0 {
			knobOrder[k] = len(knobOrder) + 1
		}
	}
	var keys []knobKey
	for k := range m.knobRuns() {
		keys = append(keys, k)
	}
	sort.SliceStable(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		switch {
		case a.knob != b.knob:
			return knobOrder[a.knob] < knobOrder[b.knob]
		case a.kind != b.kind:
			return lessKind(a.kind, b.kind)
		}
		if a.workload != b.workload {
			return lessWorkload(a.workload, b.workload)
		}
		return a.threads < b.threads
	})
	return keys
}

func (m *model) knobSection() *document.Section {
	runs, keys := m.knobRuns(), m.knobKeys()
	if len(keys) == 0 {
		return nil
	}
	t := &document.Table{
		Header:  []string{"Knob", "Engine", "Settings flipped", "Workload", "Threads", "TPS as compared", "TPS flipped", "Effect"},
		Numeric: []bool{false, false, false, false, true, true, true, true},
	}
	for _, k := range keys {
		t.Rows = append(t.Rows, m.knobRow(k, runs[k]))
	}
	t.Foot = []string{"Each row is one engine run again with that one knob flipped from the comparison's profile, everything else equal; TPS is the median of complete runs at the thread count the comparison's tables use. Effect is flipped over compared, minus one, with its interval from the rounds (each flipped run paired with its engine's own run of the same round; 95%, or under rounds until decided the look its rounds reached, as for the picks); none when the interval lies within ±5%, within noise when it includes no change and reaches further (more rounds would decide, and the cell says about how many in all), and shown as noise when the repeats place it on the side the knob's physics rules out (durable commit turned off cannot make an engine slower). Each flipped run runs beside its engine's own run of the round, after it in one round and before it in the next, so that what the second run of a pair meets does not always fall on the same side; an effect on a workload the knob cannot touch (the binary log on read-only work) shows how much the machine itself moved between the two."}
	return &document.Section{ID: "knobs", Heading: "Knob effects (--explain)", Tables: []*document.Table{t},
		Paras: []string{"Which setting explains a gap: the headline figure of each engine with one knob flipped, beside the comparison's."}}
}

func (m *model) knobRow(k knobKey, runs []*result.Result) []document.Cell {
	used := slices.DeleteFunc(slices.Clone(runs), func(r *result.Result) bool { return !r.Complete })
	complete := len(used) > 0
	if !complete {
		used = runs
	}
	flipped := inStartOrder(used, func(r *result.Result) float64 { return r.TPS })
	base := m.knobBase(k)
	baseTxt, effect := "—", "—"
	var changed string
	if base != nil {
		baseTxt = fmtRate(base.TPS)
		if base.Rep != nil && base.Rep.Server != nil && runs[0].Server != nil {
			changed = settingsChange(base.Rep.Server.Profile, runs[0].Server.Profile)
		}
		if base.TPS > 0 {
			effect = m.knobEffect(base, used).String()
		}
	}
	return []document.Cell{{Text: k.knob, Head: true}, {Text: k.kind}, {Text: orDash(changed)}, {Text: k.workload},
		{Text: fmtInt(int64(k.threads))}, {Text: baseTxt}, {Text: fmtRate(median(flipped)), Incomplete: !complete}, {Text: effect}}
}

// knobBase is the comparison's own group a knob row is set against: its engine's plain runs of
// the workload at the row's thread count.
func (m *model) knobBase(k knobKey) *group {
	var base *group
	for _, v := range m.Variants {
		if v.Kind == k.kind && v.Label == "" {
			base = m.group(v, k.workload, k.threads)
		}
	}
	return base
}

// knobEffect judges the flipped runs against the base runs of their rounds, under the
// comparison's rule: rounds added for other picks ran the base alone, so the pairs are found by
// round, not by position.
func (m *model) knobEffect(base *group, flipped []*result.Result) interval.Effect {
	f, b := result.PairByRound(flipped, base.Used)
	expect := 0
	if len(flipped) > 0 {
		expect = flipped[0].FlipExpect
	}
	tps := func(r *result.Result) float64 { return r.TPS }
	return m.rule.EffectOf(result.Figures(f, tps), result.Figures(b, tps), expect)
}

// openKnobs lists the knob effects of in that more rounds could decide, each as the engine
// whose plain and flipped runs of the workload would run again.
func (m *model) openKnobs() []Open {
	var out []Open
	runs := m.knobRuns()
	for _, k := range m.knobKeys() {
		base := m.knobBase(k)
		if base == nil || base.TPS <= 0 {
			continue
		}
		var flipped []*result.Result
		for _, r := range runs[k] {
			if r.Complete {
				flipped = append(flipped, r)
			}
		}
		if e := m.knobEffect(base, flipped); e.Open() {
			out = append(out, Open{Workload: k.workload, Threads: k.threads, Engines: []string{base.V.Engine}, Knob: k.knob, ToDecide: e.ToDecide})
		}
	}
	return out
}

// settingsChange lists the settings that differ between two applied profiles: "log_bin OFF → ON".
func settingsChange(from, to map[string]string) string {
	keys := map[string]bool{}
	for k := range from {
		keys[k] = true
	}
	for k := range to {
		keys[k] = true
	}
	var parts []string
	for _, k := range sortedStrings(keys) {
		a, b := from[k], to[k]
		if a != b {
			parts = append(parts, k+" "+orDefault(a)+" → "+orDefault(b))
		}
	}
	return strings.Join(parts, ", ")
}

func orDefault(v string) string {
	if v == "" {
		return "(default)"
	}
	return v
}
