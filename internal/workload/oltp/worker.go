package oltp

import (
	"context"

	"github.com/fairbench/fairbench/internal/randgen"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/workload"
)

type tableStmts struct {
	pointSelect, simpleRange, sumRange, orderRange, distinctRange sqldb.Stmt
	indexUpdate, nonIndexUpdate, delete, insert, autoInsert       sqldb.Stmt
}

type worker struct {
	cfg    *config
	conn   sqldb.Conn
	rng    *randgen.Rand
	tables []tableStmts // index 1..tables, as sysbench numbers them

	randomPoints, randomRanges sqldb.Stmt
	args                       []any
	segLo, segHi               uint32

	c, pad []byte // reused buffers for random strings: no allocation per statement
}

// The helpers below mirror oltp_common.lua: get_table_num is uniform, get_id uses the
// distribution of --rand-type.
func (w *worker) table() *tableStmts { return &w.tables[w.rng.Uniform(1, uint32(w.cfg.tables))] }
func (w *worker) id() int64          { return int64(w.rng.Default(1, uint32(w.cfg.tableSize))) }

func (w *worker) Transaction(ctx context.Context, q *workload.Txn) error {
	m := &w.cfg.mix
	if m.trx {
		if err := w.conn.Exec(ctx, "BEGIN"); err != nil {
			return err
		}
	}
	if err := w.reads(ctx); err != nil {
		return err
	}
	if err := w.writes(ctx); err != nil {
		return err
	}
	if m.trx {
		return w.conn.Exec(ctx, "COMMIT")
	}
	return nil
}

func (w *worker) reads(ctx context.Context) error {
	m := &w.cfg.mix
	if m.pointSelects > 0 {
		t := w.table()
		for i := 0; i < m.pointSelects; i++ {
			if _, err := t.pointSelect.Query(ctx, w.id()); err != nil {
				return err
			}
		}
	}
	for _, r := range [...]struct {
		n    int
		stmt func(*tableStmts) sqldb.Stmt
	}{
		{m.simpleRanges, func(t *tableStmts) sqldb.Stmt { return t.simpleRange }},
		{m.sumRanges, func(t *tableStmts) sqldb.Stmt { return t.sumRange }},
		{m.orderRanges, func(t *tableStmts) sqldb.Stmt { return t.orderRange }},
		{m.distinctRanges, func(t *tableStmts) sqldb.Stmt { return t.distinctRange }},
	} {
		if r.n == 0 {
			continue
		}
		st := r.stmt(w.table())
		for i := 0; i < r.n; i++ {
			id := w.id()
			if _, err := st.Query(ctx, id, id+int64(w.cfg.rangeSize)-1); err != nil {
				return err
			}
		}
	}
	if m.randomPoints > 0 {
		for i := range w.args {
			w.args[i] = int64(w.rng.Default(w.segLo, w.segHi))
		}
		if _, err := w.randomPoints.Query(ctx, w.args...); err != nil {
			return err
		}
	}
	if m.randomRanges > 0 {
		for i := 0; i < len(w.args); i += 2 {
			v := int64(w.rng.Default(w.segLo, w.segHi))
			w.args[i], w.args[i+1] = v, v+int64(w.cfg.delta)
		}
		if _, err := w.randomRanges.Query(ctx, w.args...); err != nil {
			return err
		}
	}
	return nil
}

func (w *worker) writes(ctx context.Context) error {
	m := &w.cfg.mix
	if m.indexUpdates > 0 {
		t := w.table()
		for i := 0; i < m.indexUpdates; i++ {
			if _, err := t.indexUpdate.Exec(ctx, w.id()); err != nil {
				return err
			}
		}
	}
	if m.nonIndexUpdates > 0 {
		t := w.table()
		for i := 0; i < m.nonIndexUpdates; i++ {
			w.rng.FillString(w.c, cTemplate)
			if _, err := t.nonIndexUpdate.Exec(ctx, w.c, w.id()); err != nil {
				return err
			}
		}
	}
	if m.deleteInserts > 0 {
		t := w.table()
		for i := 0; i < m.deleteInserts; i++ {
			id, k := w.id(), w.id()
			w.rng.FillString(w.c, cTemplate)
			w.rng.FillString(w.pad, padTemplate)
			if _, err := t.delete.Exec(ctx, id); err != nil {
				return err
			}
			if _, err := t.insert.Exec(ctx, id, k, w.c, w.pad); err != nil {
				return err
			}
		}
	}
	if m.deletes > 0 {
		// oltp_delete draws its table and id inline rather than through a statement group.
		t := w.table()
		if _, err := t.delete.Exec(ctx, w.id()); err != nil {
			return err
		}
	}
	if m.inserts > 0 {
		t := w.table()
		k := w.id()
		w.rng.FillString(w.c, cTemplate)
		w.rng.FillString(w.pad, padTemplate)
		if _, err := t.autoInsert.Exec(ctx, k, w.c, w.pad); err != nil {
			return err
		}
	}
	return nil
}
