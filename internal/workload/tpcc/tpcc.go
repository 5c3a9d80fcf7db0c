// Package tpcc is the TPC-C benchmark (TPC-C 5.11): the nine tables populated per clause 4.3.3,
// the five transactions of clause 2 in the standard mix, and the consistency conditions of clause
// 3.3.2 checked after every run. It runs without terminal emulation by default, as go-tpc and
// BenchBase do, so its figures measure the database rather than think times; --think on adds the
// spec's keying and think times.
package tpcc

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/fairbench/fairbench/internal/dialect"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/workload"
)

const name = "tpcc"

// Scale of clause 4.3.3.1.
const (
	items              = 100000
	districtsPerWH     = 10
	customersPerDist   = 3000
	ordersPerDist      = 3000
	firstUndelivered   = 2101 // orders from here on are in new_order at load time
	deliveredPerDist   = firstUndelivered - 1
	undeliveredPerDist = ordersPerDist - deliveredPerDist
)

// Transaction kinds, in the order of TransactionKinds (q.Kind indexes it).
const (
	kindNewOrder = iota
	kindPayment
	kindOrderStatus
	kindDelivery
	kindStockLevel
)

var kinds = []string{"new_order", "payment", "order_status", "delivery", "stock_level"}

func init() {
	workload.Register(workload.Spec{
		Name: name,
		Description: "TPC-C: NewOrder 45%, Payment 43%, OrderStatus, Delivery, StockLevel 4% each over --warehouses; " +
			"throughput in NewOrders per minute; consistency conditions checked after every run",
		Options: []workload.Option{
			{Name: "warehouses", Default: "1", Help: "TPC-C warehouses (about 100 MB of data each); each thread works for warehouse thread % warehouses + 1", Max: workload.MaxInt},
			{Name: "style", Default: styleStatements, Help: "how the client sends each transaction, the same on every engine: statements (one statement per " +
				"row, as the spec's pseudo-code), batched (go-tpc's multi-row statements for items, stock and order lines, about half the round trips), " +
				"routines (HammerDB's: each transaction one CALL of a stored procedure that commits itself, one round trip)"},
			{Name: "think", Default: "off", Help: "on: sleep the spec's keying and think times before every transaction (terminal emulation, ~20 s a transaction per thread; latencies leave them out)"},
		},
		Dataset:     name,
		DataOptions: []string{"warehouses"},
		New: func(o workload.Options) (workload.Workload, error) {
			w, err := o.Int("warehouses", 1)
			if err != nil {
				return nil, err
			}
			think, err := o.Bool("think")
			if err != nil {
				return nil, err
			}
			style := o["style"]
			if style != styleStatements && style != styleBatched && style != styleRoutines {
				return nil, fmt.Errorf("--style must be statements, batched or routines, got %q", style)
			}
			return &tpcc{warehouses: w, think: think, style: style}, nil
		},
	})
}

// Client styles (--style): how many round trips a transaction takes, its effects the same.
const (
	styleStatements = "statements"
	styleBatched    = "batched"
	styleRoutines   = "routines"
)

type tpcc struct {
	warehouses int
	think      bool
	style      string

	// One run's NURand constants, shared by all its threads (clause 2.1.6).
	mu    sync.Mutex
	rc    runConstants
	rcSet bool
}

// What the runner, job and command line look for in a TPC-C workload.
var (
	_ workload.Verdicter  = (*tpcc)(nil)
	_ workload.Summarizer = (*tpcc)(nil)
)

// warehouseBytes is a TPC-C warehouse's rows at the least: the specification's initial population
// (100,000 stock, 30,000 customers, 300,000 order lines and the rest) comes to about 70 MB of
// values and headers; the engines store 85-110 MB.
const warehouseBytes = 70 << 20

// Traits: the five transaction types counted apart; the warehouses' rows at the least (the
// 100,000 items are shared); the consistency conditions checked after every run, since a TPC-C
// figure from a database that broke them is not a result.
func (t *tpcc) Traits() workload.Traits {
	return workload.Traits{TransactionKinds: kinds, MinDataBytes: int64(t.warehouses) * warehouseBytes, CheckAfterRun: true}
}

