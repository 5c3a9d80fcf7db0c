// Package oltp is sysbench 1.0.20's OLTP family (oltp_common.lua and the scripts built on it):
// the same sbtest schema, data shapes, statements, per-transaction statement counts, table choice
// per statement group and random distributions, so a figure can be set beside sysbench's.
package oltp

import (
	"context"
	"fmt"

	"github.com/fairbench/fairbench/internal/randgen"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/workload"
)

// The templates of sysbench's c and pad columns: groups of 11 random digits joined by '-'.
const (
	cTemplate   = "###########-###########-###########-###########-###########-###########-###########-###########-###########-###########"
	padTemplate = "###########-###########-###########-###########-###########"
)

// mix says which statement groups one transaction runs, and how many of each, mirroring the
// event() function of each sysbench script.
type mix struct {
	trx             bool
	pointSelects    int
	simpleRanges    int
	sumRanges       int
	orderRanges     int
	distinctRanges  int
	indexUpdates    int
	nonIndexUpdates int
	deleteInserts   int
	deletes         int // oltp_delete: a lone DELETE
	inserts         int // oltp_insert: a lone INSERT with an auto-increment id
	randomPoints    int // select_random_points: points in the IN() list
	randomRanges    int // select_random_ranges: BETWEEN ranges OR-ed together
}

type config struct {
	name            string
	tables          int
	tableSize       int
	rangeSize       int
	delta           int
	createSecondary bool
	storageEngine   string
	mix             mix
}

var commonOptions = []workload.Option{
	opt("tables", "4", "number of sbtest tables"),
	{Name: "table-size", Default: "100000", Help: "rows per table", Max: workload.MaxInt},
	opt("range-size", "100", "rows in each range SELECT"),
	opt("point-selects", "10", "point SELECTs per transaction"),
	opt("simple-ranges", "1", "simple range SELECTs per transaction"),
	opt("sum-ranges", "1", "SELECT SUM() ranges per transaction"),
	opt("order-ranges", "1", "SELECT ... ORDER BY ranges per transaction"),
	opt("distinct-ranges", "1", "SELECT DISTINCT ranges per transaction"),
	opt("index-updates", "1", "UPDATEs of the indexed column k per transaction"),
	opt("non-index-updates", "1", "UPDATEs of the non-indexed column c per transaction"),
	opt("delete-inserts", "1", "DELETE + INSERT pairs of the same id per transaction"),
	opt("range-selects", "on", "run the range SELECTs at all"),
	opt("skip-trx", "off", "run in autocommit mode, without BEGIN/COMMIT"),
	opt("create-secondary", "on", "create the secondary index on k after loading"),
	opt("mysql-storage-engine", "innodb", "storage engine for MySQL and MariaDB tables"),
}

type family struct {
	name, desc string
	extra      []workload.Option
	// defaults overrides common option defaults for this member.
	defaults map[string]string
	build    func(o workload.Options, c *config) error
}

func withDefaults(opts []workload.Option, over map[string]string, extra []workload.Option) []workload.Option {
	out := make([]workload.Option, 0, len(opts)+len(extra))
	for _, o := range opts {
		if v, ok := over[o.Name]; ok {
			o.Default = v
		}
		out = append(out, o)
	}
	return append(out, extra...)
}

