package tpcc

import (
	"context"
	"fmt"
	"strconv"

	"github.com/fairbench/fairbench/internal/workload"
)

// NewOrder's statements (clause 2.4.2).
const (
	sqlUpdDistrictNext = "UPDATE district SET d_next_o_id = ? WHERE d_w_id = ? AND d_id = ?"
	sqlInsOrder        = "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local) " +
		"VALUES (?, ?, ?, ?, CURRENT_TIMESTAMP, NULL, ?, ?)"
	sqlInsNewOrder = "INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (?, ?, ?)"
	sqlUpdStock    = "UPDATE stock SET s_quantity = ?, s_ytd = s_ytd + ?, s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + ? " +
		"WHERE s_i_id = ? AND s_w_id = ?"
	sqlInsOrderLine = "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d, " +
		"ol_quantity, ol_amount, ol_dist_info) VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?, ?)"
)

var (
	qWarehouseTax = valueSQL("SELECT w_tax FROM warehouse WHERE w_id = ?")
	qDistrictNext = valueSQL("SELECT d_tax, d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ? FOR UPDATE")
	qCustomerNO   = valueSQL("SELECT c_discount, c_last, c_credit FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?")
	qItem         = valueSQL("SELECT i_price, i_name, i_data FROM item WHERE i_id = ?")
	qStock        [districtsPerWH + 1]valueQuery // per district: the s_dist_xx column differs
)

func init() {
	for d := 1; d <= districtsPerWH; d++ {
		qStock[d] = valueSQL(fmt.Sprintf("SELECT s_quantity, s_data, s_dist_%02d FROM stock WHERE s_i_id = ? AND s_w_id = ? FOR UPDATE", d))
	}
}

// newOrder is clause 2.4.2.
func (w *worker) newOrder(ctx context.Context) error {
	rows, err := w.rows(ctx, qWarehouseTax, w.w)
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		return fmt.Errorf("warehouse %d not found", w.w)
	}
	wTax, _ := strconv.ParseFloat(rows[0][0], 64)
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
	w.order = orderKey(w.w, w.d, oID)
	if _, err := w.updDistrictNext.Exec(ctx, oID+1, w.w, w.d); err != nil {
		return err
	}
	rows, err = w.rows(ctx, qCustomerNO, w.w, w.d, w.cID)
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		return fmt.Errorf("customer %d/%d/%d not found", w.w, w.d, w.cID)
	}
	discount, _ := strconv.ParseFloat(rows[0][0], 64)
	if _, err := w.insOrder.Exec(ctx, oID, w.d, w.w, w.cID, len(w.ol), w.allLocal); err != nil {
		return err
	}
	if _, err := w.insNewOrder.Exec(ctx, oID, w.d, w.w); err != nil {
		return err
	}
	var sum int64
	for n, in := range w.ol {
		amount, err := w.orderLine(ctx, oID, n+1, in)
		if err != nil {
			return err
		}
		sum += amount
	}
	w.total = float64(sum) / 100 * (1 - discount) * (1 + wTax + dTax)
	return nil
}

// orderLine takes one line's item from stock and inserts the order line: its amount in cents.
func (w *worker) orderLine(ctx context.Context, oID, number int, in olInput) (int64, error) {
	rows, err := w.rows(ctx, qItem, in.item)
	if err != nil {
		return 0, err
	}
	if len(rows) == 0 {
		// The unused item: the spec's "Item number is not valid", after which the whole
		// order is rolled back.
		return 0, workload.ErrRolledBack
	}
	// I_NAME, I_DATA and S_DATA only go to the terminal's display (with the brand-generic
	// flag); the transaction uses the price and the district's S_DIST_xx.
	price := parseCents(rows[0][0])
	rows, err = w.rows(ctx, qStock[w.d], in.item, in.supplyW)
	if err != nil {
		return 0, err
	}
	if len(rows) == 0 {
		return 0, fmt.Errorf("stock %d/%d not found", in.supplyW, in.item)
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
	if _, err := w.updStock.Exec(ctx, sQty, in.qty, remote, in.item, in.supplyW); err != nil {
		return 0, err
	}
	amount := int64(in.qty) * price
	w.buf = appendDec(w.buf[:0], amount, 2)
	if _, err := w.insOrderLine.Exec(ctx, oID, w.d, w.w, number, in.item, in.supplyW, in.qty, w.buf, distInfo); err != nil {
		return 0, err
	}
	return amount, nil
}
