package report

import (
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/fairbench/fairbench/internal/document"
	"github.com/fairbench/fairbench/internal/result"
)

// The parity audit: did the engines run on equal terms? It compares, from the results files
// alone, the settings that decide a fair fight as each server reported them, the data each one
// loaded and the statements each transaction sent, and lists every difference with its reason
// where the difference is deliberate. A difference without a reason is "unexplained", and the
// quick decision says so beside its picks.

// parityDiff is one difference the audit found; an empty reason means unexplained.
type parityDiff struct {
	what, reason string
	// setting is the facet's name ("durability (commit waits for the log flush)"), "" for a
	// difference that is not one setting's (the data, the statements).
	setting string
	// writes: the setting bears only on workloads that write (durability, the logs); a read-only
	// pick is not decided by it.
	writes bool
}

type parityAudit struct {
	settings, data, answers, statements *document.Table
	diffs                               []parityDiff
	defaults                            bool     // some engine ran with its package's defaults
	unrecorded                          []string // what the results do not record, so could not be compared
}

func (a *parityAudit) unexplained() int {
	n := 0
	for _, d := range a.diffs {
		if d.reason == "" {
			n++
		}
	}
	return n
}

// facet is one setting compared across engines, read from its common name in the results
// (result.Facet), which the engine layer formed from the server's own view of its settings.
type facet struct {
	key  string // result.Facet* name
	name string
	// byDesign explains a difference between families of engines (Server.SettingsFamily) that
	// each family's design makes: applied only when every engine agrees with its own family.
	byDesign string
	// writes: the setting costs only writes (the log's flush, size and copies), so a difference
	// in it bears on the picks of workloads that write and on no read-only one.
	writes bool
	// consequence says in a few words what a difference in the setting means for a pick.
	consequence string
}

var facets = []facet{
	{key: result.FacetDurability, name: "durability (commit waits for the log flush)", writes: true,
		consequence: "commits that survive a crash on one and not on the other: the write picks compare different guarantees"},
	{key: result.FacetBinaryLog, name: "binary log", writes: true,
		consequence: "one writes every change a second time, to its binary log"},
	{key: result.FacetBufferPool, name: "buffer pool",
		consequence: "one caches more of the data than the other"},
	{key: result.FacetRedoSize, name: "WAL / redo size", writes: true,
		consequence: "one checkpoints more often than the other"},
	tornPage,
	{key: result.FacetIsolation, name: "isolation level",
		byDesign: "each engine's default isolation, which sysbench and fairbench leave as it is"},
	{key: result.FacetPageSize, name: "page size",
		byDesign: "each engine's page size (PostgreSQL's is fixed when it is built)"},
	{key: result.FacetPageChecksums, name: "page checksums",
		byDesign: "InnoDB always checksums pages; PostgreSQL only when initdb enabled them (off by default before 18)"},
	{key: result.FacetMaxConnections, name: "max_connections"},
	{key: result.FacetCharset, name: "character set"},
	{key: result.FacetFlushMethod, name: "flush method"},
	// Statement accounting costs every engine alike only when all have it on (MySQL ships its
	// performance schema on, MariaDB off, PostgreSQL without pg_stat_statements).
	{key: result.FacetStatementAccounting, name: "statement accounting"},
}

var tornPage = facet{key: result.FacetTornPage, name: "torn-page protection", writes: true,
	consequence: "one writes pages twice or logs them whole, the other not: a crash may leave it a torn page"}

// audit runs the parity audit over the comparison's runs (not the --explain runs).
func (m *model) audit() *parityAudit {
	if m.parity != nil {
		return m.parity
	}
	a := &parityAudit{}
	for _, r := range m.Results {
		a.defaults = a.defaults || r.Profile == "defaults"
	}
	a.settings = m.settingsAudit(a)
	a.data = m.dataAudit(a)
	a.answers = m.answersAudit()
	a.statements = m.statementsAudit(a)
	m.parity = a
	return a
}

// variantValues gathers one facet's distinct shown and compared values per engine, and how the
// engine did it where engines differ in that (result.Facet.Mechanism).
type variantValues struct {
	shown, canon, mechanism []string
}

