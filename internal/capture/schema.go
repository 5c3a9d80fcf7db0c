package capture

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/fairbench/fairbench/internal/dialect"
	"github.com/fairbench/fairbench/internal/sqldb"
)

// table is a captured table: its portable columns, keys and rows, and what capture left out.
type table struct {
	name        string
	rows        int64
	columns     []*column
	primaryKey  []string
	indexes     [][]string
	foreignKeys []dialect.CatalogForeignKey
	notes       []string
}

// column is a captured column: its portable type, its shape on the source, and its generator.
type column struct {
	name          string
	portable      string
	length, scale int
	nullable      bool
	note          string
	profile       profile
	gen           string // the generator, as the workload file writes it: "uniform: [1, 100]"
	genKind       string // its name: sequence, uniform, ...
	null          float64
	values        []string // sampled values (--sample-values), for parameters compared with it
	cycle         int64    // a cycled sequence's period (crossProduct): its values are START..START+cycle-1
}

func (t *table) column(name string) *column {
	for _, c := range t.columns {
		if c.name == name {
			return c
		}
	}
	return nil
}

// identifier is what a workload file takes as a table or column name.
var identifier = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// readSchema reads the database's base tables through the engine's catalog and maps them to
// portable ones; a table or column that cannot be is left out with a note saying why.
func readSchema(ctx context.Context, c sqldb.Conn) ([]*table, []string, error) {
	cat := dialect.CatalogFor(c.Kind())
	cols, err := cat.Columns(ctx, c)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the columns: %w", err)
	}
	ixs, err := cat.Indexes(ctx, c)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the indexes: %w", err)
	}
	fks, err := cat.ForeignKeys(ctx, c)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the foreign keys: %w", err)
	}
	est, err := cat.RowEstimates(ctx, c)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the row estimates: %w", err)
	}
	var tables []*table
	var skipped []string
	byName := map[string]*table{}
	for _, cc := range cols {
		t := byName[cc.Table]
		if t == nil {
			t = &table{name: cc.Table, rows: est[cc.Table]}
			byName[cc.Table] = t
			tables = append(tables, t)
		}
		portable, length, scale, note, ok := dialect.PortableType(cc)
		if !ok || !identifier.MatchString(cc.Name) {
			t.notes = append(t.notes, fmt.Sprintf("column %s (%s) left out: no portable type or name stands for it", cc.Name, cc.Type))
			continue
		}
		t.columns = append(t.columns, &column{name: cc.Name, portable: portable, length: length, scale: scale, nullable: cc.Nullable, note: note})
	}
	for _, ix := range ixs {
		if t := byName[ix.Table]; t != nil && t.hasAll(ix.Columns) {
			if ix.Primary {
				t.primaryKey = ix.Columns
			} else if !slices.ContainsFunc(t.indexes, func(k []string) bool { return slices.Equal(k, ix.Columns) }) {
				t.indexes = append(t.indexes, ix.Columns)
			}
		}
	}
	for _, fk := range fks {
		if t, p := byName[fk.Table], byName[fk.RefTable]; t != nil && p != nil && t.hasAll(fk.Columns) && slices.Equal(fk.RefColumns, p.primaryKey) {
			t.foreignKeys = append(t.foreignKeys, fk)
		}
	}
	var kept []*table
	for _, t := range tables {
		switch {
		case strings.HasPrefix(t.name, "fairbench_"):
			skipped = append(skipped, fmt.Sprintf("table %s left out: fairbench's own record of a prepared data set", t.name))
		case !identifier.MatchString(t.name):
			skipped = append(skipped, fmt.Sprintf("table %q left out: a workload file names tables in lowercase letters, digits and _", t.name))
		case len(t.columns) == 0:
			skipped = append(skipped, fmt.Sprintf("table %s left out: none of its columns has a portable type", t.name))
		default:
			kept = append(kept, t)
		}
	}
	return parentsFirst(kept), skipped, nil
}

func (t *table) hasAll(names []string) bool {
	for _, n := range names {
		if t.column(n) == nil {
			return false
		}
	}
	return true
}