// NOPM is the run's committed NewOrders per minute (HammerDB's NOPM; the "tpmC" of go-tpc and
// BenchBase reports): NewOrders rolled back on purpose are left out.
func NOPM(r *result.Result) float64 {
	k := r.ByKind["new_order"]
	if k == nil || r.DurationS <= 0 {
		return 0
	}
	return float64(k.Transactions-k.Rollbacks) / r.DurationS * 60
}

// TpmC is New-Orders completed per minute counting, as the spec does, the 1% rolled back for an
// unused item, which are complete business transactions. It is about 1% above NOPM; with --think
// off it is not a reportable tpmC, since the spec's terminals think.
func TpmC(r *result.Result) float64 {
	k := r.ByKind["new_order"]
	if k == nil || r.DurationS <= 0 {
		return 0
	}
	return float64(k.Transactions) / r.DurationS * 60
}

// tableNames lists the tables parents first (there are no foreign keys, but the order is the
// schema's).
var tableNames = []string{"warehouse", "district", "customer", "history", "new_order", "orders", "order_line", "item", "stock"}

// column lists, in the order the loader writes values.
var (
	warehouseCols = []string{"w_id", "w_name", "w_street_1", "w_street_2", "w_city", "w_state", "w_zip", "w_tax", "w_ytd"}
	districtCols  = []string{"d_id", "d_w_id", "d_name", "d_street_1", "d_street_2", "d_city", "d_state", "d_zip", "d_tax", "d_ytd", "d_next_o_id"}
	customerCols  = []string{"c_id", "c_d_id", "c_w_id", "c_first", "c_middle", "c_last", "c_street_1", "c_street_2", "c_city", "c_state",
		"c_zip", "c_phone", "c_since", "c_credit", "c_credit_lim", "c_discount", "c_balance", "c_ytd_payment", "c_payment_cnt", "c_delivery_cnt", "c_data"}
	historyCols   = []string{"h_c_id", "h_c_d_id", "h_c_w_id", "h_d_id", "h_w_id", "h_date", "h_amount", "h_data"}
	newOrderCols  = []string{"no_o_id", "no_d_id", "no_w_id"}
	ordersCols    = []string{"o_id", "o_d_id", "o_w_id", "o_c_id", "o_entry_d", "o_carrier_id", "o_ol_cnt", "o_all_local"}
	orderLineCols = []string{"ol_o_id", "ol_d_id", "ol_w_id", "ol_number", "ol_i_id", "ol_supply_w_id", "ol_delivery_d", "ol_quantity", "ol_amount", "ol_dist_info"}
	itemCols      = []string{"i_id", "i_im_id", "i_name", "i_price", "i_data"}
	stockCols     = []string{"s_i_id", "s_w_id", "s_quantity", "s_dist_01", "s_dist_02", "s_dist_03", "s_dist_04", "s_dist_05", "s_dist_06",
		"s_dist_07", "s_dist_08", "s_dist_09", "s_dist_10", "s_ytd", "s_order_cnt", "s_remote_cnt", "s_data"}
)

// tableDDL is clause 1.3's layout. Numeric(n) fields become INTEGER or DECIMAL(p, s), date and
// time fields TIMESTAMP on PostgreSQL and DATETIME on the MySQL family (whose TIMESTAMP has
// implicit defaults and a 2038 limit). Keys are not declared here: see keys.
type tableDDL struct {
	name, cols string
	// key is the primary key; PostgreSQL adds it after COPY (a sorted build), InnoDB needs it at
	// CREATE since the table is stored in its order.
	key string
}