// facetState is what the results say of one facet for one engine where they give no value.
type facetState int

const (
	facetUnrecorded facetState = iota // no value: not reported, or results that predate the audit
	facetNoSuch                       // the engine has no such setting
	facetUnread                       // settings recorded under names this fairbench cannot read
)

func (m *model) facetValues(f facet) (map[*variant]*variantValues, map[*variant]facetState) {
	out, states := map[*variant]*variantValues{}, map[*variant]facetState{}
	for _, r := range m.Results {
		if r.Server == nil || len(r.Server.Settings) == 0 && r.Server.Facets == nil {
			continue
		}
		v := m.variantOf(r)
		fv, ok := r.Server.Facets[f.key]
		switch {
		case r.Server.Facets == nil:
			states[v] = facetUnread
			continue
		case ok && fv.NoSuch:
			states[v] = facetNoSuch
			continue
		case !ok:
			continue
		}
		vv := out[v]
		if vv == nil {
			vv = &variantValues{}
			out[v] = vv
		}
		appendNew(&vv.shown, fv.Shown)
		appendNew(&vv.canon, fv.Value)
		if fv.Mechanism != "" {
			appendNew(&vv.mechanism, fv.Mechanism)
		}
	}
	return out, states
}

func appendNew(ss *[]string, s string) {
	if !containsStr(*ss, s) {
		*ss = append(*ss, s)
	}
}

// familyOf is the settings family of a variant's servers ("" where no result names one).
func (m *model) familyOf(v *variant) string {
	for _, r := range m.Results {
		if r.Server != nil && r.Server.SettingsFamily != "" && m.variantOf(r) == v {
			return r.Server.SettingsFamily
		}
	}
	return ""
}

func (m *model) settingsAudit(a *parityAudit) *document.Table {
	h, _ := m.engineHeader("Setting")
	t := &document.Table{Caption: "Settings, as each server reported them", Header: h}
	profiles := map[*variant][]string{}
	for _, r := range m.Results {
		v := m.variantOf(r)
		p := orDash(r.Profile)
		if !containsStr(profiles[v], p) {
			profiles[v] = append(profiles[v], p)
		}
	}
	row := []document.Cell{{Text: "profile", Head: true}}
	all := map[string]bool{}
	for _, v := range m.Variants {
		row = append(row, document.Cell{Text: strings.Join(profiles[v], " / ")})
		for _, p := range profiles[v] {
			all[p] = true
		}
	}
	t.Rows = append(t.Rows, row)
	if len(all) > 1 {
		a.diffs = append(a.diffs, parityDiff{what: "profile: the engines ran under different profiles (" + strings.Join(sortedStrings(all), ", ") + ")"})
	}
	m.transportRow(a, t)
	for _, f := range facets {
		vals, states := m.facetValues(f)
		row := []document.Cell{{Text: f.name, Head: true}}
		for _, v := range m.Variants {
			txt := "—"
			switch vv := vals[v]; {
			case vv != nil:
				txt = strings.Join(vv.shown, " / ")
			case states[v] == facetNoSuch:
				txt = "n/a"
			case states[v] == facetUnread:
				txt = "not read: engine kind " + v.Kind + " is unknown to this fairbench"
			default:
				appendNew(&a.unrecorded, f.name)
			}
			row = append(row, document.Cell{Text: txt})
		}
		t.Rows = append(t.Rows, row)
		if d, ok := m.facetDiff(f, vals, a.defaults); ok {
			a.diffs = append(a.diffs, d)
		}
	}
	m.tornPageMechanism(a)
	t.Foot = []string{"— means the server did not report the setting (or the results predate the audit); n/a that the engine has no such setting."}
	return t
}

