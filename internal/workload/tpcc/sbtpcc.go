package tpcc

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/fairbench/fairbench/internal/dialect"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/workload"
)

// sbName is Percona's sysbench-tpcc ("TPCC-like", github.com/Percona-Lab/sysbench-tpcc), the
// workload the Power10 study ran: --tables copies of the nine tables, each with --scale
// warehouses; every event picks a table set and a warehouse at random and runs one of the five
// transactions with sysbench-tpcc's statements (sbtpcc_worker.go), so its TPS sits beside
// sysbench's.
const sbName = "sbtpcc"

func init() {
	workload.Register(workload.Spec{
		Name: sbName,
		Description: "Percona's sysbench-tpcc (TPCC-like): --tables sets of --scale warehouses; NewOrder, Payment 10/23 each, " +
			"OrderStatus, Delivery, StockLevel 1/23 each, no think time; TPS counts all five as sysbench counts events",
		Options: []workload.Option{
			{Name: "scale", Default: "1", Help: "sysbench-tpcc --scale: warehouses in each table set (about 100 MB each)"},
			{Name: "tables", Default: "1", Help: "sysbench-tpcc --tables: copies of the nine tables (warehouse1, district1, ...)"},
			{Name: "foreign-keys", Default: "on", Help: "on: sysbench-tpcc's ten foreign keys, enforced on every engine (sysbench-tpcc turns their checks off on MySQL only); off: none on any"},
			{Name: "trx-level", Default: "RR", Help: "isolation level of every transaction, as sysbench-tpcc's --trx_level: RR, RC or SER"},
		},
		Dataset:     sbName,
		DataOptions: []string{"scale", "tables", "foreign-keys"},
		New:         newSBTPCC,
	})
}

func newSBTPCC(o workload.Options) (workload.Workload, error) {
	scale, err := o.Int("scale", 1)
	if err != nil {
		return nil, err
	}
	tables, err := o.Int("tables", 1)
	if err != nil {
		return nil, err
	}
	fks, err := o.Bool("foreign-keys")
	if err != nil {
		return nil, err
	}
	level, ok := isolationLevels[strings.ToUpper(strings.TrimSpace(o["trx-level"]))]
	if !ok {
		return nil, fmt.Errorf("--trx-level must be RR, RC or SER, got %q", o["trx-level"])
	}
	return &sbtpcc{scale: scale, tables: tables, foreignKeys: fks, isolation: level}, nil
}

// isolationLevels are sysbench-tpcc's --trx_level values in SQL, which every engine takes after
// SET SESSION [CHARACTERISTICS AS] TRANSACTION ISOLATION LEVEL.
var isolationLevels = map[string]string{"RR": "REPEATABLE READ", "RC": "READ COMMITTED", "SER": "SERIALIZABLE"}

type sbtpcc struct {
	scale, tables int
	foreignKeys   bool
	isolation     string
}

var (
	_ workload.Verdicter = (*sbtpcc)(nil)
)

// Traits: TPC-C's transaction types and size, for every table set's warehouses; the consistency
// conditions hold for sysbench-tpcc's transactions as for TPC-C's, and a figure from a database
// that broke them is not a result.
func (s *sbtpcc) Traits() workload.Traits {
	return workload.Traits{TransactionKinds: kinds, MinDataBytes: int64(s.tables) * int64(s.scale) * warehouseBytes, CheckAfterRun: true}
}

// sbTables are sysbench-tpcc's nine tables, parents first; it calls new_order "new_orders".
var sbTables = []string{"warehouse", "item", "stock", "district", "customer", "history", "orders", "new_orders", "order_line"}

// sbTable names TPC-C's table in set n as sysbench-tpcc does ("new_order" in set 2 is new_orders2).
func sbTable(table string, n int) string {
	if table == "new_order" {
		table = "new_orders"
	}
	return table + fmt.Sprint(n)
}

// names lists every table of every set, each set parents first.
func (s *sbtpcc) names() []string {
	var out []string
	for n := 1; n <= s.tables; n++ {
		for _, t := range sbTables {
			out = append(out, sbTable(t, n))
		}
	}
	return out
}

