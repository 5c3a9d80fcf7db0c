package livemetrics

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/testserver"
)

// A real Prometheus scrapes the exporter, and every query of the Grafana dashboard parses, runs
// against what it scraped and finds the run in it.
func TestRealPrometheusAndDashboard(t *testing.T) {
	testserver.Integration(t)
	e, err := Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	prom := testserver.Prometheus(t, e.Addr())
	l := Labels{Engine: "postgres", Version: "15.18", Workload: "oltp_point_select", Kind: AllKinds}
	kind := l
	kind.Kind = "point_select"
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var got map[string]float64
	for i := 1; ; i++ {
		e.Add(l, Sample{Transactions: 100, Clients: 2, Latency: hist(100, 200, 300), Lag: hist(5), ServerCPUPct: 30, ServerMemMB: 64})
		e.Add(kind, Sample{Transactions: 100, Latency: hist(100, 200, 300)})
		// rate() needs two scrapes of a series that moved: wait for three.
		got, err = testserver.PromQuery(ctx, prom, `count_over_time(fairbench_transactions_total{kind="all"}[1m])`, "engine")
		if err == nil && got["postgres"] >= 3 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("prometheus never scraped the exporter three times (last %v, %v)", got, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
	for _, q := range dashboardQueries(t) {
		q = strings.ReplaceAll(q, "$__rate_interval", "1m") // Grafana's variable, as Grafana fills it in
		if got, err := testserver.PromQuery(ctx, prom, q, "engine"); err != nil || len(got) == 0 {
			t.Errorf("dashboard query %q: %v, %v: want it to parse and show the run", q, got, err)
		}
	}
}

func dashboardQueries(t *testing.T) []string {
	data, err := os.ReadFile("../../deploy/grafana/fairbench-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatal(err)
	}
	var qs []string
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			qs = append(qs, tg.Expr)
		}
	}
	if len(qs) < 8 {
		t.Fatalf("dashboard has %d queries, want the report's figures (8 or more)", len(qs))
	}
	return qs
}