// parentsFirst orders tables so that a referenced table comes before those referencing it, as a
// workload file loads them; a cycle keeps the catalog's order for the rest.
func parentsFirst(tables []*table) []*table {
	var out []*table
	placed := map[string]bool{}
	for len(out) < len(tables) {
		progress := false
		for _, t := range tables {
			if placed[t.name] {
				continue
			}
			ready := true
			for _, fk := range t.foreignKeys {
				if fk.RefTable != t.name && !placed[fk.RefTable] {
					ready = false
				}
			}
			if ready {
				out, placed[t.name], progress = append(out, t), true, true
			}
		}
		if !progress {
			for _, t := range tables {
				if !placed[t.name] {
					t.foreignKeys = nil // a cycle: a workload file cannot load it as it is
					out, placed[t.name] = append(out, t), true
				}
			}
		}
	}
	return out
}

// countCap bounds the count capture makes of a table: an exact count below it, the engine's
// estimate above it (a count would scan the whole table).
const countCap = 1000000

// countRows replaces an estimate that is missing or small with the table's count, read through
// a LIMIT so that a large table whose estimate is missing (never analyzed: PostgreSQL's -1) is
// not scanned to its end.
func countRows(ctx context.Context, c sqldb.Conn, t *table) error {
	if t.rows >= countCap {
		return nil
	}
	q := fmt.Sprintf("SELECT count(*) FROM (SELECT 1 AS one FROM %s LIMIT %d) s", sqldb.QuoteIdent(c.Kind(), t.name), countCap+1)
	rows, err := c.Query(ctx, q)
	if err != nil {
		return fmt.Errorf("counting table %s: %w", t.name, err)
	}
	if n := atoi(rows[0][0]); n <= countCap {
		t.rows = n
	} else {
		t.rows = countCap
		t.notes = append(t.notes, fmt.Sprintf("rows: over %d, and the server has no estimate (run ANALYZE on the source): edit rows", countCap))
	}
	return nil
}

// fitGenerators gives every column the generator its profile suggests. A key column of whole
// numbers is a sequence (a single-column key; of a composite key, the column with the most
// distinct values, so that the key stays unique), a column referencing one is a ref, and other
// values are drawn from their range, widened so that no bound is a user's value.
func fitGenerators(tables []*table) {
	seqOf := map[string]bool{} // "table.column" of sequence columns
	for _, t := range tables {
		if !crossProduct(t) {
			if key := sequenceColumn(t); key != nil {
				key.gen, key.genKind = "sequence: "+strconv.FormatInt(sequenceStart(key), 10), "sequence"
				seqOf[t.name+"."+key.name] = true
			}
		}
		for _, fk := range t.foreignKeys {
			if len(fk.Columns) == 1 && seqOf[fk.RefTable+"."+fk.RefColumns[0]] {
				c := t.column(fk.Columns[0])
				if isWhole(c.portable) {
					c.gen, c.genKind = "ref: "+fk.RefTable+"."+fk.RefColumns[0], "ref"
				}
			}
		}
		for _, c := range t.columns {
			if c.gen == "" {
				c.gen, c.genKind = valueGen(c)
			}
			if p := c.profile; p.rows > 0 && p.nulls > 0 && c.nullable {
				c.null = math64(float64(p.nulls) / float64(p.rows))
			}
		}
	}
}

// sequenceStart is where a key's sequence starts: its smallest value, or 1 for a key of strings.
func sequenceStart(key *column) int64 {
	if !isWhole(key.portable) {
		return 1
	}
	return max(atoi(key.profile.min), 0)
}

func math64(share float64) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(share, 'f', 3, 64), 64)
	return max(v, 0.001)
}

func isWhole(portable string) bool {
	return portable == "smallint" || portable == "int" || portable == "bigint"
}

