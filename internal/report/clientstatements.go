package report

import (
	"fmt"
	"math"
	"slices"

	"github.com/fairbench/fairbench/internal/document"
	"github.com/fairbench/fairbench/internal/result"
)

// pooledClientStatements adds a group's runs' per-statement figures by label.
func pooledClientStatements(g *group) []result.ClientStatement {
	if g == nil {
		return nil
	}
	lists := make([][]result.ClientStatement, len(g.Used))
	for i, r := range g.Used {
		lists[i] = r.ClientStatements
	}
	return result.PoolClientStatements(lists...)
}

// clientStatementsSection is "Time per statement": for workloads that time their statements
// (workload files, pgbench scripts), each statement's mean latency as the clients saw it on
// every engine, as pgbench -r reports it, and the statement whose engines differ most: where
// to look first for why one engine is faster.
func (m *model) clientStatementsSection() *document.Section {
	h, num := m.engineHeader("Workload", "Statement")
	num[0], num[1] = false, false
	t := &document.Table{Header: h, Numeric: num}
	var widest string
	widestRatio := 0.0
	for _, w := range m.Workloads {
		groups := m.headlineGroups(w)
		pooled := make([]map[string]result.ClientStatement, len(groups))
		var order []string
		for i, g := range groups {
			pooled[i] = map[string]result.ClientStatement{}
			for _, st := range pooledClientStatements(g) {
				if !slices.Contains(order, st.Label) {
					order = append(order, st.Label)
				}
				pooled[i][st.Label] = st
			}
		}
		for _, label := range order {
			row, ratio := statementRow(w, label, pooled)
			t.Rows = append(t.Rows, row)
			if ratio > widestRatio {
				widest, widestRatio = label+" ("+w+")", ratio
			}
		}
	}
	if len(t.Rows) == 0 {
		return nil
	}
	t.Foot = []string{"Mean milliseconds from sending the statement to its last row or its error, over every execution in the measured window (retries and failures included), the headline step's rounds pooled; the lowest marked. A multi-statement transaction's COMMIT is a row of its own: its time is the engine's durable commit."}
	if widestRatio > 1 {
		t.Foot = append(t.Foot, fmt.Sprintf("Engines differ most on %s: %.1fx between the fastest and the slowest.", widest, widestRatio))
	}
	return &document.Section{ID: "client-statements", Heading: "Time per statement",
		Paras: []string{"Each statement of the workload timed by the clients on every engine, as pgbench -r reports it: " +
			"where a transaction's time goes, statement by statement, measured the same way everywhere. The server's own " +
			"account of its statements is in \"Statements on the server\"; the difference is the round trip and the client's work."},
		Tables: []*document.Table{t}}
}

// statementRow is one statement's cells, the lowest mean marked, and the ratio of the slowest
// mean to the fastest where every engine ran it (0 otherwise).
func statementRow(w, label string, pooled []map[string]result.ClientStatement) ([]document.Cell, float64) {
	cells := []document.Cell{{Text: w, Head: true}, {Text: label}}
	lo, hi, all := math.Inf(1), 0.0, true
	best := -1
	for i, p := range pooled {
		st, ok := p[label]
		if !ok || st.Executions == 0 {
			all = false
			continue
		}
		if st.MeanMS < lo {
			lo, best = st.MeanMS, i
		}
		hi = max(hi, st.MeanMS)
	}
	for i, p := range pooled {
		st, ok := p[label]
		text := "—"
		if ok && st.Executions > 0 {
			text = document.Fixed(st.MeanMS, 3)
			if st.Failed > 0 {
				text += fmt.Sprintf(" (%d failed)", st.Failed)
			}
		}
		cells = append(cells, document.Cell{Text: text, Best: i == best && len(pooled) > 1})
	}
	if !all || lo <= 0 {
		return cells, 0
	}
	return cells, hi / lo
}