var schema = []tableDDL{
	{"warehouse", `w_id INTEGER NOT NULL, w_name VARCHAR(10), w_street_1 VARCHAR(20), w_street_2 VARCHAR(20), w_city VARCHAR(20),
  w_state CHAR(2), w_zip CHAR(9), w_tax DECIMAL(4,4), w_ytd DECIMAL(12,2)`, "w_id"},
	{"district", `d_id INTEGER NOT NULL, d_w_id INTEGER NOT NULL, d_name VARCHAR(10), d_street_1 VARCHAR(20), d_street_2 VARCHAR(20),
  d_city VARCHAR(20), d_state CHAR(2), d_zip CHAR(9), d_tax DECIMAL(4,4), d_ytd DECIMAL(12,2), d_next_o_id INTEGER`, "d_w_id, d_id"},
	{"customer", `c_id INTEGER NOT NULL, c_d_id INTEGER NOT NULL, c_w_id INTEGER NOT NULL, c_first VARCHAR(16), c_middle CHAR(2),
  c_last VARCHAR(16), c_street_1 VARCHAR(20), c_street_2 VARCHAR(20), c_city VARCHAR(20), c_state CHAR(2), c_zip CHAR(9),
  c_phone CHAR(16), c_since {ts}, c_credit CHAR(2), c_credit_lim DECIMAL(12,2), c_discount DECIMAL(4,4),
  c_balance DECIMAL(12,2), c_ytd_payment DECIMAL(12,2), c_payment_cnt INTEGER, c_delivery_cnt INTEGER, c_data VARCHAR(500)`,
		"c_w_id, c_d_id, c_id"},
	// history has no primary key in the spec; InnoDB adds its hidden row id.
	{"history", `h_c_id INTEGER, h_c_d_id INTEGER, h_c_w_id INTEGER, h_d_id INTEGER, h_w_id INTEGER, h_date {ts},
  h_amount DECIMAL(6,2), h_data VARCHAR(24)`, ""},
	{"new_order", `no_o_id INTEGER NOT NULL, no_d_id INTEGER NOT NULL, no_w_id INTEGER NOT NULL`, "no_w_id, no_d_id, no_o_id"},
	{"orders", `o_id INTEGER NOT NULL, o_d_id INTEGER NOT NULL, o_w_id INTEGER NOT NULL, o_c_id INTEGER, o_entry_d {ts},
  o_carrier_id INTEGER, o_ol_cnt INTEGER, o_all_local INTEGER`, "o_w_id, o_d_id, o_id"},
	{"order_line", `ol_o_id INTEGER NOT NULL, ol_d_id INTEGER NOT NULL, ol_w_id INTEGER NOT NULL, ol_number INTEGER NOT NULL,
  ol_i_id INTEGER, ol_supply_w_id INTEGER, ol_delivery_d {ts}, ol_quantity INTEGER, ol_amount DECIMAL(6,2), ol_dist_info CHAR(24)`,
		"ol_w_id, ol_d_id, ol_o_id, ol_number"},
	{"item", `i_id INTEGER NOT NULL, i_im_id INTEGER, i_name VARCHAR(24), i_price DECIMAL(5,2), i_data VARCHAR(50)`, "i_id"},
	{"stock", `s_i_id INTEGER NOT NULL, s_w_id INTEGER NOT NULL, s_quantity INTEGER, s_dist_01 CHAR(24), s_dist_02 CHAR(24),
  s_dist_03 CHAR(24), s_dist_04 CHAR(24), s_dist_05 CHAR(24), s_dist_06 CHAR(24), s_dist_07 CHAR(24), s_dist_08 CHAR(24),
  s_dist_09 CHAR(24), s_dist_10 CHAR(24), s_ytd INTEGER, s_order_cnt INTEGER, s_remote_cnt INTEGER, s_data VARCHAR(50)`,
		"s_w_id, s_i_id"},
}

// secondaryIndexes serve Payment's and OrderStatus's selection by last name and OrderStatus's
// latest order of a customer. They are built after the load: one sorted build beats maintaining
// them row by row.
var secondaryIndexes = []struct{ name, table, cols string }{
	{"tpcc_customer_name", "customer", "c_w_id, c_d_id, c_last, c_first"},
	{"tpcc_orders_customer", "orders", "o_w_id, o_d_id, o_c_id, o_id"},
}

