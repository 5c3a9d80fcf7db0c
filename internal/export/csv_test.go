package export

import (
	"encoding/csv"
	"strings"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/result"
)

func sample() []*result.Result {
	return []*result.Result{{
		Complete: true, StartedAt: time.Date(2026, 11, 24, 1, 2, 3, 0, time.UTC),
		Engine: result.Engine{Kind: "postgres", Version: "PostgreSQL 15.18, with, commas"}, Workload: result.Workload{Name: "oltp_read_only"},
		Threads: 4, DurationS: 2, Transactions: 2468, TPS: 1234, QPS: 19744.5, LatencyMS: result.Latency{P50: 3.1, P99: 7.25},
		Intervals: []result.Interval{{T: 1, Threads: 4, TPS: 1200}, {T: 2, Threads: 4, TPS: 1268, P99MS: 7}},
		Server:    &result.Server{CPUPct: 61.5},
	}, {
		Complete: true, StartedAt: time.Date(2026, 11, 24, 1, 5, 0, 0, time.UTC),
		Engine: result.Engine{Kind: "mariadb", Version: "10.11.19-MariaDB", Alias: "prod"}, Workload: result.Workload{Name: "oltp_point_select"},
		Threads: 8, Rate: 16000, DurationS: 3, Transactions: 48000, TPS: 16000,
		Capacity: &result.Capacity{SLO: "p99<=20ms", PerS: 16133, LowPerS: 15783, HighPerS: 16482, Reached: "confirm"},
	}}
}

func TestRuns(t *testing.T) {
	var b strings.Builder
	if err := Runs(&b, sample()); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(strings.NewReader(b.String())).ReadAll()
	if err != nil {
		t.Fatalf("not CSV: %v\n%s", err, b.String())
	}
	if len(rows) != 3 || len(rows[1]) != len(runColumns) || len(rows[2]) != len(runColumns) {
		t.Fatalf("rows %d, columns %d: %v", len(rows), len(rows[1]), rows)
	}
	got := map[string]string{}
	for i, c := range rows[0] {
		got[c] = rows[1][i]
	}
	want := map[string]string{"engine": "postgres", "engine_version": "PostgreSQL 15.18, with, commas", "tps": "1234",
		"transactions": "2468", "latency_p99_ms": "7.25", "server_cpu_pct": "61.5", "started_at": "2026-11-24T01:02:03Z", "complete": "true"}
	for i, c := range rows[0] {
		if want := map[string]string{"engine_name": "prod", "capacity_slo": "p99<=20ms", "capacity_per_s": "16133", "capacity_low_per_s": "15783",
			"capacity_high_per_s": "16482", "capacity_reached": "confirm", "capacity_at_least": "false"}[c]; want != "" && rows[2][i] != want {
			t.Errorf("capacity run's %s: %q, want %q", c, rows[2][i], want)
		}
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
}

func TestIntervals(t *testing.T) {
	var b strings.Builder
	if err := Intervals(&b, sample()); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(strings.NewReader(b.String())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || rows[2][4] != "2" || rows[2][6] != "1268" || rows[2][9] != "7" {
		t.Errorf("unexpected intervals CSV:\n%s", b.String())
	}
}

// A text cell that a spreadsheet would run as a formula is written as text.
func TestFormulaCellsAreText(t *testing.T) {
	r := sample()[0]
	r.Label = `=HYPERLINK("http://x","y")`
	r.Workload.Name = "@SUM(A1)"
	var b strings.Builder
	if err := Runs(&b, []*result.Result{r}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.Contains(out, `'=HYPERLINK`) || !strings.Contains(out, "'@SUM(A1)") {
		t.Errorf("formula cells not escaped:\n%s", out)
	}
}