// sbSchema is sysbench-tpcc's CREATE TABLE: its column types ({tiny} is TINYINT on the MySQL
// family and SMALLINT on PostgreSQL, as there), its keys, and no default values. Two types are
// TPC-C's instead, because the rows are loaded by fairbench's TPC-C loader with the spec's values:
// the tax and discount rates are DECIMAL(4,4) (sysbench-tpcc: 4,2) and C_CREDIT_LIM DECIMAL(12,2)
// (BIGINT).
var sbSchema = []tableDDL{
	{"warehouse", `w_id smallint not null, w_name varchar(10), w_street_1 varchar(20), w_street_2 varchar(20), w_city varchar(20),
  w_state char(2), w_zip char(9), w_tax decimal(4,4), w_ytd decimal(12,2)`, "w_id"},
	{"district", `d_id {tiny} not null, d_w_id smallint not null, d_name varchar(10), d_street_1 varchar(20), d_street_2 varchar(20),
  d_city varchar(20), d_state char(2), d_zip char(9), d_tax decimal(4,4), d_ytd decimal(12,2), d_next_o_id int`, "d_w_id, d_id"},
	{"customer", `c_id int not null, c_d_id {tiny} not null, c_w_id smallint not null, c_first varchar(16), c_middle char(2),
  c_last varchar(16), c_street_1 varchar(20), c_street_2 varchar(20), c_city varchar(20), c_state char(2), c_zip char(9),
  c_phone char(16), c_since {ts}, c_credit char(2), c_credit_lim decimal(12,2), c_discount decimal(4,4), c_balance decimal(12,2),
  c_ytd_payment decimal(12,2), c_payment_cnt smallint, c_delivery_cnt smallint, c_data text`, "c_w_id, c_d_id, c_id"},
	{"history", `h_c_id int, h_c_d_id {tiny}, h_c_w_id smallint, h_d_id {tiny}, h_w_id smallint, h_date {ts}, h_amount decimal(6,2),
  h_data varchar(24)`, ""},
	{"orders", `o_id int not null, o_d_id {tiny} not null, o_w_id smallint not null, o_c_id int, o_entry_d {ts}, o_carrier_id {tiny},
  o_ol_cnt {tiny}, o_all_local {tiny}`, "o_w_id, o_d_id, o_id"},
	{"new_order", `no_o_id int not null, no_d_id {tiny} not null, no_w_id smallint not null`, "no_w_id, no_d_id, no_o_id"},
	{"order_line", `ol_o_id int not null, ol_d_id {tiny} not null, ol_w_id smallint not null, ol_number {tiny} not null, ol_i_id int,
  ol_supply_w_id smallint, ol_delivery_d {ts}, ol_quantity {tiny}, ol_amount decimal(6,2), ol_dist_info char(24)`,
		"ol_w_id, ol_d_id, ol_o_id, ol_number"},
	{"stock", `s_i_id int not null, s_w_id smallint not null, s_quantity smallint, s_dist_01 char(24), s_dist_02 char(24),
  s_dist_03 char(24), s_dist_04 char(24), s_dist_05 char(24), s_dist_06 char(24), s_dist_07 char(24), s_dist_08 char(24),
  s_dist_09 char(24), s_dist_10 char(24), s_ytd decimal(8,0), s_order_cnt smallint, s_remote_cnt smallint, s_data varchar(50)`,
		"s_w_id, s_i_id"},
	{"item", `i_id int not null, i_im_id int, i_name varchar(24), i_price decimal(5,2), i_data varchar(50)`, "i_id"},
}

// sbIndexes are sysbench-tpcc's secondary indexes, named as there with the set's number appended.
var sbIndexes = []struct{ name, table, cols string }{
	{"idx_customer", "customer", "c_w_id, c_d_id, c_last, c_first"},
	{"idx_orders", "orders", "o_w_id, o_d_id, o_c_id, o_id"},
	{"fkey_stock_2", "stock", "s_i_id"},
	{"fkey_order_line_2", "order_line", "ol_supply_w_id, ol_i_id"},
	{"fkey_history_1", "history", "h_c_w_id, h_c_d_id, h_c_id"},
	{"fkey_history_2", "history", "h_w_id, h_d_id"},
}

