package tpcb

import (
	"context"

	"github.com/fairbench/fairbench/internal/randgen"
	"github.com/fairbench/fairbench/internal/workload"
)

// tables are pgbench -i's tables (initCreateTables, in its order) as data, with its rows:
// branches and tellers with a NULL filler, as pgbench's INSERTs leave it, and accounts with
// bid = (aid-1)/100000+1, abalance 0 and an empty (not NULL) filler. pgbench adds the primary
// keys after the load, because building an index once is cheaper than maintaining it per row;
// where the engine clusters rows by the primary key (InnoDB), adding it afterwards would rebuild
// the whole table: there the keys are declared up front and rows arrive in key order instead.
func (w *tpcb) tables() []workload.Table {
	col := func(name, typ string) workload.Column { return workload.Column{Name: name, Type: typ, Null: true} }
	key := func(name string) workload.Column { return workload.Column{Name: name, Type: "int"} }
	ff := w.fillfactor // declared on the three tables even at 100, as pgbench -i does
	return []workload.Table{
		// timestamp without time zone: DATETIME in MySQL's terms (TIMESTAMP there converts time zones).
		{Name: "pgbench_history", Columns: []workload.Column{col("tid", "int"), col("bid", "int"), col("aid", "int"), col("delta", "int"),
			col("mtime", "datetime"), col("filler", "char(22)")}},
		{Name: "pgbench_tellers", Columns: []workload.Column{key("tid"), col("bid", "int"), col("tbalance", "int"), col("filler", "char(84)")},
			PrimaryKey: []string{"tid"}, FillFactor: ff, Rows: int64(w.tellers()), Load: []string{"tid", "bid", "tbalance"},
			Row: func(r *workload.Rows, i int64, _ *randgen.Rand) {
				r.Int(i)
				r.Int((i-1)/tellersPerScale + 1)
				r.Int(0)
			}},
		{Name: "pgbench_accounts", Columns: []workload.Column{key("aid"), col("bid", "int"), col("abalance", "int"), col("filler", "char(84)")},
			PrimaryKey: []string{"aid"}, FillFactor: ff, Rows: int64(w.accounts()), Chunk: accountsPerScale,
			Row: func(r *workload.Rows, i int64, _ *randgen.Rand) {
				r.Int(i)
				r.Int((i-1)/accountsPerScale + 1)
				r.Int(0)
				r.Str("")
			}},
		{Name: "pgbench_branches", Columns: []workload.Column{key("bid"), col("bbalance", "int"), col("filler", "char(88)")},
			PrimaryKey: []string{"bid"}, FillFactor: ff, Rows: int64(w.branches()), Load: []string{"bid", "bbalance"},
			Row: func(r *workload.Rows, i int64, _ *randgen.Rand) {
				r.Int(i)
				r.Int(0)
			}},
	}
}

// Prepare does what 'pgbench -i' does (create tables, generate data client-side, vacuum, primary
// keys), pgbench_accounts loaded over several connections when --load-threads allows.
func (w *tpcb) Prepare(ctx context.Context, env *workload.Env) error {
	return workload.PrepareTables(ctx, env, name, w.tables())
}
