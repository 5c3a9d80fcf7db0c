package capture

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/fairbench/fairbench/internal/dialect"
)

// txn is a captured statement: a transaction of its own for the calls no group took (groupStatements).
type txn struct {
	name      string
	sql       string // with :name parameters
	params    []param
	ids       []string // the engine's identifiers of the statement (dialect.StatementStat.ID)
	calls     int64    // the source's calls, less those run in a group's transactions
	grouped   int64    // the calls run in a group's transactions
	rows      int64
	totalMS   float64
	shareCall float64 // of the source's transactions as this file runs them
	shareTime float64 // of the kept statements' server time
}

// meanMS is the statement's server time per call on the source.
func (t *txn) meanMS() float64 { return t.totalMS / float64(max(t.calls+t.grouped, 1)) }

// param is a placeholder of a captured statement and the generator its values come from.
type param struct {
	name, gen, note string
}

// dropped is a statement the source ran that the captured workload leaves out, and why.
type dropped struct {
	sql, why string
	calls    int64
	totalMS  float64
	onTables bool // it names a captured table: part of the workload, not the server's own
}

var (
	// placeholder is a normalized statement's parameter: $1 on PostgreSQL, ? on MySQL and MariaDB.
	placeholder = regexp.MustCompile(`\$\d+|\?`)
	// comparedWith is a column compared with, assigned or added to what follows it.
	comparedWith = regexp.MustCompile(`(?i)([a-z_][a-z0-9_]*)\s*(=|<>|!=|<=|>=|<|>|\bLIKE|\+|-)\s*$`)
	// betweenAnd is the second bound of a BETWEEN, whose column precedes the first.
	betweenAnd = regexp.MustCompile(`(?i)([a-z_][a-z0-9_]*)\s+BETWEEN\s+(\$\d+|\?)\s+AND\s*$`)
	// between is the column a range's first bound follows.
	between    = regexp.MustCompile(`(?i)([a-z_][a-z0-9_]*)\s+BETWEEN\s*$`)
	limitOf    = regexp.MustCompile(`(?i)\b(LIMIT|OFFSET)\s*$`)
	insertInto = regexp.MustCompile(`(?is)^\s*INSERT\s+INTO\s+([a-z_][a-z0-9_]*)\s*(?:\(([^)]*)\))?\s*VALUES\s*\((.*)\)\s*$`)
	wordRe     = regexp.MustCompile(`(?i)[a-z_][a-z0-9_]*`)
	verbRe     = regexp.MustCompile(`(?i)^\s*(SELECT|INSERT|UPDATE|DELETE|WITH)\b`)
	// unquoted is a plain identifier in quotes, which every engine takes bare (MySQL's digests
	// quote every one in backticks; PostgreSQL keeps the quotes the client wrote).
	unquoted = regexp.MustCompile("[`\"]([a-z_][a-z0-9_]*)[`\"]")
)

// toTransactions turns the source's statement accounts into weighted transactions on the
// captured tables: the top ones by calls (or server time), each with its parameters typed from
// the columns they meet, and a list of what was left out and why.
func toTransactions(stats []dialect.StatementStat, tables []*table, top int, byTime bool) ([]*txn, []dropped) {
	byName := map[string]*table{}
	for _, t := range tables {
		byName[t.name] = t
	}
	kept, left := sortOut(stats, byName)
	sort.SliceStable(kept, func(i, j int) bool {
		if byTime {
			return kept[i].totalMS > kept[j].totalMS
		}
		return kept[i].calls > kept[j].calls
	})
	if len(kept) > top {
		for _, t := range kept[top:] {
			left = append(left, dropped{sql: t.sql, why: fmt.Sprintf("beyond the top %d", top), calls: t.calls, totalMS: t.totalMS, onTables: true})
		}
		kept = kept[:top]
	}
	nameAndType(kept, byName)
	kept = sameStatements(kept)
	sort.SliceStable(left, func(i, j int) bool { return left[i].calls > left[j].calls })
	return kept, left
}

// sameStatements merges the kept statements that read the same once typed: accounts whose texts
// differed only in what typing evens out (MySQL 9.7 kept two digests of TPC-C's New-Order
// statements, one with 5% of the calls). Apart, they became two statements of one transaction,
// the second a copy by chance with values of its own: a New-Order that locked two districts,
// which deadlocked where the source never did.
func sameStatements(kept []*txn) []*txn {
	at := map[string]*txn{}
	out := kept[:0]
	for _, t := range kept {
		if first, ok := at[t.sql]; ok {
			first.ids = append(first.ids, t.ids...)
			first.calls += t.calls
			first.rows += t.rows
			first.totalMS += t.totalMS
			continue
		}
		at[t.sql] = t
		out = append(out, t)
	}
	return out
}

