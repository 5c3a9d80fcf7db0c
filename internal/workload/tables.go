package workload

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/fairbench/fairbench/internal/dialect"
	"github.com/fairbench/fairbench/internal/randgen"
	"github.com/fairbench/fairbench/internal/sqldb"
)

// Table is a table a workload creates and fills, declared as data: its columns in portable types
// (dialect.Types), its keys and indexes, and its rows as a function of the row number. One path
// creates, loads and keys every such table the same way (CreateTables, LoadTables, KeyTables),
// as CockroachDB's workloads declare theirs; workload files read theirs from YAML into it.
type Table struct {
	Name        string
	Columns     []Column
	PrimaryKey  []string
	Indexes     []Index
	ForeignKeys []ForeignKey
	// FillFactor, above 0, leaves room in each page for updates (pgbench -F), where the engine
	// has such a table option.
	FillFactor int
	// Rows are generated rows, numbered 1..Rows; Row writes row i's fields in Load's order (nil
	// Load: every column, in order).
	Rows int64
	Load []string
	Row  func(r *Rows, i int64, rng *randgen.Rand)
	// Chunk is how many rows one loading job writes (0: the whole table). Each job draws from a
	// generator of its own, seeded from its place among all jobs, so the rows do not depend on
	// how many connections load them.
	Chunk int64
	// Serial names a column whose counter must continue after the loaded ids: rows inserted
	// later (an ingest workload's) take the next ones.
	Serial string
}

// Column is one column: a portable type, its length and scale where the type takes them.
type Column struct {
	Name          string
	Type          string
	Length, Scale int
	Null          bool // NULL allowed
}

// Index is a secondary index, built after the load.
type Index struct {
	Name    string
	Columns []string
}

// ForeignKey is columns that reference another table's key, added after the load.
type ForeignKey struct {
	Name       string
	Columns    []string
	RefTable   string
	RefColumns []string
	// Trusted: the generated rows satisfy it by construction, so it is added without checking
	// them where the engine allows (InnoDB then adds it in place instead of copying the table).
	Trusted bool
}

// PrepareTables is the whole Prepare of a workload that is its tables: it claims them (named as
// declared, parents first), then creates, loads and keys them.
func PrepareTables(ctx context.Context, env *Env, workloadName string, tables []Table) error {
	names := make([]string, len(tables))
	for i, t := range tables {
		names[i] = t.Name
	}
	c, err := ConnectClaiming(ctx, env, workloadName, names)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := CreateTables(ctx, c, tables); err != nil {
		return err
	}
	if err := LoadTables(ctx, env, c, tables); err != nil {
		return err
	}
	return KeyTables(ctx, env, c, tables)
}

// CreateTables creates the tables, each marked as fairbench's (CreateOwned), the primary key
// declared up front where the engine clusters rows by it (InnoDB) and added by KeyTables
// elsewhere, where building it once after the load is cheaper.
func CreateTables(ctx context.Context, c sqldb.Conn, tables []Table) error {
	d := dialect.Of(c)
	for _, t := range tables {
		if err := CreateOwned(ctx, c, t.Name, createSQL(d, t)); err != nil {
			return fmt.Errorf("creating table %s on %s: %w", t.Name, c.Kind(), err)
		}
	}
	return nil
}

func createSQL(d dialect.Dialect, t Table) string {
	var cols []string
	for _, c := range t.Columns {
		def := c.Name + " " + d.TypeName(c.Type, c.Length, c.Scale)
		if !c.Null && !dialect.NotNullByType(c.Type) {
			def += " NOT NULL"
		}
		cols = append(cols, def)
	}
	if d.Caps().PrimaryKeyAtCreate && len(t.PrimaryKey) > 0 {
		cols = append(cols, "PRIMARY KEY ("+strings.Join(t.PrimaryKey, ", ")+")")
	}
	ddl := "CREATE TABLE " + t.Name + " (" + strings.Join(cols, ", ") + ")"
	if t.FillFactor > 0 {
		ddl += d.FillFactor(t.FillFactor)
	}
	return ddl
}

// loadJob is rows lo..hi of one table, the seq-th job of all.
type loadJob struct {
	t      *Table
	lo, hi int64
	seq    uint64
}

