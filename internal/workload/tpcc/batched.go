package tpcc

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/fairbench/fairbench/internal/workload"
)

// --style batched is TPC-C as go-tpc sends it: NewOrder reads its customer and warehouse in one
// join, all its items in one statement and all its stock rows in another, and inserts its order
// lines in one multi-row INSERT; Delivery finds each district's oldest new order, then deletes,
// updates and sums all ten districts' orders in one statement each. The transactions' effects are
// those of --style statements, in about a third of the round trips (NewOrder: 20 for 10 lines
// instead of 49). An unused item is found by the item read, before any stock row is touched.

var (
	qCustWarehouse = valueSQL("SELECT c_discount, c_last, c_credit, w_tax FROM customer, warehouse " +
		"WHERE w_id = ? AND c_w_id = w_id AND c_d_id = ? AND c_id = ?")
)

// placeholders writes n groups of "(?, ?, ...)" with k marks each, comma-separated (k = 1: "?").
func placeholders(n, k int) string {
	group := "?"
	if k > 1 {
		group = "(" + strings.TrimSuffix(strings.Repeat("?, ", k), ", ") + ")"
	}
	return strings.TrimSuffix(strings.Repeat(group+", ", n), ", ")
}

// batchSQL keeps the multi-row statements a worker has built, by their text pattern and size.
type batchSQL map[string]valueQuery

func (b batchSQL) get(format string, n, k int, args ...any) valueQuery {
	key := fmt.Sprint(format, n, k, args)
	q, ok := b[key]
	if !ok {
		q = valueSQL(fmt.Sprintf(format, append(args, placeholders(n, k))...))
		b[key] = q
	}
	return q
}

type stockKey struct{ w, item int }

func (w *worker) newOrderBatched(ctx context.Context) error {
	rows, err := w.rows(ctx, qCustWarehouse, w.w, w.d, w.cID)
	if err != nil || len(rows) == 0 {
		return orMissing(err, "customer %d/%d/%d", w.w, w.d, w.cID)
	}
	discount, _ := strconv.ParseFloat(rows[0][0], 64)
	wTax, _ := strconv.ParseFloat(rows[0][3], 64)
	rows, err = w.rows(ctx, qDistrictNext, w.w, w.d)
	if err != nil || len(rows) == 0 {
		return orMissing(err, "district %d/%d", w.w, w.d)
	}
	dTax, _ := strconv.ParseFloat(rows[0][0], 64)
	oID, err := strconv.Atoi(rows[0][1])
	if err != nil {
		return fmt.Errorf("d_next_o_id %q: %w", rows[0][1], err)
	}
	w.order = orderKey(w.w, w.d, oID)
	if _, err := w.updDistrictNext.Exec(ctx, oID+1, w.w, w.d); err != nil {
		return err
	}
	if _, err := w.insOrder.Exec(ctx, oID, w.d, w.w, w.cID, len(w.ol), w.allLocal); err != nil {
		return err
	}
	if _, err := w.insNewOrder.Exec(ctx, oID, w.d, w.w); err != nil {
		return err
	}
	price, err := w.itemPrices(ctx)
	if err != nil {
		return err
	}
	stock, err := w.stockRows(ctx)
	if err != nil {
		return err
	}
	var sum int64
	lines := make([]any, 0, 9*len(w.ol))
	for n, in := range w.ol {
		k := stockKey{in.supplyW, in.item}
		s := stock[k]
		if s.qty >= in.qty+10 {
			s.qty -= in.qty
		} else {
			s.qty = s.qty - in.qty + 91
		}
		stock[k] = s
		remote := 0
		if in.supplyW != w.w {
			remote = 1
		}
		if _, err := w.updStock.Exec(ctx, s.qty, in.qty, remote, in.item, in.supplyW); err != nil {
			return err
		}
		amount := int64(in.qty) * price[in.item]
		sum += amount
		lines = append(lines, oID, w.d, w.w, n+1, in.item, in.supplyW, in.qty, string(appendDec(nil, amount, 2)), s.dist)
	}
	if _, err := w.rows(ctx, w.batch.get("INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, "+
		"ol_quantity, ol_amount, ol_dist_info) VALUES %s", len(w.ol), 9), lines...); err != nil {
		return err
	}
	w.total = float64(sum) / 100 * (1 - discount) * (1 + wTax + dTax)
	return nil
}

// itemPrices reads every ordered item in one statement; a missing one is the unused item of
// clause 2.4.1.4, and the order rolls back.
func (w *worker) itemPrices(ctx context.Context) (map[int]int64, error) {
	ids := make([]any, 0, len(w.ol))
	for i, in := range w.ol {
		if i == 0 || in.item != w.ol[i-1].item { // sorted by item: duplicates are adjacent
			ids = append(ids, in.item)
		}
	}
	rows, err := w.rows(ctx, w.batch.get("SELECT i_id, i_price, i_name, i_data FROM item WHERE i_id IN (%s)", len(ids), 1), ids...)
	if err != nil {
		return nil, err
	}
	if len(rows) < len(ids) {
		return nil, workload.ErrRolledBack
	}
	price := make(map[int]int64, len(rows))
	for _, r := range rows {
		id, _ := strconv.Atoi(r[0])
		price[id] = parseCents(r[1])
	}
	return price, nil
}