// crossProduct lays out a composite key of whole numbers whose rows are every combination of
// its columns' values (TPC-C's (w, d, c): 1 x 10 x 3000 = 30,000 rows) as that combination, the
// column with the most values varying fastest: each column keeps its source's range, and a
// lookup by the whole key finds its row. The sample must hold the whole table for the distinct
// counts to be the table's.
func crossProduct(t *table) bool {
	if len(t.primaryKey) < 2 || t.rows > SampleRows {
		return false
	}
	var cols []*column
	product := int64(1)
	for _, name := range t.primaryKey {
		c := t.column(name)
		if c == nil || !isWhole(c.portable) || c.profile.distinct < 1 {
			return false
		}
		lo, hi := atoi(c.profile.min), atoi(c.profile.max)
		if hi-lo+1 != c.profile.distinct { // a gap: not a dense range of keys
			return false
		}
		cols = append(cols, c)
		product *= c.profile.distinct
	}
	if product != t.rows {
		return false
	}
	slices.SortStableFunc(cols, func(a, b *column) int { return int(b.profile.distinct - a.profile.distinct) })
	every := int64(1)
	for _, c := range cols {
		c.gen = fmt.Sprintf("sequence: %d, every: %d, cycle: %d", atoi(c.profile.min), every, c.profile.distinct)
		c.genKind, c.cycle = "sequence", c.profile.distinct
		every *= c.profile.distinct
	}
	return true
}

// sequenceColumn is the column of t's primary key loaded as a sequence, which keeps every
// row's key unique: the key itself when it is one column; of a composite key, its whole-number
// column with the most distinct values (where that one is not unique alone, its values run past
// the source's range, and its note says so). A key of strings is a sequence too, written as
// numbers: random strings could repeat.
func sequenceColumn(t *table) *column {
	var best *column
	for _, name := range t.primaryKey {
		c := t.column(name)
		if c == nil || c.portable == "text" {
			continue
		}
		if best == nil || (isWhole(c.portable) && (!isWhole(best.portable) || c.profile.distinct > best.profile.distinct)) {
			best = c
		}
	}
	if best != nil && len(t.primaryKey) > 1 && best.profile.distinct < best.profile.rows {
		best.note = "part of a composite key: a sequence keeps the key unique; its values run past the source's range"
	}
	if best != nil && !isWhole(best.portable) && best.portable != "varchar" {
		return nil
	}
	return best
}

// valueGen is a column's generator from its range in the sample.
func valueGen(c *column) (gen, kind string) {
	p := c.profile
	switch c.portable {
	case "bool":
		t := p.trues
		f := max(p.rows-p.nulls-t, 0)
		if t == 0 || f == 0 {
			t, f = max(t, 1), max(f, 1)
		}
		return fmt.Sprintf("pick: [\"0\", \"1\"], weights: [%d, %d]", f, t), "pick"
	case "varchar", "text":
		lo, hi := max(p.minLen, 0), max(p.maxLen, 1)
		if c.portable == "varchar" {
			hi = min(hi, int64(c.length))
			lo = min(lo, hi)
		}
		if p.distinct == p.rows && p.rows > 0 && lo < 8 {
			lo = min(8, hi) // unique strings: long enough to stay unique
		}
		return fmt.Sprintf("string: [%d, %d]", lo, hi), "string"
	case "date", "timestamp":
		from, to, ok := yearBounds(p.min, p.max)
		if !ok {
			from, to = "2024-01-01", "2024-12-31"
		}
		return fmt.Sprintf("time: [%s, %s]", from, to), "time"
	case "decimal":
		lo, hi := roundOut(atof(p.min), atof(p.max))
		// Widened bounds stay within what decimal(P,S) holds.
		limit := math.Pow10(c.length-c.scale) - math.Pow10(-c.scale)
		lo, hi = max(lo, -limit), min(hi, limit)
		return fmt.Sprintf("decimal: [%s, %s]", fmtNum(lo), fmtNum(hi)), "decimal"
	}
	lo, hi := roundOut(atof(p.min), atof(p.max))
	if lo == hi {
		hi = lo + 1
	}
	return fmt.Sprintf("uniform: [%s, %s]", fmtNum(lo), fmtNum(hi)), "uniform"
}

func atof(s string) float64 {
	v, _ := strconv.ParseFloat(s, 64)
	return v
}

func fmtNum(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
