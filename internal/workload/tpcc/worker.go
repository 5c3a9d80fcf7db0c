package tpcc

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fairbench/fairbench/internal/randgen"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/workload"
)

// Statements whose results the transaction only receives (as a terminal would display them) are
// prepared. Statements whose values the transaction goes on to use (d_next_o_id, i_price, the
// middle customer's c_id, ...) go through Conn.Query, since sqldb.Stmt hands back only a row
// count: one round trip each, parsed by the server every time, on every engine alike.
const (
	sqlUpdDistrictNext = "UPDATE district SET d_next_o_id = ? WHERE d_w_id = ? AND d_id = ?"
	sqlInsOrder        = "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local) " +
		"VALUES (?, ?, ?, ?, CURRENT_TIMESTAMP, NULL, ?, ?)"
	sqlInsNewOrder = "INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (?, ?, ?)"
	sqlUpdStock    = "UPDATE stock SET s_quantity = ?, s_ytd = s_ytd + ?, s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + ? " +
		"WHERE s_i_id = ? AND s_w_id = ?"
	sqlInsOrderLine = "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d, " +
		"ol_quantity, ol_amount, ol_dist_info) VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?, ?)"

	sqlUpdWarehouseYTD = "UPDATE warehouse SET w_ytd = w_ytd + CAST(? AS DECIMAL(12,2)) WHERE w_id = ?"
	sqlUpdDistrictYTD  = "UPDATE district SET d_ytd = d_ytd + CAST(? AS DECIMAL(12,2)) WHERE d_w_id = ? AND d_id = ?"
	sqlUpdCustPay      = "UPDATE customer SET c_balance = c_balance - CAST(? AS DECIMAL(12,2)), " +
		"c_ytd_payment = c_ytd_payment + CAST(? AS DECIMAL(12,2)), c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"
	sqlUpdCustPayBC = "UPDATE customer SET c_balance = c_balance - CAST(? AS DECIMAL(12,2)), " +
		"c_ytd_payment = c_ytd_payment + CAST(? AS DECIMAL(12,2)), c_payment_cnt = c_payment_cnt + 1, c_data = ? " +
		"WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"
	sqlInsHistory = "INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data) " +
		"VALUES (?, ?, ?, ?, ?, CURRENT_TIMESTAMP, ?, ?)"

	sqlSelCustByID   = "SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"
	sqlSelOrderLines = "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line " +
		"WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?"

	sqlDelNewOrder      = "DELETE FROM new_order WHERE no_w_id = ? AND no_d_id = ? AND no_o_id = ?"
	sqlUpdOrderCarrier  = "UPDATE orders SET o_carrier_id = ? WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?"
	sqlUpdOrderLineDate = "UPDATE order_line SET ol_delivery_d = CURRENT_TIMESTAMP WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?"
	sqlUpdCustDelivery  = "UPDATE customer SET c_balance = c_balance + CAST(? AS DECIMAL(12,2)), c_delivery_cnt = c_delivery_cnt + 1 " +
		"WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"

	sqlStockCount = "SELECT COUNT(DISTINCT s_i_id) FROM order_line, stock WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id < ? " +
		"AND ol_o_id >= ? AND s_w_id = ? AND s_i_id = ol_i_id AND s_quantity < ?"
)

// Statements that return values the transaction uses.
var (
	qWarehouseTax  = valueSQL("SELECT w_tax FROM warehouse WHERE w_id = ?")
	qDistrictNext  = valueSQL("SELECT d_tax, d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ? FOR UPDATE")
	qCustomerNO    = valueSQL("SELECT c_discount, c_last, c_credit FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?")
	qItem          = valueSQL("SELECT i_price, i_name, i_data FROM item WHERE i_id = ?")
	qStock         [districtsPerWH + 1]valueQuery // per district: the s_dist_xx column differs
	qWarehouseAddr = valueSQL("SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip FROM warehouse WHERE w_id = ?")
	qDistrictAddr  = valueSQL("SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip FROM district WHERE d_w_id = ? AND d_id = ?")
	qCustByName    = valueSQL("SELECT c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first")
	qCustPay       = valueSQL("SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_since, " +
		"c_credit, c_credit_lim, c_discount, c_balance FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ? FOR UPDATE")
	qCustData     = valueSQL("SELECT c_data FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ? FOR UPDATE")
	qCustOSByName = valueSQL("SELECT c_id, c_balance, c_first, c_middle FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first")
	qLastOrder    = valueSQL("SELECT o_id, o_carrier_id, o_entry_d FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ? ORDER BY o_id DESC LIMIT 1")
	qOldestNew    = valueSQL("SELECT no_o_id FROM new_order WHERE no_w_id = ? AND no_d_id = ? ORDER BY no_o_id LIMIT 1 FOR UPDATE")
	qOrderCust    = valueSQL("SELECT o_c_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_id = ? FOR UPDATE")
	qOrderSum     = valueSQL("SELECT SUM(ol_amount) FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?")
	qNextOrderID  = valueSQL("SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?")
)