// sortOut keeps the statements a replay can run and leaves the others, each with why.
func sortOut(stats []dialect.StatementStat, byName map[string]*table) (kept []*txn, left []dropped) {
	var all int64
	for _, s := range stats {
		all += max(s.Calls, 0)
	}
	for _, s := range merged(stats) {
		s.Text = expandMixedRow(tableNamesAsCaptured(s.Text, byName), byName)
		why := unusable(s.Text, byName)
		if why == "" && s.Calls*1000 < all {
			why = "rare: under 0.1% of the calls (a load, a check, a one-off)"
		}
		switch {
		case why == "":
			kept = append(kept, &txn{sql: s.Text, ids: s.ids, calls: s.Calls, rows: s.Rows, totalMS: s.TotalMS})
		case verbRe.MatchString(s.Text):
			left = append(left, dropped{sql: s.Text, why: why, calls: s.Calls, totalMS: s.TotalMS,
				onTables: namesTable(s.Text, byName) && !readsCatalog(s.Text)})
		}
	}
	return kept, left
}

// nameAndType gives each kept statement a name from its verb and first table, and its
// parameters typed.
func nameAndType(kept []*txn, byName map[string]*table) {
	used := map[string]int{}
	for _, t := range kept {
		t.name = uniqueName(used, txnName(t.sql, byName))
		t.sql, t.params = typeParams(t.sql, byName, float64(t.rows)/float64(t.calls))
	}
}

// account is a statement's accounts merged, with every identifier the engine gave it.
type account struct {
	dialect.StatementStat
	ids []string
}

// merged is the accounts by their text, quotes around plain names dropped: MariaDB keeps a
// prepared statement's account per connection, so one statement has an account per client.
func merged(stats []dialect.StatementStat) []account {
	var out []account
	at := map[string]int{}
	for _, s := range stats {
		if s.Calls <= 0 {
			continue
		}
		text := tidy(fromDigest(unquoted.ReplaceAllString(strings.TrimSpace(s.Text), "$1")))
		i, ok := at[text]
		if !ok {
			at[text] = len(out)
			out = append(out, account{StatementStat: dialect.StatementStat{Text: text}})
			i = len(out) - 1
		}
		if s.ID != "" {
			out[i].ids = append(out[i].ids, s.ID)
		}
		out[i].Calls += s.Calls
		out[i].Rows += s.Rows
		out[i].TotalMS += s.TotalMS
	}
	return out
}

var (
	spaceBeforeComma = regexp.MustCompile(`\s+,`)
	spaceInParens    = regexp.MustCompile(`\(\s+|\s+\)`)
	callSpace        = regexp.MustCompile(`\b([A-Za-z_][A-Za-z0-9_]*)\s+\(`)
	spaceKeywords    = map[string]bool{"in": true, "values": true, "and": true, "or": true, "on": true, "as": true, "from": true,
		"join": true, "where": true, "exists": true, "using": true, "not": true, "select": true, "by": true, "into": true,
		"set": true, "when": true, "then": true, "else": true, "any": true, "all": true, "some": true, "like": true,
		"between": true, "is": true, "union": true, "returning": true, "with": true, "over": true}
)

var (
	executePrefix = regexp.MustCompile(`(?i)^EXECUTE\s+((SELECT|INSERT|UPDATE|DELETE|WITH)\b)`)
	collapsedRow  = regexp.MustCompile(`(?is)^(\s*INSERT\s+INTO\s+[a-z_][a-z0-9_]*\s*\(([^)]*)\)\s*VALUES\s*)\(\.\.\.\)\s*$`)
	collapsedType = regexp.MustCompile(`(?i)\b(DECIMAL|NUMERIC)\s*\(\.\.\.\)`)
	bareNow       = regexp.MustCompile(`(?i)\bNOW\b(\s*[^\s(]|\s*$)`)
	distinctRow   = regexp.MustCompile(`(?i)\bDISTINCTROW\b`)
)

