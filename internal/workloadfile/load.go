package workloadfile

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/fairbench/fairbench/internal/dialect"
	"github.com/fairbench/fairbench/internal/randgen"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/workload"
)

// Prepare creates the file's tables (the primary key up front where the engine clusters rows by
// it), loads every table on a connection of its own through the engine's bulk path, then builds
// the indexes and foreign keys and brings the statistics up to date. Each table's rows come from
// a generator seeded by the seed and the table's place in the file, whatever the number of load
// threads, so every engine loads the same rows.
func (w *fileWorkload) Prepare(ctx context.Context, env *workload.Env) error {
	c, err := workload.ConnectClaiming(ctx, env, w.f.Path, w.tableNames())
	if err != nil {
		return err
	}
	defer c.Close()
	d := dialect.Of(c)
	for _, t := range w.f.Tables {
		if err := workload.CreateOwned(ctx, c, t.Name, createTable(d, t)); err != nil {
			return fmt.Errorf("creating table %s on %s: %w", t.Name, c.Kind(), err)
		}
	}
	defer workload.ReadyBulkLoad(ctx, c)()
	if err := w.loadTables(ctx, env); err != nil {
		return err
	}
	return w.addKeys(ctx, c, d)
}

// createTable is a table's CREATE TABLE in the engine's types.
func createTable(d dialect.Dialect, t *Table) string {
	var cols []string
	for _, c := range t.Columns {
		def := c.Name + " " + d.TypeName(c.Type, c.Length, c.Scale)
		if c.Null == 0 {
			def += " NOT NULL"
		}
		cols = append(cols, def)
	}
	if d.Caps().PrimaryKeyAtCreate && len(t.PrimaryKey) > 0 {
		cols = append(cols, "PRIMARY KEY ("+strings.Join(t.PrimaryKey, ", ")+")")
	}
	return "CREATE TABLE " + t.Name + " (" + strings.Join(cols, ", ") + ")"
}

// addKeys adds what is cheaper to build once after the load: the primary keys (where not declared
// up front), the indexes, then the foreign keys, which need their parents' keys; then the
// statistics, so the first measured run plans with them.
func (w *fileWorkload) addKeys(ctx context.Context, c sqldb.Conn, d dialect.Dialect) error {
	var stmts []string
	for _, t := range w.f.Tables {
		if !d.Caps().PrimaryKeyAtCreate && len(t.PrimaryKey) > 0 {
			stmts = append(stmts, fmt.Sprintf("ALTER TABLE %s ADD PRIMARY KEY (%s)", t.Name, strings.Join(t.PrimaryKey, ", ")))
		}
		for i, ix := range t.Indexes {
			stmts = append(stmts, fmt.Sprintf("CREATE INDEX %s_ix%d ON %s (%s)", t.Name, i+1, t.Name, strings.Join(ix, ", ")))
		}
	}
	for _, t := range w.f.Tables {
		for i, fk := range t.ForeignKeys {
			// InnoDB indexes a foreign key's columns itself where no index starts with them;
			// fairbench does so on every engine, so that all hold the same indexes.
			if !t.indexed(fk.Columns) {
				stmts = append(stmts, fmt.Sprintf("CREATE INDEX %s_fk%d_ix ON %s (%s)", t.Name, i+1, t.Name, strings.Join(fk.Columns, ", ")))
			}
			stmts = append(stmts, fmt.Sprintf("ALTER TABLE %s ADD CONSTRAINT %s_fk%d FOREIGN KEY (%s) REFERENCES %s (%s)",
				t.Name, t.Name, i+1, strings.Join(fk.Columns, ", "), fk.RefTable, strings.Join(fk.RefColumns, ", ")))
		}
	}
	if err := workload.ExecAll(ctx, c, stmts); err != nil {
		return err
	}
	for _, t := range w.f.Tables {
		if err := d.Maintain(ctx, c, t.Name); err != nil {
			return fmt.Errorf("statistics of %s: %w", t.Name, err)
		}
	}
	return nil
}

// loadTables loads the tables in parallel, one connection each, with a progress bar over all rows.
func (w *fileWorkload) loadTables(ctx context.Context, env *workload.Env) error {
	var total int64
	for _, t := range w.f.Tables {
		total += w.rows[t.Name]
	}
	var done atomic.Int64
	progress := func(n int64) {
		if env.Progress != nil {
			env.Progress(done.Add(n), total)
		}
	}
	idx := make([]int, len(w.f.Tables))
	for i := range idx {
		idx[i] = i
	}
	return workload.OnConnections(ctx, env, env.LoadThreads, idx, func(conn sqldb.Conn, i int) error {
		t := w.f.Tables[i]
		rng := env.Rand.New(env.Seed*1000003 + uint64(i) + 1)
		err := workload.BulkLoad(ctx, conn, t.Name, columnNames(t), 0, w.rows[t.Name]-1, func(b []byte, row int64) []byte {
			return appendRow(b, t, rng, row)
		}, progress)
		if err != nil {
			return fmt.Errorf("loading %s: %w", t.Name, err)
		}
		return nil
	})
}

// appendRow writes row number row of t as a text line, column by column in order, so a seed
// gives one set of rows on every engine.
func appendRow(line []byte, t *Table, rng *randgen.Rand, row int64) []byte {
	for i, c := range t.Columns {
		if i > 0 {
			line = append(line, '\t')
		}
		if c.Null > 0 && rng.Float64() < c.Null {
			line = append(line, '\\', 'N')
			continue
		}
		line = c.Gen.Append(line, rng, row)
	}
	return append(line, '\n')
}

// indexed says whether the primary key or an index starts with cols.
func (t *Table) indexed(cols []string) bool {
	for _, k := range append([][]string{t.PrimaryKey}, t.Indexes...) {
		if len(k) >= len(cols) && slices.Equal(k[:len(cols)], cols) {
			return true
		}
	}
	return false
}

func columnNames(t *Table) []string {
	out := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		out[i] = c.Name
	}
	return out
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
