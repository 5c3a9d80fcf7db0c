package workloadfile

import (
	"context"
	"fmt"
	"slices"

	"github.com/fairbench/fairbench/internal/randgen"
	"github.com/fairbench/fairbench/internal/workload"
)

// Prepare creates the file's tables (the primary key up front where the engine clusters rows by
// it), loads every table on a connection of its own through the engine's bulk path, then builds
// the indexes and foreign keys and brings the statistics up to date (workload.Table's one path).
// Each table's rows come from a generator seeded by the seed and the table's place in the file,
// whatever the number of load threads, so every engine loads the same rows.
func (w *fileWorkload) Prepare(ctx context.Context, env *workload.Env) error {
	return workload.PrepareTables(ctx, env, w.f.Path, w.tables())
}

// tables are the file's tables as workload.Table: a foreign key's columns get an index of their
// own where none starts with them, as InnoDB would build, so every engine holds the same
// indexes; the keys are checked, since generated values need not reference existing rows.
func (w *fileWorkload) tables() []workload.Table {
	out := make([]workload.Table, len(w.f.Tables))
	for ti, t := range w.f.Tables {
		wt := workload.Table{Name: t.Name, PrimaryKey: t.PrimaryKey, Rows: w.rows[t.Name], Row: rowOf(t)}
		for _, c := range t.Columns {
			wt.Columns = append(wt.Columns, workload.Column{Name: c.Name, Type: c.Type, Length: c.Length, Scale: c.Scale, Null: c.Null > 0})
		}
		for i, ix := range t.Indexes {
			wt.Indexes = append(wt.Indexes, workload.Index{Name: fmt.Sprintf("%s_ix%d", t.Name, i+1), Columns: ix})
		}
		for i, fk := range t.ForeignKeys {
			if !t.indexed(fk.Columns) {
				wt.Indexes = append(wt.Indexes, workload.Index{Name: fmt.Sprintf("%s_fk%d_ix", t.Name, i+1), Columns: fk.Columns})
			}
			wt.ForeignKeys = append(wt.ForeignKeys, workload.ForeignKey{Name: fmt.Sprintf("%s_fk%d", t.Name, i+1),
				Columns: fk.Columns, RefTable: fk.RefTable, RefColumns: fk.RefColumns})
		}
		out[ti] = wt
	}
	return out
}

// rowOf writes row i of t (numbered from 1; the generators count from 0), column by column in
// order, so a seed gives one set of rows on every engine.
func rowOf(t *Table) func(r *workload.Rows, i int64, rng *randgen.Rand) {
	return func(r *workload.Rows, i int64, rng *randgen.Rand) {
		for _, c := range t.Columns {
			if c.Null > 0 && rng.Float64() < c.Null {
				r.Null()
				continue
			}
			r.Text(func(b []byte) []byte { return c.Gen.Append(b, rng, i-1) })
		}
	}
}

func (t *Table) indexed(cols []string) bool {
	for _, k := range append([][]string{t.PrimaryKey}, t.Indexes...) {
		if len(k) >= len(cols) && slices.Equal(k[:len(cols)], cols) {
			return true
		}
	}
	return false
}

// rowHeader is what every engine adds to a stored row at the least: PostgreSQL's 23-byte tuple
// header and line pointer, InnoDB's transaction id, roll pointer and record header.
const rowHeader = 24

// minDataBytes is the least the file's rows take on any engine: each row's header and its
// columns' values at their shortest (a string its minimum length), before indexes and free
// space, so prepare refuses a data set that cannot fit before it fills a disk.
func (w *fileWorkload) minDataBytes() int64 {
	var total int64
	for _, t := range w.f.Tables {
		row := int64(rowHeader)
		for _, c := range t.Columns {
			row += minValueBytes(c)
		}
		total += w.rows[t.Name] * row
	}
	return total
}

// minValueBytes is the fewest bytes a column's value takes stored.
func minValueBytes(c *Column) int64 {
	switch c.Type {
	case "smallint":
		return 2
	case "int", "date":
		return 4
	case "bigint", "timestamp":
		return 8
	case "bool":
		return 1
	case "decimal":
		return int64(c.Length)/4 + 2 // a base-10000 digit group per 4 digits, and a header
	}
	if c.Gen == nil { // varchar and text
		return 1
	}
	switch c.Gen.Kind {
	case "string":
		return 1 + c.Gen.Min
	case "pattern":
		return 1 + int64(len(c.Gen.Pattern))
	}
	return 1 + 1
}
