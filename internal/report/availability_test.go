package report

import (
	"strings"
	"testing"

	"github.com/fairbench/fairbench/internal/result"
)

// availabilityFixture: galera with a node killed at 20 s (clients reconnected, nothing lost) and
// postgres-ha whose failover lost acknowledged transactions, beside a quiet single server.
func availabilityFixture(t testing.TB) *Input {
	t.Helper()
	in := &Input{}
	for i, s := range []runSpec{{kind: "mariadb", version: mariadbVersion, tps: 900}, {kind: "galera", version: mariadbVersion, tps: 610},
		{kind: "postgres-ha", version: pgVersion, tps: 880}} {
		s.workload, s.threads, s.complete, s.seed = "payments", 8, true, int64(i+1)
		r := makeResult(t, s)
		r.Availability = &result.Availability{OutageMinS: 0.1, Acks: &result.AckCheck{Acknowledged: 50000}}
		switch s.kind {
		case "galera":
			a := r.Availability
			a.Faults = []result.FaultEvent{{Spec: "kill-node@20s", Kind: "kill-node", Node: "node3", AtS: 20, EndS: 20}}
			a.Reconnections, a.DowntimeS, a.LongestOutageS = 3, 6.19, 6.19
			a.Outages = []result.Outage{{FromS: 20, ToS: 26.19}}
			r.Intervals[4].DowntimeS, r.Intervals[5].DowntimeS, r.Intervals[4].Reconnects = 5, 1.19, 3
		case "postgres-ha":
			a := r.Availability
			a.Faults = []result.FaultEvent{{Spec: "kill-leader@30s", Kind: "kill-leader", Node: "node1", Leader: "node1", AtS: 30, EndS: 30}}
			a.Reconnections, a.InDoubt, a.DowntimeS, a.LongestOutageS = 8, 2, 12.5, 12.5
			a.Acks.Lost, a.Acks.InDoubt, a.Acks.LostExamples = 7, 2, []int64{4611686018427387905}
		}
		in.Results = append(in.Results, r)
	}
	return in
}

func TestAvailabilitySection(t *testing.T) {
	md, err := Markdown(availabilityFixture(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"## Faults and availability",
		"| payments, 8 threads | downtime s (no commit) | 12.500 | **0.000** | 6.190 |",
		"|  | reconnections | 8 | **0** | 3 |",
		"|  | acknowledged transactions lost | 7 | **0** | **0** |",
		"galera, payments: fault kill-node@20s on node3 at 20.0 s",
		"downtime 12.50 s, 8 reconnections, acknowledged transactions lost: 7 of 50,000",
	} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	html, err := HTML(availabilityFixture(t))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(html), "Downtime per interval") || !strings.Contains(string(html), "fault injected") {
		t.Error("HTML lacks the downtime chart or the fault marks on the TPS chart")
	}
	quiet := availabilityFixture(t)
	quiet.Results = quiet.Results[:1]
	md, err = Markdown(quiet)
	if err != nil || strings.Contains(string(md), "Faults and availability") {
		t.Errorf("a run with no fault, reconnection or outage got an availability section (%v)", err)
	}
}

func TestLineAt(t *testing.T) {
	xs, ys := []float64{1, 2, 3}, []float64{10, 20, 0}
	for x, want := range map[float64]float64{0.5: 10, 1: 10, 1.5: 15, 2.75: 5, 9: 0} {
		if got := lineAt(xs, ys, x); got != want {
			t.Errorf("at %v: %v, want %v", x, got, want)
		}
	}
	if lineAt(nil, nil, 1) != 0 {
		t.Error("an empty line is not at 0")
	}
}