// LoadTables loads every table's rows over env.LoadThreads connections through the engine's bulk
// path (BulkLoad, readied on c), with one progress over all of them.
func LoadTables(ctx context.Context, env *Env, c sqldb.Conn, tables []Table) error {
	defer ReadyBulkLoad(ctx, c)()
	var jobs []loadJob
	var total int64
	for i := range tables {
		t := &tables[i]
		step := t.Chunk
		if step <= 0 {
			step = max(t.Rows, 1)
		}
		for lo := int64(1); lo <= t.Rows; lo += step {
			jobs = append(jobs, loadJob{t: t, lo: lo, hi: min(lo+step-1, t.Rows), seq: uint64(len(jobs))})
		}
		total += t.Rows
	}
	var done atomic.Int64
	progress := func(n int64) {
		if env.Progress != nil {
			env.Progress(done.Add(n), total)
		}
	}
	return OnConnections(ctx, env, env.LoadThreads, jobs, func(conn sqldb.Conn, j loadJob) error {
		rng := env.Rand.New(env.Seed*1000003 + j.seq + 1)
		r := &Rows{}
		err := BulkLoad(ctx, conn, j.t.Name, j.t.loadColumns(), j.lo, j.hi, func(b []byte, i int64) []byte {
			r.Buf = b
			r.Reset()
			j.t.Row(r, i, rng)
			r.End()
			return r.Buf
		}, progress)
		if err != nil {
			return fmt.Errorf("loading %s: %w", j.t.Name, err)
		}
		return nil
	})
}

func (t *Table) loadColumns() []string {
	if t.Load != nil {
		return t.Load
	}
	names := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		names[i] = c.Name
	}
	return names
}

// KeyTables adds what is cheaper to build once after the load: the primary keys (where not
// declared up front), the indexes and the serial counters, table by table in parallel; then the
// foreign keys, which need their parents' keys: the checked ones one after another on c (two
// tables that reference each other would deadlock adding theirs at once, and a checked key's
// tables are the user's design), the trusted ones table by table in parallel on connections
// that turn the checks off; then the statistics, so the first measured run plans with them (on
// PostgreSQL a VACUUM ANALYZE, as pgbench -i does, so the first run does not pay for setting
// hint bits on freshly loaded rows).
func KeyTables(ctx context.Context, env *Env, c sqldb.Conn, tables []Table) error {
	d := dialect.Of(c)
	eachTable := func(do func(sqldb.Conn, Table) error) error {
		return OnConnections(ctx, env, env.LoadThreads, tables, do)
	}
	if err := eachTable(func(conn sqldb.Conn, t Table) error { return ExecAll(ctx, conn, keysSQL(d, t)) }); err != nil {
		return err
	}
	for _, t := range tables {
		if err := ExecAll(ctx, c, foreignKeysSQL(t, false)); err != nil {
			return err
		}
	}
	if err := eachTable(func(conn sqldb.Conn, t Table) error {
		if fks := foreignKeysSQL(t, true); len(fks) > 0 {
			return ExecAll(ctx, conn, append(d.LoadingSession(), fks...))
		}
		return nil
	}); err != nil {
		return err
	}
	return eachTable(func(conn sqldb.Conn, t Table) error {
		if err := d.Maintain(ctx, conn, t.Name); err != nil {
			return fmt.Errorf("statistics of %s: %w", t.Name, err)
		}
		return nil
	})
}

func keysSQL(d dialect.Dialect, t Table) []string {
	var ddl []string
	if !d.Caps().PrimaryKeyAtCreate && len(t.PrimaryKey) > 0 {
		ddl = append(ddl, fmt.Sprintf("ALTER TABLE %s ADD PRIMARY KEY (%s)", t.Name, strings.Join(t.PrimaryKey, ", ")))
	}
	for _, ix := range t.Indexes {
		ddl = append(ddl, fmt.Sprintf("CREATE INDEX %s ON %s (%s)", ix.Name, t.Name, strings.Join(ix.Columns, ", ")))
	}
	if t.Serial != "" {
		// Explicit ids may leave the serial counter at 1.
		if q := d.AfterExplicitIDs(t.Name, t.Serial, t.Rows); q != "" {
			ddl = append(ddl, q)
		}
	}
	return ddl
}

// foreignKeysSQL adds t's trusted or its checked foreign keys.
func foreignKeysSQL(t Table, trusted bool) []string {
	var ddl []string
	for _, fk := range t.ForeignKeys {
		if fk.Trusted != trusted {
			continue
		}
		ddl = append(ddl, fmt.Sprintf("ALTER TABLE %s ADD CONSTRAINT %s FOREIGN KEY (%s) REFERENCES %s (%s)",
			t.Name, fk.Name, strings.Join(fk.Columns, ", "), fk.RefTable, strings.Join(fk.RefColumns, ", ")))
	}
	return ddl
}