// fromDigest undoes what MySQL's and MariaDB's statement digests do to a text that a client can
// run again: MySQL 9 writes a prepared write's execution as "EXECUTE UPDATE ..."; a digest
// collapses a row of values to (...), which for a one-row INSERT is one placeholder per column
// named; a cast's DECIMAL (...) loses its precision (written DECIMAL(30,6), wide enough for
// arithmetic on any money column); NOW() loses its parentheses; DISTINCT is spelled DISTINCTROW,
// MySQL's synonym.
func fromDigest(sql string) string {
	sql = executePrefix.ReplaceAllString(sql, "$1")
	if m := collapsedRow.FindStringSubmatch(sql); m != nil {
		n := len(strings.Split(m[2], ","))
		sql = m[1] + "(" + strings.TrimSuffix(strings.Repeat("?, ", n), ", ") + ")"
	}
	sql = collapsedType.ReplaceAllString(sql, "$1(30,6)")
	sql = distinctRow.ReplaceAllString(sql, "DISTINCT")
	return bareNow.ReplaceAllString(sql, "CURRENT_TIMESTAMP$1")
}

// tidy writes a MySQL digest's spacing ("COUNT ( * )", "a , b") as a client would: MySQL itself
// refuses a space between a built-in function's name and its parenthesis.
func tidy(sql string) string {
	sql = spaceBeforeComma.ReplaceAllString(sql, ",")
	sql = spaceInParens.ReplaceAllStringFunc(sql, strings.TrimSpace)
	return callSpace.ReplaceAllStringFunc(sql, func(m string) string {
		name := strings.TrimSpace(strings.TrimSuffix(m, "("))
		if spaceKeywords[strings.ToLower(name)] {
			return m
		}
		return name + "("
	})
}

// unusable says why a statement cannot be replayed from its normalized text ("" when it can).
func unusable(sql string, tables map[string]*table) string {
	switch {
	case !verbRe.MatchString(sql):
		return "not a query or a change of rows"
	case strings.Contains(sql, "..."):
		return "the server kept it shortened (a list collapsed to (...) or the text cut at its digest length)"
	case readsCatalog(sql):
		return "reads the server's own catalogs"
	case !namesTable(sql, tables):
		return "touches none of the captured tables"
	}
	return ""
}

func readsCatalog(sql string) bool {
	lower := strings.ToLower(sql)
	return strings.Contains(lower, "pg_catalog") || strings.Contains(lower, "information_schema") ||
		strings.Contains(lower, "performance_schema") || strings.Contains(lower, "pg_stat")
}

func namesTable(sql string, tables map[string]*table) bool {
	for _, w := range wordRe.FindAllString(strings.ToLower(sql), -1) {
		if tables[w] != nil {
			return true
		}
	}
	return false
}

// Coverage is how much of the workload on the captured tables the kept statements are: their
// share of those statements' calls and server time on the source.
func coverage(kept []*txn, left []dropped) (calls, time float64) {
	var kc, ac int64
	var kt, at float64
	for _, t := range kept {
		kc, kt = kc+t.calls, kt+t.totalMS
	}
	ac, at = kc, kt
	for _, d := range left {
		if d.onTables {
			ac, at = ac+d.calls, at+d.totalMS
		}
	}
	if ac > 0 {
		calls = float64(kc) / float64(ac)
	}
	if at > 0 {
		time = kt / at
	}
	return calls, time
}

func txnName(sql string, tables map[string]*table) string {
	verb := strings.ToLower(verbRe.FindStringSubmatch(sql)[1])
	for _, w := range wordRe.FindAllString(strings.ToLower(sql), -1) {
		if tables[w] != nil {
			return verb + "_" + w
		}
	}
	return verb
}

func uniqueName(used map[string]int, name string) string {
	used[name]++
	if n := used[name]; n > 1 {
		return name + "_" + strconv.Itoa(n)
	}
	return name
}

// typeParams rewrites a statement's placeholders as named parameters and gives each the
// generator of the column it meets: compared with, assigned to, inserted into or added to. One
// the text does not tie to a column gets a small range and a note.
func typeParams(sql string, tables map[string]*table, rowsPerCall float64) (string, []param) {
	sql = numbered(sql)
	sql, widthNote := rangesFromOneBound(sql, rowsPerCall)
	named := map[string]string{} // $N to its name: one value in every place it stands
	insertCols := insertColumns(sql, tables)
	var params []param
	var b strings.Builder
	last, nth := 0, 0
	for _, loc := range placeholder.FindAllStringIndex(sql, -1) {
		ph := sql[loc[0]:loc[1]]
		b.WriteString(sql[last:loc[0]])
		last = loc[1]
		nth++
		if name, ok := named[ph]; ok {
			b.WriteString(":" + name)
			continue
		}
		p := paramFor(sql[:loc[0]], nth, insertCols, sql, tables)
		if widthNote != "" && strings.Contains(sql[loc[1]:], ph+" +") && p.note == "" {
			p.note = widthNote
		}
		p.name = uniqueParam(params, p.name)
		named[ph] = p.name
		params = append(params, p)
		b.WriteString(":" + p.name)
	}
	b.WriteString(sql[last:])
	return b.String(), params
}

