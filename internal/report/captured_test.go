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

// Plans: each read statement's access paths per engine, and those that differ named (an index
// called otherwise by each engine is the same access path).
func TestPlansSection(t *testing.T) {
	const w = "shop.yaml"
	pg := run("postgres", w, 8, 1000, true)
	pg.Dataset = &result.Dataset{Answers: []result.Answer{
		{Transaction: "get", Statement: 1, SQL: "SELECT ...", Plan: "item: index lookup (item_pkey)"},
		{Transaction: "find", Statement: 1, SQL: "SELECT w", Plan: "item: full scan"}}}
	my := run("mysql", w, 8, 900, true)
	my.Dataset = &result.Dataset{Answers: []result.Answer{
		{Transaction: "get", Statement: 1, SQL: "SELECT ...", Plan: "item: index lookup (PRIMARY)"},
		{Transaction: "find", Statement: 1, SQL: "SELECT w", Plan: "item: index lookup (item_ix1)"}}}
	sec := newModel(&Input{Results: []*result.Result{pg, my}}).plansSection()
	if sec == nil || len(sec.Tables[0].Rows) != 2 {
		t.Fatalf("section %+v: want both statements", sec)
	}
	foot := strings.Join(sec.Tables[0].Foot, " ")
	if !strings.Contains(foot, "Access paths differ: find #1.") || strings.Contains(foot, "get #1") {
		t.Errorf("foot %q: want find #1 named, get #1 not", foot)
	}
	if newModel(&Input{Results: []*result.Result{run("postgres", w, 8, 1, true)}}).plansSection() != nil {
		t.Error("results without plans got the section")
	}
}