// transportRow shows what each server said the benchmark's connections were: plaintext or a
// TLS version. Encryption costs CPU on both ends, so engines must agree.
func (m *model) transportRow(a *parityAudit, t *document.Table) {
	vals := map[*variant][]string{}
	all := map[string]bool{}
	for _, r := range m.Results {
		if tr := r.Engine.Transport; tr != "" {
			v := m.variantOf(r)
			if !containsStr(vals[v], tr) {
				vals[v] = append(vals[v], tr)
			}
			all[tr] = true
		}
	}
	row := []document.Cell{{Text: "transport (TLS)", Head: true}}
	for _, v := range m.Variants {
		txt := strings.Join(vals[v], " / ")
		if txt == "" {
			txt = "—"
			if !containsStr(a.unrecorded, "transport") {
				a.unrecorded = append(a.unrecorded, "transport")
			}
		}
		row = append(row, document.Cell{Text: txt})
	}
	t.Rows = append(t.Rows, row)
	if len(all) > 1 {
		a.diffs = append(a.diffs, parityDiff{what: "transport: the engines' connections differ (" + strings.Join(sortedStrings(all), ", ") + ")"})
	}
}

// facetDiff compares a facet's canonical values and explains a difference where it can.
func (m *model) facetDiff(f facet, vals map[*variant]*variantValues, defaults bool) (parityDiff, bool) {
	byCanon := map[string][]string{}
	var order []string
	family := map[string]map[string]bool{}
	for _, v := range m.Variants {
		vv := vals[v]
		if vv == nil {
			continue
		}
		fam := m.familyOf(v)
		if family[fam] == nil {
			family[fam] = map[string]bool{}
		}
		for _, c := range vv.canon {
			if byCanon[c] == nil {
				order = append(order, c)
			}
			byCanon[c] = append(byCanon[c], v.Name)
			family[fam][c] = true
		}
	}
	if len(order) < 2 {
		return parityDiff{}, false
	}
	var parts []string
	for _, c := range order {
		parts = append(parts, m.shownFor(vals, byCanon[c])+" on "+joinAnd(byCanon[c]))
	}
	d := parityDiff{what: f.name + ": " + strings.Join(parts, "; "), setting: f.name, writes: f.writes}
	switch {
	case f.byDesign != "" && eachAgrees(family):
		d.reason = f.byDesign
	case defaults:
		d.reason = "each package's default (--profile defaults)"
	}
	if d.reason == "" && f.consequence != "" {
		d.what += " (" + f.consequence + ")"
	}
	return d, true
}

// shownFor is how the first of the named engines shows a value, for the difference's text.
func (m *model) shownFor(vals map[*variant]*variantValues, names []string) string {
	for _, v := range m.Variants {
		if v.Name == names[0] && vals[v] != nil {
			return vals[v].shown[0]
		}
	}
	return ""
}

// eachAgrees: every family of engines holds one value, so the values differ between families
// only (a family unknown, "", agrees with nothing).
func eachAgrees(family map[string]map[string]bool) bool {
	for fam, vals := range family {
		if fam == "" || len(vals) != 1 {
			return false
		}
	}
	return len(family) > 1
}

// tornPageMechanism names the one deliberate difference that equal settings hide: families of
// engines protect against torn pages in different ways, with different write costs.
func (m *model) tornPageMechanism(a *parityAudit) {
	vals, _ := m.facetValues(tornPage)
	byMech := map[string][]string{}
	var order []string
	for _, v := range m.Variants {
		vv := vals[v]
		if vv == nil || len(vv.canon) != 1 || vv.canon[0] != "on" || len(vv.mechanism) != 1 {
			continue
		}
		mech := vv.mechanism[0]
		if byMech[mech] == nil {
			order = append(order, mech)
		}
		byMech[mech] = append(byMech[mech], v.Name)
	}
	if len(order) < 2 {
		return
	}
	parts := make([]string, len(order))
	for i, mech := range order {
		parts[i] = mech + " on " + joinAnd(byMech[mech])
	}
	a.diffs = append(a.diffs, parityDiff{what: "torn-page protection: " + strings.Join(parts, "; "),
		reason: "each engine's own mechanism, at its own write cost"})
}

// datasetKey names a data set by its tables, so that the runs of one prepare compare together.
func datasetKey(ds *result.Dataset) string {
	names := make([]string, len(ds.Tables))
	for i, t := range ds.Tables {
		names[i] = t.Name
	}
	sort.Slice(names, func(i, j int) bool { return naturalLess(names[i], names[j]) })
	if len(names) > 4 {
		return fmt.Sprintf("%s … %s (%d tables)", names[0], names[len(names)-1], len(names))
	}
	return strings.Join(names, ", ")
}