// sbForeignKeys are sysbench-tpcc's ten foreign keys (with --use_fk=1, its default).
var sbForeignKeys = []struct{ name, table, cols, parent, keys string }{
	{"fkey_new_orders_1_", "new_order", "no_w_id, no_d_id, no_o_id", "orders", "o_w_id, o_d_id, o_id"},
	{"fkey_orders_1_", "orders", "o_w_id, o_d_id, o_c_id", "customer", "c_w_id, c_d_id, c_id"},
	{"fkey_customer_1_", "customer", "c_w_id, c_d_id", "district", "d_w_id, d_id"},
	{"fkey_history_1_", "history", "h_c_w_id, h_c_d_id, h_c_id", "customer", "c_w_id, c_d_id, c_id"},
	{"fkey_history_2_", "history", "h_w_id, h_d_id", "district", "d_w_id, d_id"},
	{"fkey_district_1_", "district", "d_w_id", "warehouse", "w_id"},
	{"fkey_order_line_1_", "order_line", "ol_w_id, ol_d_id, ol_o_id", "orders", "o_w_id, o_d_id, o_id"},
	{"fkey_order_line_2_", "order_line", "ol_supply_w_id, ol_i_id", "stock", "s_w_id, s_i_id"},
	{"fkey_stock_1_", "stock", "s_w_id", "warehouse", "w_id"},
	{"fkey_stock_2_", "stock", "s_i_id", "item", "i_id"},
}

func sbCreateSQL(d dialect.Dialect, t tableDDL, n int) string {
	t.cols = strings.ReplaceAll(t.cols, "{tiny}", d.TypeName("tinyint", 0, 0))
	t.name = sbTable(t.name, n)
	return createSQL(d, t)
}

// Prepare creates every table set and loads it with fairbench's TPC-C loader: the same row
// counts as sysbench-tpcc (per set 100,000 items; per warehouse 100,000 stock rows, 30,000
// customers with a history row each, 30,000 orders of 5-15 lines, the last 900 of each district
// undelivered), with the spec's values rather than sysbench-tpcc's simplified ones.
func (s *sbtpcc) Prepare(ctx context.Context, env *workload.Env) error {
	c, err := workload.ConnectClaiming(ctx, env, sbName, s.names())
	if err != nil {
		return err
	}
	defer c.Close()
	for n := 1; n <= s.tables; n++ {
		for _, td := range sbSchema {
			if err := c.Exec(ctx, sbCreateSQL(dialect.Of(c), td, n)); err != nil {
				return fmt.Errorf("creating %s: %w", sbTable(td.name, n), err)
			}
			if err := workload.MarkOwned(ctx, c, sbTable(td.name, n)); err != nil {
				return err
			}
		}
	}
	defer workload.ReadyBulkLoad(ctx, c)()
	start := time.Now()
	if err := parallel(ctx, env, max(1, env.LoadThreads), s.loadJobs(ctx, env)); err != nil {
		return err
	}
	loaded := time.Now()
	for _, phase := range s.afterLoad(ctx, dialect.Of(c)) {
		if err := parallel(ctx, env, max(1, env.LoadThreads), phase); err != nil {
			return err
		}
	}
	if env.Log != nil {
		fmt.Fprintf(env.Log, "sbtpcc: %d table sets of %d warehouses: rows loaded in %.1fs, keys, indexes and statistics in %.1fs\n",
			s.tables, s.scale, loaded.Sub(start).Seconds(), time.Since(loaded).Seconds())
	}
	return nil
}

// loadJobs are the load's units over every table set, biggest first.
func (s *sbtpcc) loadJobs(ctx context.Context, env *workload.Env) []func(sqldb.Conn) error {
	perWH := int64(1 + districtsPerWH + items + 2*districtsPerWH*customersPerDist +
		districtsPerWH*(ordersPerDist+undeliveredPerDist+ordersPerDist*10))
	total := int64(s.tables) * (int64(items) + int64(s.scale)*perWH)
	var done atomic.Int64
	progress := func(n int64) {
		if env.Progress != nil {
			env.Progress(min(done.Add(n), total), total)
		}
	}
	now := time.Now().UTC().Format("2006-01-02 15:04:05")
	var jobs []func(sqldb.Conn) error
	add := func(set int, what string, run func(l *loader) error) {
		seed := env.Seed*1000003 + uint64(len(jobs)) + 1
		jobs = append(jobs, func(c sqldb.Conn) error {
			l := newLoader(ctx, c, gen{env.Rand.New(seed)}, now, progress)
			l.table = func(t string) string { return sbTable(t, set) }
			err := run(l)
			if cerr := l.close(); err == nil {
				err = cerr
			}
			if err != nil {
				return fmt.Errorf("loading %s: %w", what, err)
			}
			return nil
		})
	}
	for n := 1; n <= s.tables; n++ {
		for w := 1; w <= s.scale; w++ {
			add(n, fmt.Sprintf("stock%d of warehouse %d", n, w), func(l *loader) error { return l.stock(w) })
		}
	}
	for n := 1; n <= s.tables; n++ {
		for w := 1; w <= s.scale; w++ {
			add(n, fmt.Sprintf("orders%d of warehouse %d", n, w), func(l *loader) error { return l.orders(w) })
			add(n, fmt.Sprintf("customer%d of warehouse %d", n, w), func(l *loader) error { return l.customers(w) })
			add(n, fmt.Sprintf("warehouse%d %d", n, w), func(l *loader) error { return l.warehouse(w) })
		}
		add(n, fmt.Sprintf("item%d", n), func(l *loader) error { return l.items() })
	}
	return jobs
}

