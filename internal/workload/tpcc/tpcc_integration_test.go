package tpcc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/job"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/testserver"
	"github.com/fairbench/fairbench/internal/workload"
	"github.com/fairbench/fairbench/internal/workload/workloadtest"
)

func TestMain(m *testing.M) { testserver.Main(m) }

func newJob(t *testing.T, tg sqldb.Target) *job.Job {
	t.Helper()
	return workloadtest.Job(t, tg, name, map[string]string{"warehouses": "1"}, 7)
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("%q is not a number", s)
	}
	return n
}

func requireAllHold(t *testing.T, vs []workload.Verdict, when string) {
	t.Helper()
	if len(vs) != 12 {
		t.Fatalf("%s: %d verdicts, want 12", when, len(vs))
	}
	for i, v := range vs {
		if !strings.HasPrefix(v.Name, fmt.Sprintf("TPC-C condition %d: ", i+1)) {
			t.Fatalf("%s: verdict %d is %q, want the conditions in order 1..12", when, i, v.Name)
		}
		if !v.OK {
			t.Errorf("%s: %s fails: %s", when, v.Name, v.Detail)
		}
	}
}

// One warehouse at the spec's full scale on each engine: the population of clause 4.3.3, all
// twelve consistency conditions right after the load and after a run of the full mix with
// concurrent threads in each --style (statements, batched, routines), cleanup dropping the
// routines with the tables, and a database broken on purpose failing the conditions it breaks.
func TestTPCCOnRealServers(t *testing.T) {
	for _, kind := range testserver.Kinds() {
		t.Run(kind, func(t *testing.T) {
			tg := testserver.Database(t, kind)
			ctx := context.Background()
			j := newJob(t, tg)
			var prepLog bytes.Buffer
			if err := j.Prepare(ctx, j.Env(2, false, nil, &prepLog)); err != nil {
				t.Fatal(err)
			}
			t.Log(strings.TrimSpace(prepLog.String()))
			c := workloadtest.Conn(t, tg)
			checkPopulation(t, c)
			requireAllHold(t, Conditions(ctx, c, 1), "after prepare")

			workloadtest.PrepareAgainRefused(t, j, 2)

			stmts := runMix(t, j)
			if err := j.Workload.Check(ctx, j.Env(1, false, nil, nil)); err != nil {
				t.Fatalf("check after the run: %v", err)
			}
			// The same transactions in go-tpc's multi-row statements: the conditions still hold,
			// in well under the round trips.
			jb := workloadtest.Job(t, tg, name, map[string]string{"warehouses": "1", "style": "batched"}, 8)
			batched := runMix(t, jb)
			if err := jb.Workload.Check(ctx, jb.Env(1, false, nil, nil)); err != nil {
				t.Fatalf("check after the batched run: %v", err)
			}
			if stmts.Wire == nil || batched.Wire == nil {
				t.Fatal("no wire counters in the results")
			}
			rs, rb := stmts.Wire.RoundTripsPerTxn, batched.Wire.RoundTripsPerTxn
			t.Logf("round trips per transaction: statements %.1f, batched %.1f", rs, rb)
			if rs < 20 || rb <= 0 || rb > 0.7*rs {
				t.Errorf("round trips per transaction: statements %.1f, batched %.1f: want batched well under statements", rs, rb)
			}

			// The same transactions as HammerDB's stored procedures, one round trip each.
			checkRoutines(t, tg, c)

			breakAndCheck(t, c, j)

			workloadtest.Cleanup(t, j, c, tableNames...)
			requireRoutines(t, c, workload.Absent)
		})
	}
}