// naturalLess orders sbtest2 before sbtest10: by the name without its trailing number, then by
// that number.
func naturalLess(a, b string) bool {
	split := func(s string) (string, int) {
		i := len(s)
		for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
			i--
		}
		n, _ := strconv.Atoi(s[i:])
		return s[:i], n
	}
	pa, na := split(a)
	pb, nb := split(b)
	if pa != pb {
		return pa < pb
	}
	if na != nb {
		return na < nb
	}
	return a < b
}

// digest is a short, stable name for a list of facts, so a reader can see at a glance that two
// engines' checksums or indexes are the same.
func digest(items []string) string {
	h := fnv.New32a()
	for _, it := range items {
		h.Write([]byte(it))
		h.Write([]byte{0})
	}
	return fmt.Sprintf("%08x", h.Sum32())
}

type dataFacts struct {
	tables, rows, checksum, indexes string
	note                            string
}

func factsOf(ds *result.Dataset) dataFacts {
	var rows int64
	var sums []string
	for _, t := range ds.Tables {
		rows += t.Rows
		sums = append(sums, t.Name+":"+strconv.FormatInt(t.Rows, 10)+":"+t.Checksum)
	}
	f := dataFacts{tables: fmtInt(int64(len(ds.Tables))), rows: fmtInt(rows), note: ds.Note,
		indexes: fmtInt(int64(len(ds.Indexes))) + " (" + digest(ds.Indexes) + ")"}
	f.checksum = "not taken"
	if ds.Checksummed {
		f.checksum = digest(sums)
	}
	return f
}

func (m *model) dataAudit(a *parityAudit) *document.Table {
	type key struct {
		set string
		v   *variant
	}
	facts := map[key][]dataFacts{}
	sets := map[string]bool{}
	datasets := map[key]*result.Dataset{}
	for _, r := range m.Results {
		if r.Dataset == nil {
			continue
		}
		k := key{datasetKey(r.Dataset), m.variantOf(r)}
		f := factsOf(r.Dataset)
		if !containsFacts(facts[k], f) {
			facts[k] = append(facts[k], f)
			datasets[k] = r.Dataset
		}
		sets[k.set] = true
	}
	if len(sets) == 0 {
		a.unrecorded = append(a.unrecorded, "the loaded data")
		return nil
	}
	h, num := m.engineHeader("Data set", "")
	num[0], num[1] = false, false
	t := &document.Table{Caption: "Data, as loaded (before the first measured run)", Header: h, Numeric: num}
	var notes []string
	for _, set := range sortedStrings(sets) {
		rowsDiffer := false
		for _, row := range []struct {
			name string
			get  func(dataFacts) string
		}{
			{"tables", func(f dataFacts) string { return f.tables }},
			{"rows", func(f dataFacts) string { return f.rows }},
			{"content checksum", func(f dataFacts) string { return f.checksum }},
			{"indexes", func(f dataFacts) string { return f.indexes }},
		} {
			cells := []document.Cell{{Text: set, Head: true}, {Text: row.name}}
			seen := map[string][]string{}
			var order []string
			for _, v := range m.Variants {
				var vals []string
				for _, f := range facts[key{set, v}] {
					vals = append(vals, row.get(f))
					if f.note != "" && !containsStr(notes, f.note) {
						notes = append(notes, f.note)
					}
				}
				txt := strings.Join(vals, " / ")
				cells = append(cells, document.Cell{Text: orDash(txt)})
				if txt != "" {
					if seen[txt] == nil {
						order = append(order, txt)
					}
					seen[txt] = append(seen[txt], v.Name)
				}
			}
			t.Rows = append(t.Rows, cells)
			// Other row counts already mean other content: one cause, one difference.
			if len(order) > 1 && !(rowsDiffer && row.name == "content checksum") {
				rowsDiffer = rowsDiffer || row.name == "rows"
				var parts []string
				for _, o := range order {
					parts = append(parts, o+" on "+joinAnd(seen[o]))
				}
				a.diffs = append(a.diffs, parityDiff{what: "data " + set + ": " + row.name + " differ: " + strings.Join(parts, "; ")})
			}
		}
	}
	t.Foot = append([]string{"Each server counted and checksummed its own rows right after prepare (a sum of each row's SHA-256 over a canonical text of the row, the same on every engine); checksums and indexes are shown as short digests: equal digests, equal content."}, notes...)
	return t
}

