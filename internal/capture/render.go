package capture

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// render writes the workload file: a header saying where it came from and what was left out,
// the tables with a comment on every column whose mapping or generator is approximate, and the
// transactions with their share of the source's calls and time.
func render(opt Options, summary, watched string, tables []*table, skipped []string, groups []*group, txns []*txn, left []dropped) []byte {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	w("# Captured by `fairbench capture` from %s.", comment(opt.Source))
	w("# %s.", comment(summary))
	w("# Row counts are the source's; each column's generator is fitted to a sample of up to %d rows,", SampleRows)
	if opt.SampleValues {
		w("# and compared values are drawn from a sample of the real ones (--sample-values): this file holds user values.")
	} else {
		w("# its bounds widened to two significant figures (or whole years): no value of the source is copied.")
	}
	if len(groups) > 0 {
		w("# Statements seen together in the source's open transactions (%s) run together", comment(watched))
		w("# here, each with its copies per transaction and one more by chance for what they leave (chance:);")
		w("# statements never seen beside another run alone, in autocommit.")
		w("# Statements of one transaction that compare with the same column share its value (one row read")
		w("# and then written): the statistics keep no values, so this is capture's reading of the SQL.")
	} else {
		w("# Each statement runs as a transaction of its own, in autocommit: the statistics count statements,")
		w("# and the source's transactions were %s.", comment(watched))
	}
	w("# Weights are the source's transactions as this file runs them (scaled to at most %d).", maxWeight)
	for _, s := range skipped {
		w("# %s", comment(s))
	}
	w("name: %s", scalar(opt.Name))
	w("description: %s", strconv.Quote("captured from "+opt.Source))
	w("tables:")
	for _, t := range tables {
		renderTable(w, t)
	}
	w("transactions:")
	if len(txns) == 0 && len(groups) == 0 {
		txns = standIns(tables)
		why := "no statement statistics were read (--top 0)"
		if opt.Top > 0 {
			why = "no statement in the server's statistics could be kept (see the list at the end)"
		}
		w("  # Stand-ins, one key lookup per table: %s.", why)
		w("  # Write the statements your application runs here (docs/workload-files.md).")
	}
	top := int64(1)
	for _, g := range groups {
		top = max(top, g.count)
	}
	for _, t := range txns {
		top = max(top, t.calls)
	}
	used := map[string]int{}
	for _, g := range groups {
		renderGroup(w, g, uniqueName(used, "txn_"+g.members[0].st.name), top)
	}
	for _, t := range txns {
		renderTxn(w, t, top)
	}
	if len(left) > 0 {
		w("# Statements the source ran that this file leaves out:")
		for _, d := range left {
			w("#   %d calls: %s -- %s", d.calls, comment(oneLine(d.sql, 160)), comment(d.why))
		}
	}
	return []byte(b.String())
}

func renderTable(w func(string, ...any), t *table) {
	w("  - name: %s", scalar(t.name))
	for _, n := range t.notes {
		w("    # %s", comment(n))
	}
	w("    rows: %d", max(t.rows, 1))
	w("    columns:")
	for _, c := range t.columns {
		line := fmt.Sprintf("      - {name: %s, type: %s, gen: {%s}", scalar(c.name), strconv.Quote(typeText(c)), c.gen)
		if c.null > 0 {
			line += fmt.Sprintf(", null: %s", strconv.FormatFloat(c.null, 'f', -1, 64))
		}
		line += "}"
		if c.note != "" {
			line += "  # " + comment(c.note)
		}
		w("%s", line)
	}
	if len(t.primaryKey) == 0 {
		w("    primary_key: []  # none on the source")
	} else {
		w("    primary_key: [%s]", scalars(t.primaryKey))
	}
	if len(t.indexes) > 0 {
		w("    indexes:  # unique ones are plain here: generated rows need not be")
		for _, ix := range t.indexes {
			w("      - [%s]", scalars(ix))
		}
	}
	if len(t.foreignKeys) > 0 {
		w("    foreign_keys:")
		for _, fk := range t.foreignKeys {
			w("      - {columns: [%s], references: %s}", scalars(fk.Columns), reference(fk.RefTable, fk.RefColumns))
		}
	}
}

func typeText(c *column) string {
	switch c.portable {
	case "varchar":
		return fmt.Sprintf("varchar(%d)", c.length)
	case "decimal":
		return fmt.Sprintf("decimal(%d,%d)", c.length, c.scale)
	}
	return c.portable
}

// maxWeight is the largest weight a workload file takes.
const maxWeight = 1000000

// sourceNote says what a transaction's source shares are.
const sourceNote = "# percent of the source's transactions as this file runs them, and of the kept statements' server time"