// checkPopulation compares the loaded rows with clause 4.3.3.1.
func checkPopulation(t *testing.T, c sqldb.Conn) {
	t.Helper()
	counts := []struct {
		table string
		want  int
	}{
		{"warehouse", 1}, {"district", 10}, {"customer", 30000}, {"history", 30000}, {"orders", 30000},
		{"new_order", 9000}, {"item", 100000}, {"stock", 100000},
	}
	for _, tc := range counts {
		if got := atoi(t, workloadtest.Rows(t, c, "SELECT COUNT(*) FROM "+tc.table)[0][0]); got != tc.want {
			t.Errorf("%s: %d rows, want %d", tc.table, got, tc.want)
		}
	}
	// 5..15 lines per order, 10 on average.
	if ol := atoi(t, workloadtest.Rows(t, c, "SELECT COUNT(*) FROM order_line")[0][0]); ol < 290000 || ol > 310000 {
		t.Errorf("order_line: %d rows, want about 300000", ol)
	}
	checks := []struct {
		what, sql string
		lo, hi    int
	}{
		// 10% "ORIGINAL" in I_DATA and S_DATA, 10% bad credit.
		{"items with ORIGINAL", "SELECT COUNT(*) FROM item WHERE i_data LIKE '%ORIGINAL%'", 9000, 11000},
		{"stock with ORIGINAL", "SELECT COUNT(*) FROM stock WHERE s_data LIKE '%ORIGINAL%'", 9000, 11000},
		{"BC customers", "SELECT COUNT(*) FROM customer WHERE c_credit = 'BC'", 2700, 3300},
		// Lengths of the a-strings.
		{"shortest C_DATA", "SELECT MIN(LENGTH(c_data)) FROM customer", 300, 310},
		{"longest C_DATA", "SELECT MAX(LENGTH(c_data)) FROM customer", 490, 500},
		{"shortest S_DATA", "SELECT MIN(LENGTH(s_data)) FROM stock", 26, 26},
		{"longest I_DATA", "SELECT MAX(LENGTH(i_data)) FROM item", 50, 50},
		{"longest S_DIST_01", "SELECT MAX(LENGTH(s_dist_01)) FROM stock", 24, 24},
		{"shortest I_NAME", "SELECT MIN(LENGTH(i_name)) FROM item", 14, 14},
		// Money and quantities.
		{"cheapest item in cents", "SELECT MIN(i_price) * 100 FROM item", 100, 110},
		{"dearest item in cents", "SELECT MAX(i_price) * 100 FROM item", 9990, 10000},
		{"S_QUANTITY outside 10..100", "SELECT COUNT(*) FROM stock WHERE s_quantity < 10 OR s_quantity > 100", 0, 0},
		{"discount above 0.5", "SELECT COUNT(*) FROM customer WHERE c_discount > 0.5", 0, 0},
		{"balance other than -10", "SELECT COUNT(*) FROM customer WHERE c_balance <> -10", 0, 0},
		// Every customer has one order, delivered ones have amount 0 and a carrier.
		{"customers with orders", "SELECT COUNT(DISTINCT o_c_id) FROM orders WHERE o_d_id = 1", 3000, 3000},
		{"delivered orders", "SELECT COUNT(*) FROM orders WHERE o_carrier_id IS NOT NULL", 21000, 21000},
		{"delivered lines with an amount", "SELECT COUNT(*) FROM order_line WHERE ol_o_id < 2101 AND ol_amount <> 0", 0, 0},
		{"customers named BARBARBAR (number 0)", "SELECT COUNT(*) FROM customer WHERE c_last = 'BARBARBAR' AND c_d_id = 1", 1, 40},
	}
	for _, ck := range checks {
		v := workloadtest.Rows(t, c, ck.sql)[0][0]
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < float64(ck.lo) || f > float64(ck.hi) {
			t.Errorf("%s: %s, want %d..%d", ck.what, v, ck.lo, ck.hi)
		}
	}
	// The first 1000 customers of a district carry the 1000 last names in order.
	names := workloadtest.Rows(t, c, "SELECT c_id, c_last FROM customer WHERE c_w_id = 1 AND c_d_id = 3 AND c_id IN (1, 2, 372, 1000) ORDER BY c_id")
	want := [][2]string{{"1", "BARBARBAR"}, {"2", "BARBAROUGHT"}, {"372", "PRICALLYOUGHT"}, {"1000", "EINGEINGEING"}}
	for i, w := range want {
		if names[i][0] != w[0] || names[i][1] != w[1] {
			t.Errorf("customer %s is named %s, want %s", names[i][0], names[i][1], w[1])
		}
	}
}

// runMix runs the whole mix with 8 threads on one warehouse for 2 s.
func runMix(t *testing.T, j *job.Job) *result.Result {
	t.Helper()
	// The rarest kinds are 4% of the mix: a slow machine that ran only 60 transactions would miss
	// one 8% of the time, so the run goes on (doubling) until it has 300, where that is 1 in 10^5.
	var res *result.Result
	for d := 2 * time.Second; ; d *= 2 {
		res = workloadtest.Run(t, j, 8, d)
		if res.Transactions >= 300 || d >= 16*time.Second {
			break
		}
	}
	if !res.Complete || res.Errors != 0 {
		t.Fatalf("run: complete=%v errors=%d (%s)", res.Complete, res.Errors, res.Error)
	}
	for _, k := range kinds {
		ks := res.ByKind[k]
		if ks == nil || ks.Transactions == 0 {
			t.Errorf("no %s transaction ran: %+v", k, ks)
		}
	}
	no := res.ByKind["new_order"]
	share := float64(no.Transactions) / float64(res.Transactions)
	if share < 0.35 || share > 0.55 {
		t.Errorf("NewOrder is %.0f%% of the mix, want about 45%%", share*100)
	}
	// Every NewOrder a client saw committed is in orders; those ending after the window closed
	// (not counted) add at most one per thread.
	if a := res.Availability; a == nil || a.Acks == nil || a.Acks.Lost != 0 || a.Acks.Acknowledged < no.Transactions-no.Rollbacks ||
		a.Acks.Acknowledged > no.Transactions-no.Rollbacks+8 {
		var acks any = a
		if a != nil && a.Acks != nil {
			acks = *a.Acks
		}
		t.Errorf("acknowledged NewOrders: %+v for %d committed", acks, no.Transactions-no.Rollbacks)
	}
	if res.Rollbacks != no.Rollbacks {
		t.Errorf("%d rollbacks in all, %d of them NewOrders: only NewOrder rolls back", res.Rollbacks, no.Rollbacks)
	}
	// About 1% of NewOrders roll back; over 300 the chance of none is below 5%.
	if no.Transactions > 300 && no.Rollbacks == 0 {
		t.Errorf("none of %d NewOrders rolled back, want about 1%%", no.Transactions)
	}
	if float64(no.Rollbacks) > 0.05*float64(no.Transactions)+3 {
		t.Errorf("%d of %d NewOrders rolled back, want about 1%%", no.Rollbacks, no.Transactions)
	}
	nopm, tpmc := NOPM(res), TpmC(res)
	if diff := tpmc - nopm - float64(no.Rollbacks)*60/res.DurationS; nopm <= 0 || diff > 1e-6 || diff < -1e-6 {
		t.Errorf("NOPM %.1f, tpmC %.1f with %d rollbacks: want tpmC - NOPM = the rolled back NewOrders per minute", nopm, tpmc, no.Rollbacks)
	}
	t.Logf("%d transactions (%.0f tps, %d retries), %d NewOrders, %d rolled back, NOPM %.0f",
		res.Transactions, res.TPS, res.Retries, no.Transactions, no.Rollbacks, nopm)
	return res
}