// answersAudit shows each read statement's answer on every engine (workload files record them
// right after prepare), and names the statements whose answers differ: same SQL, same data,
// other rows or another order, which is what a port of the application has to handle.
func (m *model) answersAudit() *document.Table {
	order, answers := m.answerGrid(answerText)
	if len(order) == 0 {
		return nil
	}
	h, num := m.engineHeader("Statement", "")
	num[0], num[1] = false, false
	t := &document.Table{Caption: "Answers (each read statement run once with the same parameters on every engine, right after prepare)", Header: h, Numeric: num}
	var differ []string
	for _, k := range order {
		cells := []document.Cell{{Text: fmt.Sprintf("%s #%d", k.tx, k.n), Head: true}, {Text: k.sql}}
		seen := map[string]bool{}
		for _, v := range m.Variants {
			txt := answers[v][k]
			cells = append(cells, document.Cell{Text: orDash(txt)})
			if txt != "" {
				seen[txt] = true
			}
		}
		t.Rows = append(t.Rows, cells)
		if len(seen) > 1 {
			differ = append(differ, fmt.Sprintf("%s #%d", k.tx, k.n))
		}
	}
	t.Foot = []string{"Each answer is its rows counted and checksummed over a canonical text (in the engine's order where the statement has an ORDER BY, sorted otherwise); equal digests, equal answers."}
	if len(differ) > 0 {
		t.Foot = append(t.Foot, "Answers differ: "+joinAnd(differ)+". The engines ran the same SQL on the same rows and answered otherwise: an ORDER BY without a tie-breaker, a collation, the order of NULLs or a rounding rule. That is what a port of the application has to handle; the throughput figures still compare the same statements.")
	}
	return t
}

// answerStmt is a read statement of a workload file: its transaction, place and text.
type answerStmt struct {
	tx  string
	n   int
	sql string
}

// answerGrid is what text says of each read statement's answer per engine (its checksum, its
// plan), from the first run of each engine that recorded answers, in the statements' order.
func (m *model) answerGrid(text func(result.Answer) string) ([]answerStmt, map[*variant]map[answerStmt]string) {
	grid := map[*variant]map[answerStmt]string{}
	var order []answerStmt
	for _, r := range m.Results {
		v := m.variantOf(r)
		if r.Dataset == nil || len(r.Dataset.Answers) == 0 || grid[v] != nil {
			continue
		}
		grid[v] = map[answerStmt]string{}
		for _, a := range r.Dataset.Answers {
			k := answerStmt{a.Transaction, a.Statement, a.SQL}
			if !slices.Contains(order, k) {
				order = append(order, k)
			}
			grid[v][k] = text(a)
		}
	}
	return order, grid
}

func answerText(a result.Answer) string {
	if a.Error != "" {
		return "error: " + a.Error
	}
	return fmt.Sprintf("%s rows (%s)", fmtInt(a.Rows), a.Checksum)
}

func containsFacts(list []dataFacts, f dataFacts) bool {
	for _, x := range list {
		if x == f {
			return true
		}
	}
	return false
}

// perTxnMetric is one per-transaction figure of the statements audit: num gives a run's count, or
// false when the run did not record it.
type perTxnMetric struct {
	name string
	num  func(r *result.Result) (int64, bool)
}

var perTxnMetrics = []perTxnMetric{
	{"statements per transaction", func(r *result.Result) (int64, bool) {
		if r.Wire != nil {
			return r.Wire.Statements, true
		}
		return r.Queries.Total, true
	}},
	{"round trips per transaction", func(r *result.Result) (int64, bool) {
		if r.Wire != nil {
			return r.Wire.RoundTrips, true
		}
		return 0, false
	}},
}