// afterLoad is three phases, each table by table in parallel: PostgreSQL's primary keys and the
// secondary indexes; the foreign keys, which need their parents' keys; the statistics.
func (s *sbtpcc) afterLoad(ctx context.Context, d dialect.Dialect) [][]func(sqldb.Conn) error {
	var keys, fks, stats []func(sqldb.Conn) error
	for n := 1; n <= s.tables; n++ {
		for _, td := range sbSchema {
			table := sbTable(td.name, n)
			var ddl []string
			if !d.Caps().PrimaryKeyAtCreate && td.key != "" {
				ddl = append(ddl, fmt.Sprintf("ALTER TABLE %s ADD PRIMARY KEY (%s)", table, td.key))
			}
			for _, ix := range sbIndexes {
				if ix.table == td.name {
					ddl = append(ddl, fmt.Sprintf("CREATE INDEX %s%d ON %s (%s)", ix.name, n, table, ix.cols))
				}
			}
			keys = append(keys, func(c sqldb.Conn) error { return workload.ExecAll(ctx, c, ddl) })
			stats = append(stats, func(c sqldb.Conn) error { return d.Maintain(ctx, c, table) })
		}
		if !s.foreignKeys {
			continue
		}
		// The rows are consistent by construction; with checks off for this load session,
		// InnoDB adds each key in place instead of copying the table to validate it. Runs
		// check them on every engine.
		ddl := d.LoadingSession()
		for _, fk := range sbForeignKeys {
			ddl = append(ddl, fmt.Sprintf("ALTER TABLE %s ADD CONSTRAINT %s%d FOREIGN KEY (%s) REFERENCES %s (%s)",
				sbTable(fk.table, n), fk.name, n, fk.cols, sbTable(fk.parent, n), fk.keys))
		}
		fks = append(fks, func(c sqldb.Conn) error { return workload.ExecAll(ctx, c, ddl) })
	}
	return [][]func(sqldb.Conn) error{keys, fks, stats}
}

// Cleanup drops every table set where fairbench created it.
func (s *sbtpcc) Cleanup(ctx context.Context, env *workload.Env) error {
	c, err := env.Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	return workload.DropOwned(ctx, c, s.names())
}

// Check runs TPC-C's consistency conditions on every table set (sysbench-tpcc's own check runs
// seven of them).
func (s *sbtpcc) Check(ctx context.Context, env *workload.Env) error {
	vs, err := s.Verdicts(ctx, env)
	return workload.CheckFromVerdicts("sysbench-tpcc consistency conditions", vs, err)
}

// Verdicts gives every condition's verdict for every table set.
func (s *sbtpcc) Verdicts(ctx context.Context, env *workload.Env) ([]workload.Verdict, error) {
	c, err := env.Connect(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if err := s.checkPrepared(ctx, c); err != nil {
		return nil, err
	}
	var out []workload.Verdict
	for n := 1; n <= s.tables; n++ {
		for _, v := range conditionsOn(ctx, c, s.scale, func(t string) string { return sbTable(t, n) }) {
			v.Name = fmt.Sprintf("table set %d, %s", n, v.Name)
			out = append(out, v)
		}
	}
	return out, nil
}

func (s *sbtpcc) checkPrepared(ctx context.Context, c sqldb.Conn) error {
	for n := 1; n <= s.tables; n++ {
		if err := checkLoaded(ctx, c, sbName, s.names()[(n-1)*len(sbTables):n*len(sbTables)], sbTable("warehouse", n), s.scale, "scale"); err != nil {
			return err
		}
	}
	return nil
}
