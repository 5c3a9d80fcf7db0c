package tpcc

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/fairbench/fairbench/internal/dialect"
	"github.com/fairbench/fairbench/internal/randgen"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/workload"
)

// Statements whose results the transaction only receives (as a terminal would display them) are
// prepared. Statements whose values the transaction goes on to use (d_next_o_id, i_price, the
// middle customer's c_id, ...) go through Conn.Query, since sqldb.Stmt hands back only a row
// count: one round trip each, parsed by the server every time, on every engine alike. Each
// transaction's statements are in its own file (new_order.go, payment.go, ...).

// valueQuery is a statement whose values the transaction reads, one round trip on every engine.
type valueQuery = workload.ValueQuery

func valueSQL(sql string) valueQuery { return workload.NewValueQuery(sql) }

func (w *worker) rows(ctx context.Context, q valueQuery, args ...any) ([][]string, error) {
	return q.Rows(ctx, w.conn, &w.lit, args...)
}

// Keying and think times of clause 5.2.5.7, in seconds, per kind.
var (
	keyingTime = [...]float64{18, 3, 2, 2, 2}
	thinkMean  = [...]float64{12, 12, 10, 5, 5}
)

type olInput struct{ item, supplyW, qty int }

type worker struct {
	t    *tpcc
	conn sqldb.Conn
	g    gen
	rc   runConstants
	w    int // home warehouse

	updDistrictNext, insOrder, insNewOrder, updStock, insOrderLine     sqldb.Stmt
	updWarehouseYTD, updDistrictYTD, updCustPay, updCustPayBC, insHist sqldb.Stmt
	selCustByID, selOrderLines                                         sqldb.Stmt
	delNewOrder, updOrderCarrier, updOrderLineDate, updCustDelivery    sqldb.Stmt
	stockCount                                                         sqldb.Stmt

	// The inputs of the transaction in flight, kept so that a retry after a deadlock replays the
	// same transaction rather than drawing a new one.
	kind     int
	d        int
	cW, cD   int // customer's warehouse and district (Payment's remote customer)
	cID      int
	byName   bool
	cLast    string
	ol       []olInput
	allLocal int
	amount   int64 // Payment's H_AMOUNT, cents
	carrier  int
	thresh   int

	pendingThink time.Duration

	// order is the NewOrder in flight (orderKey), 0 for other kinds; acks the orders the
	// worker saw committed (acks.go).
	order int64
	acks  workload.Acks

	lit, buf []byte
	batch    batchSQL      // --style batched's statements, built once per size
	calls    [5]valueQuery // --style routines' CALLs, by kind
	// total is NewOrder's computed total amount: the terminal's output, kept so the arithmetic
	// the spec asks of the client is done.
	total float64
}

// NewWorker pins the thread to its home warehouse and prepares its statements. The run's NURand
// constants are drawn by its thread 0 (the runner builds every run's workers from thread 0 up) and
// shared by the others, so each run, of a sweep too, has its own.
func (t *tpcc) NewWorker(ctx context.Context, conn sqldb.Conn, rng *randgen.Rand, thread, threads int) (workload.Worker, error) {
	if thread == 0 {
		if err := t.checkPrepared(ctx, conn); err != nil {
			return nil, err
		}
		if t.style == styleRoutines {
			if err := ensureRoutines(ctx, conn); err != nil {
				return nil, err
			}
		}
	}
	g := gen{rng}
	t.mu.Lock()
	if thread == 0 || !t.rcSet {
		t.rc, t.rcSet = newRunConstants(g), true
	}
	rc := t.rc
	t.mu.Unlock()
	w := &worker{t: t, conn: conn, g: g, rc: rc, w: thread%t.warehouses + 1,
		ol: make([]olInput, 0, 15), batch: batchSQL{}}
	if t.style == styleRoutines {
		w.calls = routineCalls(dialect.Of(conn))
		return w, nil // the routines hold the statements
	}
	for _, p := range []struct {
		dst *sqldb.Stmt
		sql string
	}{
		{&w.updDistrictNext, sqlUpdDistrictNext}, {&w.insOrder, sqlInsOrder}, {&w.insNewOrder, sqlInsNewOrder},
		{&w.updStock, sqlUpdStock}, {&w.insOrderLine, sqlInsOrderLine},
		{&w.updWarehouseYTD, sqlUpdWarehouseYTD}, {&w.updDistrictYTD, sqlUpdDistrictYTD}, {&w.updCustPay, sqlUpdCustPay},
		{&w.updCustPayBC, sqlUpdCustPayBC}, {&w.insHist, sqlInsHistory},
		{&w.selCustByID, sqlSelCustByID}, {&w.selOrderLines, sqlSelOrderLines},
		{&w.delNewOrder, sqlDelNewOrder}, {&w.updOrderCarrier, sqlUpdOrderCarrier}, {&w.updOrderLineDate, sqlUpdOrderLineDate},
		{&w.updCustDelivery, sqlUpdCustDelivery}, {&w.stockCount, sqlStockCount},
	} {
		st, err := conn.Prepare(ctx, p.sql)
		if err != nil {
			if sqldb.IsUndefinedTable(err) {
				return nil, &workload.NotPreparedError{Workload: name, Detail: "TPC-C tables not found"}
			}
			return nil, fmt.Errorf("preparing %q: %w", p.sql, err)
		}
		*p.dst = st
	}
	return w, nil
}