func init() {
	for d := 1; d <= districtsPerWH; d++ {
		qStock[d] = valueSQL(fmt.Sprintf("SELECT s_quantity, s_data, s_dist_%02d FROM stock WHERE s_i_id = ? AND s_w_id = ? FOR UPDATE", d))
	}
}

// valueQuery is a statement whose rows the transaction reads. On the MySQL family its integer and
// string arguments are written into the text as literals, so that it costs one round trip as on
// PostgreSQL (the driver would otherwise prepare, execute and close it: two).
type valueQuery struct {
	sql   string
	parts []string
}

func valueSQL(sql string) valueQuery { return valueQuery{sql: sql, parts: strings.Split(sql, "?")} }

func (w *worker) rows(ctx context.Context, q valueQuery, args ...any) ([][]string, error) {
	if !w.mysql {
		return w.conn.Query(ctx, q.sql, args...)
	}
	b := w.lit[:0]
	for i, p := range q.parts {
		b = append(b, p...)
		if i < len(args) {
			switch v := args[i].(type) {
			case int:
				b = strconv.AppendInt(b, int64(v), 10)
			case string:
				b = append(b, '\'')
				for j := 0; j < len(v); j++ {
					if v[j] == '\'' || v[j] == '\\' {
						b = append(b, v[j])
					}
					b = append(b, v[j])
				}
				b = append(b, '\'')
			default:
				return nil, fmt.Errorf("tpcc: no literal form for %T", v)
			}
		}
	}
	w.lit = b
	return w.conn.Query(ctx, string(b))
}

// Keying and think times of clause 5.2.5.7, in seconds, per kind.
var (
	keyingTime = [...]float64{18, 3, 2, 2, 2}
	thinkMean  = [...]float64{12, 12, 10, 5, 5}
)

type olInput struct{ item, supplyW, qty int }

type worker struct {
	t     *tpcc
	conn  sqldb.Conn
	mysql bool
	g     gen
	rc    runConstants
	w     int // home warehouse

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

	lit, buf []byte
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
	}
	g := gen{rng}
	t.mu.Lock()
	if thread == 0 || !t.rcSet {
		t.rc, t.rcSet = newRunConstants(g), true
	}
	rc := t.rc
	t.mu.Unlock()
	w := &worker{t: t, conn: conn, mysql: conn.Kind().MySQLFamily(), g: g, rc: rc, w: thread%t.warehouses + 1,
		ol: make([]olInput, 0, 15)}
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