// statementsAudit compares what each transaction sent, per workload at its headline thread
// count: statements and round trips counted on the wire by sqldb (statements from the runner's
// query counts in results that predate the wire counters).
func (m *model) statementsAudit(a *parityAudit) *document.Table {
	h, num := m.engineHeader("Workload", "")
	num[0], num[1] = false, false
	t := &document.Table{Caption: "Statements", Header: h, Numeric: num}
	for _, w := range m.Workloads {
		gs := m.headlineGroups(w)
		for _, pm := range perTxnMetrics {
			row, diff := perTxnRow(w, pm, gs)
			t.Rows = append(t.Rows, row)
			if diff != "" {
				a.diffs = append(a.diffs, parityDiff{what: diff})
			}
		}
		row := []document.Cell{{Text: w, Head: true}, {Text: "protocol (prepared or text)"}}
		for range gs {
			row = append(row, document.Cell{Text: "not recorded"})
		}
		t.Rows = append(t.Rows, row)
	}
	if len(t.Rows) == 0 {
		return nil
	}
	t.Foot = []string{"Per committed transaction over the measured window, counted on the wire by sqldb: every statement sent (BEGIN and COMMIT included; preparing one is a round trip, not a statement), retried attempts included, so small differences in retries show as decimals. The results do not record whether statements went prepared or as text."}
	return t
}

// perTxnRow is one per-transaction figure for each engine, and the difference when the engines'
// figures are more than 2% apart.
func perTxnRow(w string, pm perTxnMetric, gs []*group) ([]document.Cell, string) {
	cells := []document.Cell{{Text: w, Head: true}, {Text: pm.name}}
	lo, hi := math.Inf(1), math.Inf(-1)
	var vals []string
	for _, g := range gs {
		txt := "—"
		if g != nil {
			var n, tx int64
			recorded := len(g.Used) > 0
			for _, r := range g.Used {
				c, ok := pm.num(r)
				recorded = recorded && ok
				n += c
				tx += r.Transactions
			}
			switch {
			case !recorded:
				txt = "not recorded"
			case tx > 0:
				per := float64(n) / float64(tx)
				txt = document.Fixed(per, 2)
				lo, hi = math.Min(lo, per), math.Max(hi, per)
				vals = append(vals, txt+" on "+g.V.Name)
			}
		}
		cells = append(cells, document.Cell{Text: txt})
	}
	if hi > lo*1.02 {
		return cells, w + ": " + pm.name + " differ: " + strings.Join(vals, ", ")
	}
	return cells, ""
}

// parityVerdict is the audit's one line.
func (a *parityAudit) verdict() string {
	var unrec string
	if len(a.unrecorded) > 0 {
		unrec = " Not recorded in these results, so not compared: " + joinAnd(a.unrecorded) + "."
	}
	if len(a.diffs) == 0 && unrec == "" {
		return "Parity: equal."
	}
	if len(a.diffs) == 0 {
		return "Parity: no difference in what was recorded." + unrec
	}
	n, u := len(a.diffs), a.unexplained()
	s := fmt.Sprintf("Parity: %d difference%s", n, plural(n))
	switch {
	case u == 0:
		s += ", each deliberate (reasons below)."
	case u == n:
		s += ", none explained."
	default:
		s += fmt.Sprintf(", %d unexplained.", u)
	}
	return s + unrec
}