// createSQL is a table's DDL: its timestamps as HammerDB declares them, the primary key up front
// where the engine clusters rows by it, and the engine's table options (on the MySQL family a
// binary collation, which compares C_LAST and sorts C_FIRST byte by byte as PostgreSQL's C
// collation, the fairness profile's, does).
func createSQL(d dialect.Dialect, t tableDDL) string {
	cols := strings.ReplaceAll(t.cols, "{ts}", strings.ToUpper(d.TypeName("datetime", 0, 0)))
	if d.Caps().PrimaryKeyAtCreate && t.key != "" {
		cols += ",\n  PRIMARY KEY (" + t.key + ")"
	}
	return fmt.Sprintf("CREATE TABLE %s (\n  %s\n)%s", t.name, cols, d.TableOptions())
}

// Cleanup drops the nine tables and the five routines of --style routines where fairbench
// created them and says which it left alone.
func (t *tpcc) Cleanup(ctx context.Context, env *workload.Env) error {
	c, err := env.Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	return errors.Join(workload.DropOwnedRoutines(ctx, c, routineNames), workload.DropOwned(ctx, c, tableNames))
}

// Check runs the twelve consistency conditions and fails naming each one that does not hold.
func (t *tpcc) Check(ctx context.Context, env *workload.Env) error {
	vs, err := t.conditions(ctx, env)
	return workload.CheckFromVerdicts("TPC-C consistency conditions", vs, err)
}

// Verdicts gives the command line every condition's verdict, held or not, in order.
func (t *tpcc) Verdicts(ctx context.Context, env *workload.Env) ([]workload.Verdict, error) {
	return t.conditions(ctx, env)
}

// Summarize is the run's headline: NewOrders per minute, committed (nopm) and as the spec counts
// them (tpmc). The round trips a transaction took, which --style changes, are in every result's
// wire counters (round_trips_per_txn), counted by sqldb on the wire.
func (t *tpcc) Summarize(r *result.Result) map[string]float64 {
	return map[string]float64{"nopm": NOPM(r), "tpmc": TpmC(r)}
}

func (t *tpcc) conditions(ctx context.Context, env *workload.Env) ([]workload.Verdict, error) {
	c, err := env.Connect(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if err := t.checkPrepared(ctx, c); err != nil {
		return nil, err
	}
	return Conditions(ctx, c, t.warehouses), nil
}

// checkPrepared says "run prepare" when the tables are missing, refuses tables of the same names
// that fairbench did not create, and refuses a database prepared with fewer warehouses than asked
// for, whose missing districts would only fail obscurely later.
func (t *tpcc) checkPrepared(ctx context.Context, c sqldb.Conn) error {
	return checkLoaded(ctx, c, name, tableNames, "warehouse", t.warehouses, "warehouses")
}

// checkLoaded is checkPrepared for any set of TPC-C tables: names must all be fairbench's, and
// the table warehouse must hold warehouses 1..want (flag is the option that asks for them).
func checkLoaded(ctx context.Context, c sqldb.Conn, wl string, names []string, warehouse string, want int, flag string) error {
	for _, n := range names {
		switch st, err := workload.StateOf(ctx, c, n); {
		case err != nil:
			return err
		case st == workload.Absent:
			return &workload.NotPreparedError{Workload: wl, Detail: "table " + n + " not found"}
		case st == workload.Foreign:
			return workload.Refusef("table %s exists but was not created by fairbench: it is not a %s table of fairbench's; use another database", n, wl)
		}
	}
	rows, err := c.Query(ctx, "SELECT COUNT(*) FROM "+warehouse+" WHERE w_id BETWEEN 1 AND ?", want)
	if err != nil {
		return err
	}
	if rows[0][0] != fmt.Sprint(want) {
		return &workload.NotPreparedError{Workload: wl, Detail: fmt.Sprintf(
			"only %s of the %d warehouses asked for (--%s %d) are loaded in %s; after 'fairbench cleanup --workload %s', and with --%s %d",
			rows[0][0], want, flag, want, warehouse, wl, flag, want)}
	}
	return nil
}