// Transaction runs one transaction of the mix. A call with q already counting statements is the
// runner retrying after a deadlock or serialization failure: it replays the same inputs.
func (w *worker) Transaction(ctx context.Context, q *workload.Queries) error {
	if q.Read+q.Write+q.Other == 0 {
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
	q.Other++
	if err := w.conn.Exec(ctx, "BEGIN"); err != nil {
		return err
	}
	var err error
	switch w.kind {
	case kindNewOrder:
		err = w.newOrder(ctx, q)
	case kindPayment:
		err = w.payment(ctx, q)
	case kindOrderStatus:
		err = w.orderStatus(ctx, q)
	case kindDelivery:
		err = w.delivery(ctx, q)
	default:
		err = w.stockLevel(ctx, q)
	}
	if err != nil {
		return err
	}
	q.Other++
	return w.conn.Exec(ctx, "COMMIT")
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

// newOrder is clause 2.4.2.
func (w *worker) newOrder(ctx context.Context, q *workload.Queries) error {
	q.Read++
	rows, err := w.rows(ctx, qWarehouseTax, w.w)
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		return fmt.Errorf("warehouse %d not found", w.w)
	}
	wTax, _ := strconv.ParseFloat(rows[0][0], 64)
	q.Read++
	rows, err = w.rows(ctx, qDistrictNext, w.w, w.d)
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		return fmt.Errorf("district %d/%d not found", w.w, w.d)
	}
	dTax, _ := strconv.ParseFloat(rows[0][0], 64)
	oID, err := strconv.Atoi(rows[0][1])
	if err != nil {
		return fmt.Errorf("d_next_o_id %q: %w", rows[0][1], err)
	}
	q.Write++
	if _, err := w.updDistrictNext.Exec(ctx, oID+1, w.w, w.d); err != nil {
		return err
	}
	q.Read++
	rows, err = w.rows(ctx, qCustomerNO, w.w, w.d, w.cID)
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		return fmt.Errorf("customer %d/%d/%d not found", w.w, w.d, w.cID)
	}
	discount, _ := strconv.ParseFloat(rows[0][0], 64)
	q.Write++
	if _, err := w.insOrder.Exec(ctx, oID, w.d, w.w, w.cID, len(w.ol), w.allLocal); err != nil {
		return err
	}
	q.Write++
	if _, err := w.insNewOrder.Exec(ctx, oID, w.d, w.w); err != nil {
		return err
	}
	var sum int64
	for n, in := range w.ol {
		q.Read++
		rows, err = w.rows(ctx, qItem, in.item)
		if err != nil {
			return err
		}
		if len(rows) == 0 {
			// The unused item: the spec's "Item number is not valid", after which the whole
			// order is rolled back.
			return workload.ErrRolledBack
		}
		// I_NAME, I_DATA and S_DATA only go to the terminal's display (with the brand-generic
		// flag); the transaction uses the price and the district's S_DIST_xx.
		price := parseCents(rows[0][0])
		q.Read++
		rows, err = w.rows(ctx, qStock[w.d], in.item, in.supplyW)
		if err != nil {
			return err
		}
		if len(rows) == 0 {
			return fmt.Errorf("stock %d/%d not found", in.supplyW, in.item)
		}
		sQty, _ := strconv.Atoi(rows[0][0])
		distInfo := rows[0][2]
		if sQty >= in.qty+10 {
			sQty -= in.qty
		} else {
			sQty = sQty - in.qty + 91
		}
		remote := 0
		if in.supplyW != w.w {
			remote = 1
		}
		q.Write++
		if _, err := w.updStock.Exec(ctx, sQty, in.qty, remote, in.item, in.supplyW); err != nil {
			return err
		}
		amount := int64(in.qty) * price
		sum += amount
		w.buf = appendDec(w.buf[:0], amount, 2)
		q.Write++
		if _, err := w.insOrderLine.Exec(ctx, oID, w.d, w.w, n+1, in.item, in.supplyW, in.qty, w.buf, distInfo); err != nil {
			return err
		}
	}
	w.total = float64(sum) / 100 * (1 - discount) * (1 + wTax + dTax)
	return nil
}

// payment is clause 2.5.2.
func (w *worker) payment(ctx context.Context, q *workload.Queries) error {
	w.buf = appendDec(w.buf[:0], w.amount, 2)
	amount := string(w.buf)
	q.Write++
	if _, err := w.updWarehouseYTD.Exec(ctx, amount, w.w); err != nil {
		return err
	}
	q.Read++
	rows, err := w.rows(ctx, qWarehouseAddr, w.w)
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		return fmt.Errorf("warehouse %d not found", w.w)
	}
	wName := rows[0][0]
	q.Write++
	if _, err := w.updDistrictYTD.Exec(ctx, amount, w.w, w.d); err != nil {
		return err
	}
	q.Read++
	rows, err = w.rows(ctx, qDistrictAddr, w.w, w.d)
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		return fmt.Errorf("district %d/%d not found", w.w, w.d)
	}
	dName := rows[0][0]
	cID, err := w.customerID(ctx, q, qCustByName, w.cW, w.cD)
	if err != nil {
		return err
	}
	q.Read++
	rows, err = w.rows(ctx, qCustPay, w.cW, w.cD, cID)
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		return fmt.Errorf("customer %d/%d/%d not found", w.cW, w.cD, cID)
	}
	if rows[0][10] == "BC" {
		q.Read++
		rows, err = w.rows(ctx, qCustData, w.cW, w.cD, cID)
		if err != nil {
			return err
		}
		if len(rows) == 0 {
			return fmt.Errorf("customer %d/%d/%d not found", w.cW, w.cD, cID)
		}
		// The new C_DATA is the payment's ids and amount in front of the old, cut to 500 characters.
		b := w.buf[:0]
		for _, v := range [...]int{cID, w.cD, w.cW, w.d, w.w} {
			b = append(strconv.AppendInt(b, int64(v), 10), ' ')
		}
		b = append(appendDec(b, w.amount, 2), " | "...)
		b = append(b, rows[0][0]...)
		if len(b) > 500 {
			b = b[:500]
		}
		w.buf = b
		q.Write++
		if _, err := w.updCustPayBC.Exec(ctx, amount, amount, b, w.cW, w.cD, cID); err != nil {
			return err
		}
	} else {
		q.Write++
		if _, err := w.updCustPay.Exec(ctx, amount, amount, w.cW, w.cD, cID); err != nil {
			return err
		}
	}
	hData := wName + "    " + dName
	q.Write++
	_, err = w.insHist.Exec(ctx, cID, w.cD, w.cW, w.d, w.w, amount, hData)
	return err
}