// numbered writes MySQL's ? placeholders as $1, $2, ..., PostgreSQL's form, so that one path
// names them.
func numbered(sql string) string {
	if !strings.Contains(sql, "?") {
		return sql
	}
	n := 0
	return placeholder.ReplaceAllStringFunc(sql, func(string) string {
		n++
		return "$" + strconv.Itoa(n)
	})
}

// betweenBounds is a range between two placeholders.
var betweenBounds = regexp.MustCompile(`(?i)\bBETWEEN\s+(\$\d+)\s+AND\s+(\$\d+)`)

// rangesFromOneBound rewrites BETWEEN $1 AND $2 as BETWEEN $1 AND $1 + W: bounds drawn apart
// would make half the ranges empty and the rest a third of the table on average, where the
// source's ranges had a width. W is the rows per call less one where a call returned several,
// else 99 (sysbench's range), and the note says which.
func rangesFromOneBound(sql string, rowsPerCall float64) (string, string) {
	if !betweenBounds.MatchString(sql) {
		return sql, ""
	}
	width, note := int64(rowsPerCall+0.5)-1, "a range's first key; its width is the source's rows per call"
	if width < 1 {
		width, note = 99, "a range's first key; the statistics do not keep its width: 100 keys, as sysbench's ranges"
	}
	return betweenBounds.ReplaceAllString(sql, fmt.Sprintf("BETWEEN $1 AND $1 + %d", width)), note
}

// uniqueParam is name, or name_2, name_3, ... where params has it already.
func uniqueParam(params []param, name string) string {
	for n := 1; ; n++ {
		try := name
		if n > 1 {
			try = fmt.Sprintf("%s_%d", name, n)
		}
		taken := false
		for _, p := range params {
			taken = taken || p.name == try
		}
		if !taken {
			return try
		}
	}
}

// insertColumns is, for INSERT INTO t (a, b) VALUES (...), the column of each value by its place.
func insertColumns(sql string, tables map[string]*table) map[int]string {
	m := insertInto.FindStringSubmatch(sql)
	if m == nil {
		return nil
	}
	cols := strings.Split(m[2], ",")
	if t := tables[strings.ToLower(m[1])]; strings.TrimSpace(m[2]) == "" && t != nil {
		cols = nil // INSERT INTO t VALUES (...): the table's columns in their order
		for _, c := range t.columns {
			cols = append(cols, c.name)
		}
	}
	out := map[int]string{}
	seen := 0 // placeholders so far: a VALUES list is the statement's first
	for i, v := range splitTop(m[3]) {
		found := placeholder.FindAllString(v, -1)
		seen += len(found)
		if i < len(cols) && len(found) == 1 && strings.TrimSpace(v) == found[0] {
			out[seen] = m[1] + "." + strings.TrimSpace(cols[i])
		}
	}
	return out
}

// tableNamesAsCaptured spells every captured table's name as the catalog does: MySQL's digests
// write a name that is also a keyword in capitals (HISTORY), and MySQL's table names are case
// sensitive on Linux.
func tableNamesAsCaptured(sql string, tables map[string]*table) string {
	return wordRe.ReplaceAllStringFunc(sql, func(w string) string {
		if t := tables[strings.ToLower(w)]; t != nil {
			return t.name
		}
		return w
	})
}

// expandMixedRow writes out a one-row INSERT whose digest collapsed runs of placeholders around
// other values: MySQL writes "(?, ?, ?, ?, CURRENT_TIMESTAMP, ?, ?, ?)" as "(?, ..., CURRENT_TIMESTAMP,
// ?, ...)", each "?, ..." a run of two or more. The columns say how long each run was: the split
// taken is the one way the runs fill the column list with every current time in a date or time
// column. Where no split or more than one fits, the text is left as it is (and left out as
// shortened).
func expandMixedRow(sql string, tables map[string]*table) string {
	m := insertInto.FindStringSubmatch(sql)
	if m == nil || !strings.Contains(m[3], "...") || strings.TrimSpace(m[2]) == "" {
		return sql
	}
	t := tables[strings.ToLower(m[1])]
	cols := strings.Split(m[2], ",")
	items := splitTop(m[3])
	if t == nil {
		return sql
	}
	var fixed []string // each item: "" for a run, "?" for one placeholder, else the value
	for i := 0; i < len(items); i++ {
		v := strings.TrimSpace(items[i])
		if v == "?" && i+1 < len(items) && strings.TrimSpace(items[i+1]) == "..." {
			fixed = append(fixed, "")
			i++
			continue
		}
		if strings.Contains(v, "...") {
			return sql
		}
		fixed = append(fixed, v)
	}
	var fits [][]string
	var try func(at int, row []string)
	try = func(at int, row []string) {
		if at == len(fixed) {
			if len(row) == len(cols) && timesFit(row, cols, t) {
				fits = append(fits, append([]string(nil), row...))
			}
			return
		}
		if fixed[at] != "" {
			try(at+1, append(row, fixed[at]))
			return
		}
		for n := 2; len(row)+n <= len(cols); n++ {
			run := row
			for range n {
				run = append(run, "?")
			}
			try(at+1, run)
		}
	}
	try(0, nil)
	if len(fits) != 1 {
		return sql
	}
	at := insertInto.FindStringSubmatchIndex(sql) // the values between their parentheses: m[3]
	return sql[:at[6]] + strings.Join(fits[0], ", ") + sql[at[7]:]
}