// Transaction runs one transaction of the mix. A retry (q.Retry, after a deadlock or
// serialization failure) replays the same inputs.
func (w *worker) Transaction(ctx context.Context, q *workload.Txn) error {
	if !q.Retry {
		w.draw()
		if w.t.think {
			// The previous transaction's think time, then this one's keying time (clause 5.2.5).
			// Reported as paused, so the latency is the response time alone; a run still ends
			// only when every thread is through its sleep.
			pause := w.pendingThink + time.Duration(keyingTime[w.kind]*float64(time.Second))
			time.Sleep(pause)
			q.Paused += pause
			w.pendingThink = time.Duration(w.g.exp(thinkMean[w.kind]) * float64(time.Second))
		}
	}
	q.Kind = w.kind
	if w.t.style == styleRoutines {
		return w.callRoutine(ctx)
	}
	w.order = 0
	if err := w.conn.Exec(ctx, "BEGIN"); err != nil {
		return err
	}
	var err error
	switch w.kind {
	case kindNewOrder:
		if w.t.style == styleBatched {
			err = w.newOrderBatched(ctx)
		} else {
			err = w.newOrder(ctx)
		}
	case kindPayment:
		err = w.payment(ctx)
	case kindOrderStatus:
		err = w.orderStatus(ctx)
	case kindDelivery:
		if w.t.style == styleBatched {
			err = w.deliveryBatched(ctx)
		} else {
			err = w.delivery(ctx)
		}
	default:
		err = w.stockLevel(ctx)
	}
	if err != nil {
		return err
	}
	return w.commit(ctx)
}

// draw picks the next transaction and its inputs (clause 5.2.3's mix, clause 2's input rules).
func (w *worker) draw() {
	g := w.g
	W := w.t.warehouses
	w.d = g.intn(1, districtsPerWH)
	switch r := g.intn(1, 100); {
	case r <= 45:
		w.kind = kindNewOrder
		w.cID = g.nurand(1023, w.rc.cID, 1, customersPerDist)
		n := g.intn(5, 15)
		rollback := g.chance(1)
		w.ol = w.ol[:0]
		w.allLocal = 1
		for i := 0; i < n; i++ {
			in := olInput{item: g.nurand(8191, w.rc.cItem, 1, items), supplyW: w.w, qty: g.intn(1, 10)}
			if W > 1 && g.chance(1) {
				in.supplyW = w.other(W)
				w.allLocal = 0
			}
			if rollback && i == n-1 {
				in.item = items + 1 // an unused item id (clause 2.4.1.4)
			}
			w.ol = append(w.ol, in)
		}
		// Items are visited in a global order so that two NewOrders never wait on each other's
		// stock rows in a cycle; the unused item, the largest id, stays last.
		sort.Slice(w.ol, func(i, j int) bool {
			a, b := w.ol[i], w.ol[j]
			return a.item < b.item || a.item == b.item && a.supplyW < b.supplyW
		})
	case r <= 88:
		w.kind = kindPayment
		w.amount = int64(g.intn(100, 500000))
		w.cW, w.cD = w.w, w.d
		if W > 1 && g.chance(15) {
			w.cW, w.cD = w.other(W), g.intn(1, districtsPerWH)
		}
		w.pickCustomer()
	case r <= 92:
		w.kind = kindOrderStatus
		w.pickCustomer()
	case r <= 96:
		w.kind = kindDelivery
		w.carrier = g.intn(1, 10)
	default:
		w.kind = kindStockLevel
		w.thresh = g.intn(10, 20)
	}
}

// pickCustomer chooses by last name 60% of the time, else by id (clauses 2.5.1.2, 2.6.1.2).
func (w *worker) pickCustomer() {
	w.byName = w.g.chance(60)
	if w.byName {
		w.buf = lastName(w.buf[:0], w.g.nurand(255, w.rc.cLast, 0, 999))
		w.cLast = string(w.buf)
	} else {
		w.cID = w.g.nurand(1023, w.rc.cID, 1, customersPerDist)
	}
}

// other is a warehouse other than the home one, uniformly.
func (w *worker) other(W int) int {
	o := w.g.intn(1, W-1)
	if o >= w.w {
		o++
	}
	return o
}