func renderTxn(w func(string, ...any), t *txn, topCalls int64) {
	if n := t.calls + t.grouped; n > 0 {
		w("  # %.2f rows per call on the source", float64(t.rows)/float64(n))
	}
	w("  - name: %s", scalar(t.name))
	w("    weight: %d", scaledWeight(t.calls, topCalls))
	if t.calls > 0 {
		w("    source: {calls: %.2f, time: %.2f}  %s", 100*t.shareCall, 100*t.shareTime, sourceNote)
	}
	renderParams(w, t.params)
	w("    statements:")
	w("      - %s", strconv.Quote(t.sql))
}

// renderGroup writes a transaction of statements the source ran together, each copy of a
// statement with parameters of its own but for the values it shares with the statements before
// it (groupParams).
func renderGroup(w func(string, ...any), g *group, name string, topCalls int64) {
	w("  # A transaction of the source: %d statements seen together in %d of its transactions.", len(g.members), g.seen)
	w("  - name: %s", scalar(name))
	w("    weight: %d", scaledWeight(g.count, topCalls))
	w("    source: {calls: %.2f, time: %.2f}  %s", 100*g.shareCall, 100*g.shareTime, sourceNote)
	var params groupParams
	var stmts []string
	place := 0
	for _, m := range g.members {
		for c := range m.runs() {
			place++
			sql := params.add(m.st.sql, m.st.params, place, c)
			note := fmt.Sprintf("# %s: %.2f rows per call on the source", comment(m.st.name), float64(m.st.rows)/float64(max(m.st.calls+m.st.grouped, 1)))
			switch {
			case c == m.copies:
				note += fmt.Sprintf(", %.2f calls per transaction: this copy in %.0f%% of them", float64(m.copies)+m.chance, 100*m.chance)
				stmts = append(stmts, fmt.Sprintf("      - {sql: %s, chance: %.3g}  %s", strconv.Quote(sql), m.chance, note))
				continue
			case m.copies > 1:
				note += fmt.Sprintf(", copy %d of %d", c+1, m.copies)
			}
			stmts = append(stmts, "      - "+strconv.Quote(sql)+"  "+note)
		}
	}
	renderParams(w, params.params)
	w("    statements:")
	for _, s := range stmts {
		w("%s", s)
	}
}

func renderParams(w func(string, ...any), params []param) {
	if len(params) == 0 {
		return
	}
	w("    params:")
	for _, p := range params {
		line := fmt.Sprintf("      %s: {%s}", scalar(p.name), p.gen)
		if p.note != "" {
			line += "  # " + comment(p.note)
		}
		w("%s", line)
	}
}

// scaledWeight is a transaction's count as a weight the file takes: scaled so that the most
// frequent is at most maxWeight.
func scaledWeight(n, top int64) int64 {
	if top > maxWeight {
		return max(1, int64(float64(n)*maxWeight/float64(top)+0.5))
	}
	return max(n, 1)
}

// The source's catalog and statistics are text the file must hold as data, never as YAML: a
// column named "x\nchecks: ..." once added a check of its own to a captured file. Names are plain
// where they are plain identifiers and quoted otherwise; comments are one line.

// plainName is a name YAML reads as the same string when it stands bare.
var plainName = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)

// yamlWords are the bare words YAML 1.1 readers take for booleans or null.
var yamlWords = map[string]bool{"y": true, "n": true, "yes": true, "no": true, "on": true, "off": true, "true": true, "false": true, "null": true}

// scalar is s as a YAML scalar that reads back as s, in a block or a flow context.
func scalar(s string) string {
	if plainName.MatchString(s) && !yamlWords[s] {
		return s
	}
	return strconv.Quote(s)
}

// scalars is a flow sequence's items, each a scalar.
func scalars(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = scalar(s)
	}
	return strings.Join(q, ", ")
}

// reference is a foreign key's table(columns), bare where every name is plain.
func reference(table string, columns []string) string {
	ref := table + "(" + strings.Join(columns, ", ") + ")"
	if plainName.MatchString(table) && !slices.ContainsFunc(columns, func(c string) bool { return !plainName.MatchString(c) }) {
		return ref
	}
	return strconv.Quote(ref)
}

// comment is s on one line, for after a '#': every run of white space (line breaks of any kind
// included) and every control character becomes one space.
func comment(s string) string {
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }), " ")
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// standIns are a key lookup per table with a sequence key, for a capture without statements.
func standIns(tables []*table) []*txn {
	var out []*txn
	for _, t := range tables {
		if key := sequenceColumn(t); key != nil && key.genKind == "sequence" && isWhole(key.portable) {
			out = append(out, &txn{name: "get_" + t.name, sql: fmt.Sprintf("SELECT * FROM %s WHERE %s = :%s", t.name, key.name, key.name),
				params: []param{{name: key.name, gen: paramGen(t, key)}}})
		}
	}
	return out
}