func orText(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func (m *model) paritySection() *document.Section {
	a := m.audit()
	s := &document.Section{ID: "parity", Heading: "Parity"}
	s.Paras = append(s.Paras, a.verdict())
	if p := m.profileLine(); p != "" {
		s.Paras = append(s.Paras, p)
	}
	if d := m.distribution(); d != "" {
		s.Paras = append(s.Paras, "Rows and keys drawn with the "+d+" distribution (sysbench --rand-type).")
	}
	if len(a.diffs) > 0 {
		t := &document.Table{Caption: "Differences", Header: []string{"Difference", "Reason"}}
		for _, d := range a.diffs {
			t.Rows = append(t.Rows, []document.Cell{{Text: d.what, Head: true}, {Text: orText(d.reason, "unexplained"), Failed: d.reason == ""}})
		}
		s.Tables = append(s.Tables, t)
	}
	for _, t := range []*document.Table{a.settings, m.translationsTable(), a.data, a.answers, a.statements} {
		if t != nil {
			s.Tables = append(s.Tables, t)
		}
	}
	return s
}

// profileLine names the profile the servers ran with, "" when no result recorded one.
func (m *model) profileLine() string {
	set := map[string]bool{}
	for _, r := range m.Results {
		if r.Profile != "" {
			set[r.Profile] = true
		}
	}
	what := map[string]string{"fair": "fair (the same settings on every engine)", "defaults": "defaults (each engine as its package ships it)",
		"as configured": "as configured (each server as its owner set it up: fairbench changed no setting)"}
	var parts []string
	for _, p := range sortedStrings(set) {
		parts = append(parts, orText(what[p], p))
	}
	if len(parts) == 0 {
		return ""
	}
	return "Profile: " + joinAnd(parts) + "."
}

// distribution names the random distributions the runs used, "" when none recorded one.
func (m *model) distribution() string {
	set := map[string]bool{}
	for _, r := range m.Results {
		if d := r.Workload.Options["rand-type"]; d != "" {
			set[d] = true
		}
	}
	return joinAnd(sortedStrings(set))
}

// pickCaveat is what the quick decision says beside a pick the audit does not clear: the
// unexplained differences that bear on it, by name.
func (m *model) pickCaveat(d decision) string {
	a := m.audit()
	if names := settingNames(a.bearingOn(m.writes(d))); len(names) > 0 {
		return fmt.Sprintf(" (not on equal terms: %s differ%s, see Parity)", joinAnd(names), pluralVerb(len(names)))
	}
	if n := len(a.bearingOn(m.writes(d))); n > 0 {
		return fmt.Sprintf(" (not on equal terms: %d unexplained difference%s, see Parity)", n, plural(n))
	}
	if a.defaults {
		return " (under each package's defaults: settings differ, see Parity)"
	}
	return ""
}

// bearingOn lists the unexplained differences that bear on a pick: all of them for a workload
// that writes (or one not known to be read-only), all but the write-only settings otherwise.
func (a *parityAudit) bearingOn(writes bool) []parityDiff {
	var out []parityDiff
	for _, d := range a.diffs {
		if d.reason == "" && (writes || !d.writes) {
			out = append(out, d)
		}
	}
	return out
}

func settingNames(ds []parityDiff) []string {
	var out []string
	for _, d := range ds {
		if d.setting == "" {
			return nil // a difference without a setting's name: counted instead
		}
		name, _, _ := strings.Cut(d.setting, " (")
		out = append(out, name)
	}
	return out
}

// pluralVerb is "s" for one subject ("durability differs"), "" for several.
func pluralVerb(n int) string {
	if n == 1 {
		return "s"
	}
	return ""
}

// writes says whether a pick's workload writes, from its runs' own statement counts: a memory
// row summarises every workload, so it does; a workload none of whose runs wrote is read-only.
func (m *model) writes(d decision) bool {
	if d.Resource && d.Workload == "" {
		return true
	}
	if d.TPCH {
		return false
	}
	w := strings.TrimSuffix(d.Workload, " (ramp)")
	seen := false
	for _, r := range m.Results {
		if r.WorkloadID() != w {
			continue
		}
		seen = true
		if r.Queries.Write > 0 {
			return true
		}
	}
	return !seen
}

// decidingDifferences names, before the picks, each unexplained setting difference and the picks
// it bears on: a reader must know what a verdict compares before reading it.
func (m *model) decidingDifferences(ds []decision) []string {
	a := m.audit()
	var out []string
	for _, diff := range a.bearingOn(true) {
		var rows []string
		for _, d := range ds {
			if (d.Winner != nil || d.Lead != nil || len(d.Tied) > 0) && (!diff.writes || m.writes(d)) {
				rows = appendOnce(rows, orText(d.Workload, d.UseCase))
			}
		}
		if len(rows) == 0 {
			continue
		}
		scope := "every pick below"
		if diff.writes {
			scope = "the picks of workloads that write"
		}
		out = append(out, fmt.Sprintf("⚠ Before the verdicts: %s. This bears on %s (%s).", diff.what, scope, strings.Join(rows, "; ")))
	}
	return out
}

func appendOnce(list []string, s string) []string {
	if containsStr(list, s) {
		return list
	}
	return append(list, s)
}
