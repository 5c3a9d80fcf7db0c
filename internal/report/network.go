package report

import (
	"fmt"

	"github.com/fairbench/fairbench/internal/document"
)

// networkSection shows, for runs whose clients sat at a simulated distance (compare
// --network), how much of the latency the round trips explain: round trips per transaction
// times the added round trip, over the average latency. Near 100% means the distance, not the
// server, decided the figure, as in the payments study's WiFi runs.
func (m *model) networkSection() *document.Section {
	t := &document.Table{
		Header:  []string{"engine", "workload", "client hosts", "added rtt ms", "delay by", "round trips / txn", "avg latency ms", "explained by round trips"},
		Numeric: []bool{false, false, true, true, false, true, true, true},
		Foot: []string{"Explained = round trips per transaction × added rtt / average latency: the share of each transaction's time " +
			"spent crossing the simulated distance. netem is the kernel's delay; relay is fairbench's forwarder on the bridge " +
			"(where the kernel has no netem), holding each direction for half the round trip."},
	}
	for _, r := range m.Results {
		n := r.Network
		if n == nil {
			continue
		}
		rt, explained := "-", "-"
		if w := r.Wire; w != nil {
			rt = document.Fixed(w.RoundTripsPerTxn, 2)
			if r.LatencyMS.Avg > 0 && n.RTTMS > 0 {
				explained = fmtPct(w.RoundTripsPerTxn * n.RTTMS / r.LatencyMS.Avg)
			}
		}
		t.Rows = append(t.Rows, []document.Cell{{Text: r.Engine.Kind}, {Text: r.WorkloadID()}, {Text: fmt.Sprint(n.Hosts)},
			{Text: fmtTrim(n.RTTMS)}, {Text: n.Mechanism}, {Text: rt}, {Text: fmtMS(r.LatencyMS.Avg)}, {Text: explained}})
	}
	if len(t.Rows) == 0 {
		return nil
	}
	return &document.Section{ID: "network", Heading: "Network distance", Tables: []*document.Table{t}}
}