// customerID resolves the customer of Payment and OrderStatus: by id, or by last name as the row
// at position ceil(n/2) of those with that name sorted by first name (clause 2.5.2.2).
func (w *worker) customerID(ctx context.Context, q *workload.Queries, byName valueQuery, cw, cd int) (int, error) {
	if !w.byName {
		return w.cID, nil
	}
	q.Read++
	rows, err := w.rows(ctx, byName, cw, cd, w.cLast)
	if err != nil {
		return 0, err
	}
	if len(rows) == 0 {
		return 0, fmt.Errorf("no customer named %s in district %d/%d", w.cLast, cw, cd)
	}
	return strconv.Atoi(rows[(len(rows)-1)/2][0])
}

// orderStatus is clause 2.6.2.
func (w *worker) orderStatus(ctx context.Context, q *workload.Queries) error {
	var cID int
	if w.byName {
		var err error
		if cID, err = w.customerID(ctx, q, qCustOSByName, w.w, w.d); err != nil {
			return err
		}
	} else {
		cID = w.cID
		q.Read++
		if _, err := w.selCustByID.Query(ctx, w.w, w.d, cID); err != nil {
			return err
		}
	}
	q.Read++
	rows, err := w.rows(ctx, qLastOrder, w.w, w.d, cID)
	if err != nil || len(rows) == 0 {
		return err
	}
	oID, err := strconv.Atoi(rows[0][0])
	if err != nil {
		return err
	}
	q.Read++
	_, err = w.selOrderLines.Query(ctx, w.w, w.d, oID)
	return err
}

// delivery is clause 2.7.4, for all ten districts in one transaction. A district whose oldest
// new order another Delivery took meanwhile is skipped, as one without new orders is.
func (w *worker) delivery(ctx context.Context, q *workload.Queries) error {
	for d := 1; d <= districtsPerWH; d++ {
		q.Read++
		rows, err := w.rows(ctx, qOldestNew, w.w, d)
		if err != nil {
			return err
		}
		if len(rows) == 0 {
			continue
		}
		oID, err := strconv.Atoi(rows[0][0])
		if err != nil {
			return err
		}
		q.Write++
		n, err := w.delNewOrder.Exec(ctx, w.w, d, oID)
		if err != nil {
			return err
		}
		if n == 0 {
			continue
		}
		q.Read++
		rows, err = w.rows(ctx, qOrderCust, w.w, d, oID)
		if err != nil {
			return err
		}
		if len(rows) == 0 {
			return fmt.Errorf("order %d/%d/%d is in new_order but not in orders", w.w, d, oID)
		}
		cID, err := strconv.Atoi(rows[0][0])
		if err != nil {
			return err
		}
		q.Write++
		if _, err := w.updOrderCarrier.Exec(ctx, w.carrier, w.w, d, oID); err != nil {
			return err
		}
		q.Write++
		if _, err := w.updOrderLineDate.Exec(ctx, w.w, d, oID); err != nil {
			return err
		}
		q.Read++
		rows, err = w.rows(ctx, qOrderSum, w.w, d, oID)
		if err != nil {
			return err
		}
		sum := "0"
		if len(rows) > 0 && rows[0][0] != "" {
			sum = rows[0][0]
		}
		q.Write++
		if _, err := w.updCustDelivery.Exec(ctx, sum, w.w, d, cID); err != nil {
			return err
		}
	}
	return nil
}

// stockLevel is clause 2.8.2: distinct items of the district's last 20 orders whose stock at the
// home warehouse is below the threshold.
func (w *worker) stockLevel(ctx context.Context, q *workload.Queries) error {
	q.Read++
	rows, err := w.rows(ctx, qNextOrderID, w.w, w.d)
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		return fmt.Errorf("district %d/%d not found", w.w, w.d)
	}
	next, err := strconv.Atoi(rows[0][0])
	if err != nil {
		return err
	}
	q.Read++
	_, err = w.stockCount.Query(ctx, w.w, w.d, next, next-20, w.w, w.thresh)
	return err
}
