package report

import (
	"fmt"
	"math"
	"sort"

	"github.com/fairbench/fairbench/internal/document"
	"github.com/fairbench/fairbench/internal/result"
)

// capturedShown is how many transactions of a captured workload the report lists, the source's
// most frequent first.
const capturedShown = 10

// replayMix is one engine's replay of a captured workload: each transaction's share of the
// transactions run and of the clients' time (count × mean latency), over the headline runs.
func replayMix(g *group) (calls, time map[string]float64) {
	if g == nil {
		return nil, nil
	}
	calls, time = map[string]float64{}, map[string]float64{}
	var n, ms float64
	for _, r := range g.Used {
		for kind, k := range r.ByKind {
			calls[kind] += float64(k.Transactions)
			time[kind] += float64(k.Transactions) * k.LatencyMS.Avg
			n += float64(k.Transactions)
			ms += float64(k.Transactions) * k.LatencyMS.Avg
		}
	}
	for kind := range calls {
		calls[kind] = 100 * calls[kind] / max(n, 1)
		time[kind] = 100 * time[kind] / max(ms, 1e-9)
	}
	return calls, time
}

// sourceMix is the captured workload's source shares, from the first run that recorded them.
func sourceMix(gs []*group) []result.SourceShare {
	for _, g := range gs {
		if g == nil {
			continue
		}
		for _, r := range g.Used {
			if r.Dataset != nil && len(r.Dataset.SourceMix) > 0 {
				mix := append([]result.SourceShare(nil), r.Dataset.SourceMix...)
				sort.SliceStable(mix, func(i, j int) bool { return mix[i].CallsPct > mix[j].CallsPct })
				return mix
			}
		}
	}
	return nil
}

// capturedSection is "A captured workload beside its source": for a workload captured from a
// server's statistics (fairbench capture), each transaction's share of the source's calls and
// server time beside its share of each engine's transactions and of its clients' time. The calls
// follow the weights, so they agree but for chance; the time shows where each engine spends it
// differently from the source.
func (m *model) capturedSection() *document.Section {
	header := []string{"Workload", "Transaction", "source: calls", "source: server time"}
	numeric := []bool{false, false, true, true}
	for _, v := range m.Variants {
		header = append(header, v.Name+": calls", v.Name+": clients' time")
		numeric = append(numeric, true, true)
	}
	t := &document.Table{Header: header, Numeric: numeric}
	var foot []string
	for _, w := range m.Workloads {
		gs := m.headlineGroups(w)
		mix := sourceMix(gs)
		if mix == nil {
			continue
		}
		calls := make([]map[string]float64, len(gs))
		times := make([]map[string]float64, len(gs))
		for i, g := range gs {
			calls[i], times[i] = replayMix(g)
		}
		worst := make([]float64, len(gs))
		for j, s := range mix {
			row := []string{w, s.Transaction, document.Fixed(s.CallsPct, 1) + "%", document.Fixed(s.TimePct, 1) + "%"}
			for i := range gs {
				if calls[i] == nil {
					row = append(row, "—", "—")
					continue
				}
				worst[i] = math.Max(worst[i], math.Abs(calls[i][s.Transaction]-s.CallsPct))
				row = append(row, document.Fixed(calls[i][s.Transaction], 1)+"%", document.Fixed(times[i][s.Transaction], 1)+"%")
			}
			if j < capturedShown {
				t.Rows = append(t.Rows, document.Row(row...))
			}
		}
		for i, g := range gs {
			if g != nil {
				foot = append(foot, fmt.Sprintf("%s on %s: calls within %s points of the source's.", w, m.Variants[i].Name, document.Fixed(worst[i], 1)))
			}
		}
	}
	if len(t.Rows) == 0 {
		return nil
	}
	t.Foot = foot
	return &document.Section{ID: "captured", Heading: "A captured workload beside its source",
		Paras: []string{"For a workload captured from a server's statistics (fairbench capture): each transaction's share of the " +
			"source's transactions and server time (from the workload file), beside its share of each engine's transactions and of its " +
			"clients' time (transactions × mean latency) in the headline runs. The calls follow the file's weights, so they agree " +
			"but for chance; the time shows where an engine spends it otherwise than the source did. Statements capture saw in one " +
			"source transaction run as one transaction; a statement it never saw beside another runs alone in autocommit, so its " +
			"share of the time includes a commit the source may have shared with others."},
		Tables: []*document.Table{t}}
}