func init() {
	members := []family{
		{name: "oltp_read_write", desc: "sysbench OLTP read/write: 10 point selects, 4 ranges, 2 updates, delete+insert in BEGIN/COMMIT (20 queries)",
			build: func(o workload.Options, c *config) error { return readMix(o, c, true, true) }},
		{name: "oltp_read_only", desc: "sysbench OLTP read-only: 10 point selects and 4 range selects in BEGIN/COMMIT (16 queries)",
			build: func(o workload.Options, c *config) error { return readMix(o, c, true, false) }},
		{name: "oltp_write_only", desc: "sysbench OLTP write-only: 2 updates and delete+insert in BEGIN/COMMIT (6 queries)",
			build: func(o workload.Options, c *config) error { return readMix(o, c, false, true) }},
		{name: "oltp_point_select", desc: "sysbench point select: one primary-key SELECT per transaction, autocommit",
			build: func(o workload.Options, c *config) error { c.mix.pointSelects = 1; return nil }},
		{name: "oltp_insert", desc: "sysbench insert: one INSERT with an auto-increment id per transaction, autocommit",
			build: func(o workload.Options, c *config) error { c.mix.inserts = 1; return nil }},
		{name: "oltp_update_index", desc: "sysbench update index: UPDATE of the indexed column k, autocommit",
			build: func(o workload.Options, c *config) error { return intOpt(o, "index-updates", &c.mix.indexUpdates) }},
		{name: "oltp_update_non_index", desc: "sysbench update non-index: UPDATE of the non-indexed column c, autocommit",
			build: func(o workload.Options, c *config) error {
				return intOpt(o, "non-index-updates", &c.mix.nonIndexUpdates)
			}},
		{name: "oltp_delete", desc: "sysbench delete: one DELETE by primary key per transaction, autocommit",
			build: func(o workload.Options, c *config) error { c.mix.deletes = 1; return nil }},
		{name: "select_random_points", desc: "sysbench select_random_points: SELECT by k IN (10 random points) on sbtest1",
			extra: []workload.Option{opt("random-points", "10", "points in the IN() clause")},
			build: func(o workload.Options, c *config) error { return intOpt(o, "random-points", &c.mix.randomPoints) }},
		{name: "select_random_ranges", desc: "sysbench select_random_ranges: SELECT count(k) over 10 OR-ed k BETWEEN ranges on sbtest1",
			extra: []workload.Option{opt("number-of-ranges", "10", "BETWEEN ranges per SELECT"), opt("delta", "5", "size of each BETWEEN range")},
			build: func(o workload.Options, c *config) error {
				if err := intOpt(o, "number-of-ranges", &c.mix.randomRanges); err != nil {
					return err
				}
				return intOpt(o, "delta", &c.delta)
			}},
		{name: "oltp_90_10", desc: "90% reads: 9 point selects + 1 non-index update in BEGIN/COMMIT (12 queries)",
			defaults: map[string]string{"point-selects": "9", "non-index-updates": "1"},
			build: func(o workload.Options, c *config) error {
				skip, err := o.Bool("skip-trx")
				if err != nil {
					return err
				}
				c.mix.trx = !skip
				if err := intOpt(o, "point-selects", &c.mix.pointSelects); err != nil {
					return err
				}
				return intOpt(o, "non-index-updates", &c.mix.nonIndexUpdates)
			}},
	}
	for _, m := range members {
		m := m
		workload.Register(workload.Spec{
			Name:        m.name,
			Description: m.desc,
			Options:     withDefaults(commonOptions, m.defaults, m.extra),
			Dataset:     "sbtest",
			DataOptions: []string{"tables", "table-size", "create-secondary", "mysql-storage-engine"},
			New: func(o workload.Options) (workload.Workload, error) {
				c, err := baseConfig(m.name, o)
				if err != nil {
					return nil, err
				}
				if err := m.build(o, c); err != nil {
					return nil, err
				}
				return &oltp{cfg: *c}, nil
			},
		})
	}
}

func opt(name, def, help string) workload.Option {
	return workload.Option{Name: name, Default: def, Help: help}
}

func intOpt(o workload.Options, name string, dst *int) error {
	n, err := o.Int(name, 0)
	*dst = n
	return err
}

func baseConfig(name string, o workload.Options) (*config, error) {
	c := &config{name: name, storageEngine: o["mysql-storage-engine"]}
	var err error
	if c.tables, err = o.Int("tables", 1); err != nil {
		return nil, err
	}
	if c.tableSize, err = o.Int("table-size", 1); err != nil {
		return nil, err
	}
	if c.rangeSize, err = o.Int("range-size", 1); err != nil {
		return nil, err
	}
	if c.createSecondary, err = o.Bool("create-secondary"); err != nil {
		return nil, err
	}
	if !validIdent(c.storageEngine) {
		return nil, fmt.Errorf("--mysql-storage-engine %q is not a storage engine name", c.storageEngine)
	}
	return c, nil
}