// breakAndCheck adds 1.00 to the warehouse's YTD: conditions 1 and 8 must fail and name
// themselves, the others must still hold.
func breakAndCheck(t *testing.T, c sqldb.Conn, j *job.Job) {
	t.Helper()
	ctx := context.Background()
	if err := c.Exec(ctx, "UPDATE warehouse SET w_ytd = w_ytd + 1 WHERE w_id = 1"); err != nil {
		t.Fatal(err)
	}
	err := j.Workload.Check(ctx, j.Env(1, false, nil, nil))
	if err == nil {
		t.Fatal("check passed on a warehouse whose W_YTD was changed")
	}
	for _, want := range []string{"TPC-C condition 1: W_YTD = sum(D_YTD): ", "TPC-C condition 8: W_YTD = sum(H_AMOUNT): ", "warehouse 1: W_YTD"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("check error does not name %q:\n%v", want, err)
		}
	}
	// The command line's verdicts: all twelve, in order, only 1 and 8 failing.
	vs, err := j.Workload.(workload.Verdicter).Verdicts(ctx, j.Env(1, false, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 12 {
		t.Fatalf("%d verdicts, want 12", len(vs))
	}
	for i, v := range vs {
		n := i + 1
		if wantOK := n != 1 && n != 8; v.OK != wantOK || !strings.HasPrefix(v.Name, fmt.Sprintf("TPC-C condition %d: ", n)) {
			t.Errorf("verdict %d: %s ok=%v (%s), want condition %d ok=%v", i, v.Name, v.OK, v.Detail, n, wantOK)
		}
	}
	if err := c.Exec(ctx, "UPDATE warehouse SET w_ytd = w_ytd - 1 WHERE w_id = 1"); err != nil {
		t.Fatal(err)
	}
}

// fairbench never touches a warehouse table it did not create, with or without --force, and
// creates none of the other tables beside it.
func TestForeignWarehouseIsLeftAlone(t *testing.T) {
	for _, kind := range testserver.Kinds() {
		t.Run(kind, func(t *testing.T) {
			tg := testserver.Database(t, kind)
			ctx := context.Background()
			c := workloadtest.Conn(t, tg)
			workloadtest.Exec(t, c, "CREATE TABLE warehouse (w_id INTEGER PRIMARY KEY, note VARCHAR(20))")
			workloadtest.Exec(t, c, "INSERT INTO warehouse VALUES (1, 'precious')")
			j := newJob(t, tg)
			for _, force := range []bool{false, true} {
				err := j.Prepare(ctx, j.Env(1, force, nil, nil))
				if err == nil || !strings.Contains(err.Error(), "not created by fairbench") {
					t.Fatalf("prepare (force=%v) over a foreign warehouse: %v, want a refusal", force, err)
				}
			}
			workloadtest.RunRefused(t, j, "prepared by fairbench")
			if ok, _ := sqldb.TableExists(ctx, c, "district"); ok {
				t.Error("prepare created district beside a foreign warehouse table")
			}
			if rows := workloadtest.Rows(t, c, "SELECT note FROM warehouse"); len(rows) != 1 || rows[0][0] != "precious" {
				t.Fatalf("the user's table was changed: %v", rows)
			}
			// A check on it names the foreign table rather than failing in the conditions' SQL.
			if err := j.Workload.Check(ctx, j.Env(1, false, nil, nil)); err == nil || !strings.Contains(err.Error(), "warehouse") ||
				!strings.Contains(err.Error(), "not created by fairbench") {
				t.Fatalf("check on a foreign warehouse table: %v", err)
			}
			// Without it, a check says to prepare.
			workloadtest.Exec(t, c, "DROP TABLE warehouse")
			var np *workload.NotPreparedError
			if err := j.Workload.Check(ctx, j.Env(1, false, nil, nil)); !errors.As(err, &np) {
				t.Fatalf("check on an empty database: %v, want a NotPreparedError", err)
			}
		})
	}
}
