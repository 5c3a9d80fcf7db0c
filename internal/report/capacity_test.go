package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/fairbench/fairbench/internal/result"
)

// capacityRun is one round's search on an engine: rates climbing by half each time up to a knee,
// the first rate past it failing on p99 with the server busy on log flushes.
func capacityRun(kind string, capacity float64) *result.Result {
	c := &result.Capacity{SLO: "p99<=10ms", Percentile: 99, LimitMS: 10, Connections: 32, WindowS: 10, Resolution: 0.05, Rounds: 1,
		PerS: capacity, LowPerS: capacity * 0.97, HighPerS: capacity * 1.03, Reached: "confirm", GaveWay: "server"}
	for _, rate := range []float64{capacity / 4, capacity / 2, capacity * 0.98, capacity * 1.05} {
		st := result.CapacityStep{Phase: "climb", OfferedPerS: rate, CompletedPerS: rate, LatencyMS: 10 * rate / capacity, P99MS: 10 * rate / capacity, Pass: rate <= capacity}
		if !st.Pass {
			st.Failed, st.Waits, st.ServerCPUPct = []string{"p99 was 10.50 ms, over 10.00 ms"}, "61% log_flush", 96
		}
		c.Steps = append(c.Steps, st)
	}
	return &result.Result{Complete: true, Engine: result.Engine{Kind: kind}, Workload: result.Workload{Name: "oltp_read_write"},
		Threads: 32, Rate: capacity * 0.98, DurationS: 10, TPS: capacity * 0.98, Capacity: c}
}

// The report leads with capacity where a step has an objective: the pick between engines from
// the rounds' capacities, what gave way past the knee, and the latency-by-rate chart with the
// objective dashed; no throughput pick is drawn from the searches' windows.
func TestCapacityReport(t *testing.T) {
	var runs []*result.Result
	for _, c := range [][2]float64{{4100, 2900}, {4000, 2950}, {4200, 2850}, {4050, 2900}, {4150, 2920}} {
		runs = append(runs, capacityRun("postgres", c[0]), capacityRun("mariadb", c[1]))
	}
	in := &Input{Results: inRounds(runs...)}
	md, err := Markdown(in)
	if err != nil {
		t.Fatal(err)
	}
	decision := mdSection(string(md), "Quick decision")
	for _, want := range []string{"Capacity at p99 ≤ 10ms · Mixed OLTP (reads + writes)", "postgres, 1.41×", "4,100/s",
		"at 4,305/s postgres: p99 was 10.50 ms, over 10.00 ms (61% log_flush, server CPU 96%)"} {
		if !strings.Contains(decision, want) {
			t.Errorf("the quick decision lacks %q\n%s", want, decision)
		}
	}
	if strings.Contains(decision, "\n| Mixed OLTP") {
		t.Errorf("a throughput pick was drawn from the capacity searches' windows\n%s", decision)
	}
	section := mdSection(string(md), "Capacity at the latency objective")
	if !strings.Contains(section, "median of 5 rounds") {
		t.Errorf("capacity section:\n%s", section)
	}
	page, err := HTML(in)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(page, []byte("latency against offered rate, the capacity circled")) || !bytes.Contains(page, []byte("<svg")) {
		t.Error("the HTML page lacks the capacity chart")
	}
}

// A capacity whose objective sits near the engine's own latency at the start rate is called soft
// in its pick and in the capacity table, from the round that measured the start (later rounds
// begin at its bracket and have no floor).
func TestSoftCapacitySaid(t *testing.T) {
	var runs []*result.Result
	for i, c := range [][2]float64{{4100, 2900}, {4000, 2950}, {4200, 2850}} {
		pg, maria := capacityRun("postgres", c[0]), capacityRun("mariadb", c[1])
		if i == 0 {
			pg.Capacity.Floor, maria.Capacity.Floor = 0.73, 0.2
		}
		runs = append(runs, pg, maria)
	}
	md, err := Markdown(&Input{Results: inRounds(runs...)})
	if err != nil {
		t.Fatal(err)
	}
	decision := mdSection(string(md), "Quick decision")
	if !strings.Contains(decision, "soft: the objective's percentile at the start rate was already postgres's 73% of its limit") || strings.Contains(decision, "mariadb's 20%") {
		t.Errorf("the pick does not call postgres's capacity soft, or calls mariadb's so:\n%s", decision)
	}
	section := mdSection(string(md), "Capacity at the latency objective")
	if strings.Count(section, "already 73% of its limit") != 1 {
		t.Errorf("the capacity table should call postgres's capacity soft once:\n%s", section)
	}
}