// timesFit says whether every current time in row stands at a date or time column.
func timesFit(row, cols []string, t *table) bool {
	for i, v := range row {
		if !strings.EqualFold(v, "CURRENT_TIMESTAMP") && !strings.EqualFold(v, "CURRENT_DATE") {
			continue
		}
		c := t.column(strings.TrimSpace(cols[i]))
		if c == nil || (c.portable != "timestamp" && c.portable != "date") {
			return false
		}
	}
	return true
}

// splitTop splits a VALUES list at its top-level commas.
func splitTop(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, r := range s {
		switch r {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// paramFor is the generator of the nth placeholder, which follows before.
func paramFor(before string, nth int, insertCols map[int]string, sql string, tables map[string]*table) param {
	if tc, ok := insertCols[nth]; ok {
		tname, cname, _ := strings.Cut(tc, ".")
		if t := tables[tname]; t != nil {
			if c := t.column(cname); c != nil {
				return insertParam(t, c)
			}
		}
	}
	if m := betweenAnd.FindStringSubmatch(before); m != nil {
		if t, c := findColumn(m[1], sql, tables); c != nil {
			return param{name: c.name + "_to", gen: paramGen(t, c)}
		}
	}
	if m := between.FindStringSubmatch(before); m != nil {
		if t, c := findColumn(m[1], sql, tables); c != nil {
			return param{name: c.name, gen: paramGen(t, c)}
		}
	}
	if limitOf.MatchString(before) {
		return param{name: "limit", gen: "uniform: [1, 100]", note: "a LIMIT or OFFSET: the statistics do not keep its values"}
	}
	if m := comparedWith.FindStringSubmatch(before); m != nil {
		if t, c := findColumn(m[1], sql, tables); c != nil {
			if m[2] == "+" || m[2] == "-" {
				return param{name: "delta", gen: "uniform: [-100, 100]", note: "added to " + c.name + ": the statistics do not keep its values"}
			}
			return param{name: c.name, gen: paramGen(t, c)}
		}
	}
	return param{name: "p" + strconv.Itoa(nth), gen: "uniform: [1, 100]", note: "capture found no column this value meets"}
}

// findColumn is the captured column a name in sql stands for: a column of the first table the
// statement names that has one so called.
func findColumn(name, sql string, tables map[string]*table) (*table, *column) {
	name = strings.ToLower(name)
	for _, w := range wordRe.FindAllString(strings.ToLower(sql), -1) {
		if t := tables[w]; t != nil {
			if c := t.column(name); c != nil {
				return t, c
			}
		}
	}
	return nil, nil
}

// paramGen draws a value the column holds: its keys for a sequence or a ref, its sampled values
// with --sample-values, else its generator.
func paramGen(t *table, c *column) string {
	switch {
	case c.cycle > 0:
		lo := atoi(c.profile.min)
		return fmt.Sprintf("uniform: [%d, %d]", lo, lo+c.cycle-1)
	case c.genKind == "sequence" && isWhole(c.portable):
		return "ref: " + t.name + "." + c.name
	case c.genKind == "sequence":
		return fmt.Sprintf("sequence: %d", 1)
	case len(c.values) > 0:
		return "pick: " + quoteList(c.values)
	}
	return c.gen
}

// insertParam is the value an INSERT puts in a column: a new key for a sequence column, else one
// drawn as the column's rows were.
func insertParam(t *table, c *column) param {
	if c.genKind == "sequence" && isWhole(c.portable) && c.cycle == 0 {
		return param{name: c.name, gen: "next: " + t.name + "." + c.name}
	}
	return param{name: c.name, gen: paramGen(t, c)}
}

func quoteList(vs []string) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = strconv.Quote(v)
	}
	return "[" + strings.Join(q, ", ") + "]"
}
