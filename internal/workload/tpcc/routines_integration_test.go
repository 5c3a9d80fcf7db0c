package tpcc

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/testserver"
	"github.com/fairbench/fairbench/internal/workload"
	"github.com/fairbench/fairbench/internal/workload/workloadtest"
)

// checkRoutines runs --style routines on tables prepare loaded (which created the five
// procedures as fairbench's): a run of the whole mix calls them (every kind runs, NewOrder's 1%
// rolls back and is counted as one), the twelve conditions hold afterwards, a NewOrder takes one
// round trip where the statements style takes dozens, and a routine dropped by hand is created
// again by the next run.
func checkRoutines(t *testing.T, tg sqldb.Target, c sqldb.Conn) {
	t.Helper()
	ctx := context.Background()
	requireRoutines(t, c, workload.Ours)
	j := workloadtest.Job(t, tg, name, map[string]string{"warehouses": "1", "style": styleRoutines}, 9)
	res := runMix(t, j)
	if err := j.Workload.Check(ctx, j.Env(1, false, nil, nil)); err != nil {
		t.Fatalf("check after the routines run: %v", err)
	}
	if res.Wire == nil || res.Wire.RoundTripsPerTxn > 1.5 {
		t.Errorf("routines: wire counters %+v, want about one round trip per transaction", res.Wire)
	}
	stmts := newOrderRoundTrips(t, tg, styleStatements)
	routines := newOrderRoundTrips(t, tg, styleRoutines)
	t.Logf("round trips per NewOrder: statements %.1f, routines %.2f", stmts, routines)
	if routines > 1.1 || stmts < 20 {
		t.Errorf("round trips per NewOrder: statements %.1f, routines %.2f: want 1 for a routine, dozens for statements", stmts, routines)
	}

	workloadtest.Exec(t, c, "DROP PROCEDURE tpcc_stock_level")
	workloadtest.Run(t, j, 2, time.Second)
	requireRoutines(t, c, workload.Ours)
	requireAllHold(t, Conditions(ctx, c, 1), "after the second routines run")
}

// A routine of one of the five names that fairbench did not create is never called, replaced
// or dropped: prepare refuses before loading, a routines run refuses, cleanup leaves it.
func TestForeignRoutineIsLeftAlone(t *testing.T) {
	for _, kind := range testserver.Kinds() {
		t.Run(kind, func(t *testing.T) {
			tg := testserver.Database(t, kind)
			ctx := context.Background()
			c := workloadtest.Conn(t, tg)
			foreign := "CREATE FUNCTION tpcc_payment() RETURNS integer LANGUAGE sql AS 'SELECT 7'"
			if tg.Kind.MySQLFamily() {
				foreign = "CREATE PROCEDURE tpcc_payment() SELECT 7"
			}
			workloadtest.Exec(t, c, foreign)
			j := workloadtest.Job(t, tg, name, map[string]string{"warehouses": "1", "style": styleRoutines}, 9)
			for _, force := range []bool{false, true} {
				err := j.Prepare(ctx, j.Env(1, force, nil, nil))
				if err == nil || !strings.Contains(err.Error(), "routine tpcc_payment exists and was not created by fairbench") {
					t.Fatalf("prepare (force=%v) beside a foreign tpcc_payment: %v, want a refusal", force, err)
				}
			}
			if ok, _ := sqldb.TableExists(ctx, c, "warehouse"); ok {
				t.Error("prepare created tables beside a foreign routine")
			}
			err := j.Workload.Cleanup(ctx, j.Env(1, false, nil, nil))
			if err == nil || !strings.Contains(err.Error(), "left routine tpcc_payment in place") {
				t.Fatalf("cleanup beside a foreign tpcc_payment: %v, want it left and said so", err)
			}
			if st, err := workload.RoutineState(ctx, c, "tpcc_payment"); err != nil || st != workload.Foreign {
				t.Fatalf("the user's tpcc_payment is %v (%v) after prepare and cleanup, want it untouched", st, err)
			}
			// A run on tables loaded by hand beside it (here: ensureRoutines directly) refuses too.
			var de *workload.DataError
			if err := ensureRoutines(ctx, c); !errors.As(err, &de) || !strings.Contains(err.Error(), "tpcc_payment") {
				t.Fatalf("routines run beside a foreign tpcc_payment: %v, want a refusal naming it", err)
			}
		})
	}
}

func requireRoutines(t *testing.T, c sqldb.Conn, want workload.TableState) {
	t.Helper()
	for _, n := range routineNames {
		if st, err := workload.RoutineState(context.Background(), c, n); err != nil || st != want {
			t.Errorf("routine %s is %v (%v), want %v", n, st, err, want)
		}
	}
}

// newOrderRoundTrips is the round trips one NewOrder takes in style, counted by sqldb on the
// wire over 30 NewOrders of one worker, with the runner's ROLLBACK after the ones that roll back.
func newOrderRoundTrips(t *testing.T, tg sqldb.Target, style string) float64 {
	t.Helper()
	ctx := context.Background()
	j := workloadtest.Job(t, tg, name, map[string]string{"warehouses": "1", "style": style}, 11)
	c := workloadtest.Conn(t, tg)
	w, err := j.Workload.NewWorker(ctx, c, j.Rand.New(5), 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	var trips, orders int64
	for orders < 30 {
		before, _ := sqldb.CountersOf(c)
		var q workload.Txn
		err := w.Transaction(ctx, &q)
		if err != nil {
			if !errors.Is(err, workload.ErrRolledBack) {
				t.Fatalf("%s transaction: %v", style, err)
			}
			workloadtest.Exec(t, c, "ROLLBACK")
		}
		after, _ := sqldb.CountersOf(c)
		if q.Kind == kindNewOrder {
			trips += after.Sub(before).RoundTrips
			orders++
		}
	}
	return float64(trips) / float64(orders)
}
