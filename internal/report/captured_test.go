package report

import (
	"strings"
	"testing"

	"github.com/fairbench/fairbench/internal/result"
)

// A captured workload's transactions: the source's shares beside each engine's, and how far the
// replay's calls are from the source's.
func TestCapturedSection(t *testing.T) {
	const w = "captured.yaml"
	mix := []result.SourceShare{{Transaction: "get", CallsPct: 80, TimePct: 30}, {Transaction: "put", CallsPct: 20, TimePct: 70}}
	replay := func(kind string, get, put int64, getMS, putMS float64) *result.Result {
		r := run(kind, w, 8, 1000, true)
		r.Dataset = &result.Dataset{SourceMix: mix}
		r.ByKind = map[string]*result.KindStats{
			"get": {Transactions: get, LatencyMS: result.Latency{Avg: getMS}},
			"put": {Transactions: put, LatencyMS: result.Latency{Avg: putMS}},
		}
		return r
	}
	sec := newModel(&Input{Results: []*result.Result{replay("postgres", 790, 210, 0.1, 2), replay("mysql", 820, 180, 0.2, 1)}}).capturedSection()
	if sec == nil || len(sec.Tables[0].Rows) != 2 {
		t.Fatalf("section %+v: want the two transactions", sec)
	}
	var cells []string
	for _, c := range sec.Tables[0].Rows[0] {
		cells = append(cells, c.Text)
	}
	row := strings.Join(cells, " | ")
	for _, want := range []string{"get", "80.0%", "30.0%", "79.0%", "15.8%", "82.0%", "47.7%"} {
		if !strings.Contains(row, want) {
			t.Errorf("row %q: want %s", row, want)
		}
	}
	foot := strings.Join(sec.Tables[0].Foot, " ")
	if !strings.Contains(foot, "on postgres: calls within 1.0 points") || !strings.Contains(foot, "on mysql: calls within 2.0 points") {
		t.Errorf("foot %q: want each engine's largest difference", foot)
	}
	if newModel(&Input{Results: []*result.Result{run("postgres", w, 8, 1, true)}}).capturedSection() != nil {
		t.Error("a workload not captured got the section")
	}
}
