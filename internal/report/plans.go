package report

import (
	"fmt"
	"regexp"

	"github.com/fairbench/fairbench/internal/document"
	"github.com/fairbench/fairbench/internal/result"
)

// indexNames are the "(index)" parts of a plan summary: engines name the same index otherwise
// (item_pkey, PRIMARY), so access paths are compared without them.
var indexNames = regexp.MustCompile(` \([^)]*\)`)

// plansSection is "Query plans": each read statement's access path to every table on every
// engine (EXPLAIN with the answers' parameters, right after prepare), and the statements whose
// access paths differ: one engine scans a table that another reaches through an index, which is
// often why one runs that statement much slower.
func (m *model) plansSection() *document.Section {
	order, plans := m.answerGrid(func(a result.Answer) string { return a.Plan })
	h, num := m.engineHeader("Statement", "")
	num[0], num[1] = false, false
	t := &document.Table{Header: h, Numeric: num}
	var differ []string
	for _, k := range order {
		cells := []document.Cell{{Text: fmt.Sprintf("%s #%d", k.tx, k.n), Head: true}, {Text: k.sql}}
		paths, explained := map[string]bool{}, false
		for _, v := range m.Variants {
			p := plans[v][k]
			cells = append(cells, document.Cell{Text: orDash(p)})
			if p != "" {
				paths[indexNames.ReplaceAllString(p, "")], explained = true, true
			}
		}
		if !explained {
			continue
		}
		t.Rows = append(t.Rows, cells)
		if len(paths) > 1 {
			differ = append(differ, fmt.Sprintf("%s #%d", k.tx, k.n))
		}
	}
	if len(t.Rows) == 0 {
		return nil
	}
	t.Foot = []string{"Access paths in common words: full scan (PostgreSQL's Seq Scan, MySQL's ALL), full index scan (MySQL's index), index lookup (a key, a range, a bitmap); the index each engine names in brackets."}
	if len(differ) > 0 {
		t.Foot = append(t.Foot, "Access paths differ: "+joinAnd(differ)+". One engine reads a table another reaches otherwise: look there first when that statement's engine is the slower.")
	}
	return &document.Section{ID: "plans", Heading: "Query plans",
		Paras: []string{"Each read statement of the workload file explained on every engine right after prepare, with the parameters " +
			"its answer was taken with (EXPLAIN in JSON): how the plan reaches each table. The same statement on the same rows " +
			"may be planned otherwise by each engine's optimizer, which is a reason one engine is faster than another, not an unfairness."},
		Tables: []*document.Table{t}}
}