type stockRow struct {
	qty  int
	dist string
}

// stockRows locks and reads every stock row the order takes from in one statement, in key order
// (PostgreSQL locks the rows as the sort hands them out), so that two NewOrders never wait on
// each other's stock rows in a cycle.
func (w *worker) stockRows(ctx context.Context) (map[stockKey]stockRow, error) {
	keys := make([]any, 0, 2*len(w.ol))
	seen := make(map[stockKey]stockRow, len(w.ol))
	for _, in := range w.ol {
		k := stockKey{in.supplyW, in.item}
		if _, dup := seen[k]; !dup {
			seen[k] = stockRow{}
			keys = append(keys, in.supplyW, in.item)
		}
	}
	rows, err := w.rows(ctx, w.batch.get("SELECT s_w_id, s_i_id, s_quantity, s_data, s_dist_%02d FROM stock WHERE (s_w_id, s_i_id) IN (%s) ORDER BY s_w_id, s_i_id FOR UPDATE",
		len(keys)/2, 2, w.d), keys...)
	if err != nil {
		return nil, err
	}
	if len(rows) != len(seen) {
		return nil, fmt.Errorf("%d of %d stock rows found for order lines of warehouse %d", len(rows), len(seen), w.w)
	}
	for _, r := range rows {
		sw, _ := strconv.Atoi(r[0])
		item, _ := strconv.Atoi(r[1])
		qty, _ := strconv.Atoi(r[2])
		seen[stockKey{sw, item}] = stockRow{qty: qty, dist: r[4]}
	}
	return seen, nil
}

// deliveryBatched delivers the oldest new order of every district that has one.
func (w *worker) deliveryBatched(ctx context.Context) error {
	keys := make([]any, 0, 3*districtsPerWH)
	for d := 1; d <= districtsPerWH; d++ {
		rows, err := w.rows(ctx, qOldestNew, w.w, d)
		if err != nil {
			return err
		}
		if len(rows) > 0 {
			oID, err := strconv.Atoi(rows[0][0])
			if err != nil {
				return err
			}
			keys = append(keys, w.w, d, oID)
		}
	}
	n := len(keys) / 3
	if n == 0 {
		return nil
	}
	if _, err := w.rows(ctx, w.batch.get("DELETE FROM new_order WHERE (no_w_id, no_d_id, no_o_id) IN (%s)", n, 3), keys...); err != nil {
		return err
	}
	if _, err := w.rows(ctx, w.batch.get("UPDATE orders SET o_carrier_id = ? WHERE (o_w_id, o_d_id, o_id) IN (%s)", n, 3), append([]any{w.carrier}, keys...)...); err != nil {
		return err
	}
	custs, err := w.rows(ctx, w.batch.get("SELECT o_d_id, o_c_id FROM orders WHERE (o_w_id, o_d_id, o_id) IN (%s)", n, 3), keys...)
	if err != nil {
		return err
	}
	if _, err := w.rows(ctx, w.batch.get("UPDATE order_line SET ol_delivery_d = CURRENT_TIMESTAMP WHERE (ol_w_id, ol_d_id, ol_o_id) IN (%s)", n, 3), keys...); err != nil {
		return err
	}
	sums, err := w.rows(ctx, w.batch.get("SELECT ol_d_id, SUM(ol_amount) FROM order_line WHERE (ol_w_id, ol_d_id, ol_o_id) IN (%s) GROUP BY ol_d_id", n, 3), keys...)
	if err != nil {
		return err
	}
	// Customers in district order, as the statements style updates them, so two Deliveries lock
	// them in the same order.
	sort.Slice(custs, func(i, j int) bool { return atoiOr0(custs[i][0]) < atoiOr0(custs[j][0]) })
	sum := make(map[string]string, len(sums))
	for _, r := range sums {
		sum[r[0]] = r[1]
	}
	for _, c := range custs {
		total := sum[c[0]]
		if total == "" {
			total = "0"
		}
		d, _ := strconv.Atoi(c[0])
		cID, _ := strconv.Atoi(c[1])
		if _, err := w.updCustDelivery.Exec(ctx, total, w.w, d, cID); err != nil {
			return err
		}
	}
	return nil
}

func atoiOr0(s string) int { n, _ := strconv.Atoi(s); return n }

// orMissing is err, or else the error for a row that should be there.
func orMissing(err error, format string, args ...any) error {
	if err != nil {
		return err
	}
	return fmt.Errorf(format+" not found", args...)
}
