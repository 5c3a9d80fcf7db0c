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

func (m *model) knobSection() *document.Section {
	runs := map[knobKey][]*result.Result{}
	var keys []knobKey
	knobOrder := map[string]int{}
	for _, r := range m.Explain {
		if r.Ramp != nil || r.TPCH != nil || r.Threads != m.Headline[r.WorkloadID()] {
			continue
		}
		k := knobKey{strings.Join(r.Flipped, "+"), r.Engine.Kind, r.WorkloadID(), r.Threads}
		if _, ok := knobOrder[k.knob]; !ok {
			knobOrder[k.knob] = len(knobOrder)
		}
		if runs[k] == nil {
			keys = append(keys, k)
		}
		runs[k] = append(runs[k], r)
	}
	if len(keys) == 0 {
		return nil
	}
	sort.SliceStable(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		switch {
		case a.knob != b.knob:
			return knobOrder[a.knob] < knobOrder[b.knob]
		case a.kind != b.kind:
			return lessKind(a.kind, b.kind)
		}
		return lessWorkload(a.workload, b.workload)
	})
	t := &document.Table{
		Header:  []string{"Knob", "Engine", "Settings flipped", "Workload", "Threads", "TPS as compared", "TPS flipped", "Effect"},
		Numeric: []bool{false, false, false, false, true, true, true, true},
	}
	for _, k := range keys {
		t.Rows = append(t.Rows, m.knobRow(k, runs[k]))
	}
	t.Foot = []string{"Each row is one engine run again with that one knob flipped from the comparison's profile, everything else equal; TPS is the median of complete runs at the thread count the comparison's tables use. Effect is flipped over compared, minus one, with its 95% interval from the repeats (each flipped run paired with the run it followed); within noise when the interval includes no change, and shown as noise when the repeats place it on the side the knob's physics rules out (durable commit turned off cannot make an engine slower). Each flipped run follows its engine's own run directly; an effect on a workload the knob cannot touch (the binary log on read-only work) shows how much the machine itself moved between the two."}
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
	var base *group
	for _, v := range m.Variants {
		if v.Kind == k.kind && v.Label == "" {
			base = m.group(v, k.workload, k.threads)
		}
	}
	baseTxt, effect := "—", "—"
	var changed string
	if base != nil {
		baseTxt = fmtRate(base.TPS)
		if base.Rep != nil && base.Rep.Server != nil && runs[0].Server != nil {
			changed = settingsChange(base.Rep.Server.Profile, runs[0].Server.Profile)
		}
		if base.TPS > 0 {
			effect = interval.EffectOf(flipped, base.Samples, runs[0].FlipExpect).String()
		}
	}
	return []document.Cell{{Text: k.knob, Head: true}, {Text: k.kind}, {Text: orDash(changed)}, {Text: k.workload},
		{Text: fmtInt(int64(k.threads))}, {Text: baseTxt}, {Text: fmtRate(median(flipped)), Incomplete: !complete}, {Text: effect}}
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