func validIdent(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// readMix fills the statement counts of oltp_read_write (reads and writes), oltp_read_only and
// oltp_write_only from the options, as their sysbench scripts do.
func readMix(o workload.Options, c *config, reads, writes bool) error {
	skip, err := o.Bool("skip-trx")
	if err != nil {
		return err
	}
	c.mix.trx = !skip
	if reads {
		if err := intOpt(o, "point-selects", &c.mix.pointSelects); err != nil {
			return err
		}
		ranges, err := o.Bool("range-selects")
		if err != nil {
			return err
		}
		if ranges {
			for name, dst := range map[string]*int{"simple-ranges": &c.mix.simpleRanges, "sum-ranges": &c.mix.sumRanges,
				"order-ranges": &c.mix.orderRanges, "distinct-ranges": &c.mix.distinctRanges} {
				if err := intOpt(o, name, dst); err != nil {
					return err
				}
			}
		}
	}
	if writes {
		for name, dst := range map[string]*int{"index-updates": &c.mix.indexUpdates,
			"non-index-updates": &c.mix.nonIndexUpdates, "delete-inserts": &c.mix.deleteInserts} {
			if err := intOpt(o, name, dst); err != nil {
				return err
			}
		}
	}
	return nil
}

type oltp struct{ cfg config }

// QueriesPerTransaction is how many statements one transaction sends when none is retried.
func (w *oltp) QueriesPerTransaction() (read, write, other int) {
	m := w.cfg.mix
	read = m.pointSelects + m.simpleRanges + m.sumRanges + m.orderRanges + m.distinctRanges
	if m.randomPoints > 0 || m.randomRanges > 0 {
		read++
	}
	write = m.indexUpdates + m.nonIndexUpdates + 2*m.deleteInserts + m.deletes + m.inserts
	if m.trx {
		other = 2
	}
	return
}

func tableName(n int) string { return fmt.Sprintf("sbtest%d", n) }

// NewWorker prepares, per table, only the statements this workload's transaction uses, as
// sysbench's prepare_statements does.
func (w *oltp) NewWorker(ctx context.Context, conn sqldb.Conn, rng *randgen.Rand, thread, threads int) (workload.Worker, error) {
	m := w.cfg.mix
	wk := &worker{cfg: &w.cfg, conn: conn, rng: rng, c: make([]byte, len(cTemplate)), pad: make([]byte, len(padTemplate))}
	wk.tables = make([]tableStmts, w.cfg.tables+1)
	type want struct {
		n   int
		sql string
		dst func(t *tableStmts) *sqldb.Stmt
	}
	wants := []want{
		{m.pointSelects, "SELECT c FROM %s WHERE id=?", func(t *tableStmts) *sqldb.Stmt { return &t.pointSelect }},
		{m.simpleRanges, "SELECT c FROM %s WHERE id BETWEEN ? AND ?", func(t *tableStmts) *sqldb.Stmt { return &t.simpleRange }},
		{m.sumRanges, "SELECT SUM(k) FROM %s WHERE id BETWEEN ? AND ?", func(t *tableStmts) *sqldb.Stmt { return &t.sumRange }},
		{m.orderRanges, "SELECT c FROM %s WHERE id BETWEEN ? AND ? ORDER BY c", func(t *tableStmts) *sqldb.Stmt { return &t.orderRange }},
		{m.distinctRanges, "SELECT DISTINCT c FROM %s WHERE id BETWEEN ? AND ? ORDER BY c", func(t *tableStmts) *sqldb.Stmt { return &t.distinctRange }},
		{m.indexUpdates, "UPDATE %s SET k=k+1 WHERE id=?", func(t *tableStmts) *sqldb.Stmt { return &t.indexUpdate }},
		{m.nonIndexUpdates, "UPDATE %s SET c=? WHERE id=?", func(t *tableStmts) *sqldb.Stmt { return &t.nonIndexUpdate }},
		{m.deleteInserts + m.deletes, "DELETE FROM %s WHERE id=?", func(t *tableStmts) *sqldb.Stmt { return &t.delete }},
		{m.deleteInserts, "INSERT INTO %s (id, k, c, pad) VALUES (?, ?, ?, ?)", func(t *tableStmts) *sqldb.Stmt { return &t.insert }},
		{m.inserts, "INSERT INTO %s (k, c, pad) VALUES (?, ?, ?)", func(t *tableStmts) *sqldb.Stmt { return &t.autoInsert }},
	}
	for t := 1; t <= w.cfg.tables; t++ {
		for _, s := range wants {
			if s.n == 0 {
				continue
			}
			st, err := conn.Prepare(ctx, fmt.Sprintf(s.sql, tableName(t)))
			if err != nil {
				return nil, w.missingTables(err)
			}
			*s.dst(&wk.tables[t]) = st
		}
	}
	if m.randomPoints > 0 {
		sql := "SELECT id, k, c, pad FROM sbtest1 WHERE k IN (?" + repeat(", ?", m.randomPoints-1) + ")"
		st, err := conn.Prepare(ctx, sql)
		if err != nil {
			return nil, w.missingTables(err)
		}
		wk.randomPoints, wk.args = st, make([]any, m.randomPoints)
	}
	if m.randomRanges > 0 {
		sql := "SELECT count(k) FROM sbtest1 WHERE k BETWEEN ? AND ?" + repeat(" OR k BETWEEN ? AND ?", m.randomRanges-1)
		st, err := conn.Prepare(ctx, sql)
		if err != nil {
			return nil, w.missingTables(err)
		}
		wk.randomRanges, wk.args = st, make([]any, 2*m.randomRanges)
	}
	// select_random_*: each thread draws from its own slice of the key space, as sysbench does.
	rlen := w.cfg.tableSize / threads
	wk.segLo = uint32(rlen * thread)
	wk.segHi = wk.segLo + uint32(rlen)
	return wk, nil
}

func repeat(s string, n int) string {
	out := ""
	for i := 0; i < n; i++ {
		out += s
	}
	return out
}

func (w *oltp) missingTables(err error) error {
	if sqldb.IsUndefinedTable(err) {
		return &workload.NotPreparedError{Workload: w.cfg.name, Detail: "table sbtest1.." + tableName(w.cfg.tables) + " not found"}
	}
	return err
}
