package tpcc

import (
	"context"
	"fmt"
	"strconv"
)

// Delivery's statements (clause 2.7.4).
const (
	sqlDelNewOrder      = "DELETE FROM new_order WHERE no_w_id = ? AND no_d_id = ? AND no_o_id = ?"
	sqlUpdOrderCarrier  = "UPDATE orders SET o_carrier_id = ? WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?"
	sqlUpdOrderLineDate = "UPDATE order_line SET ol_delivery_d = CURRENT_TIMESTAMP WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?"
	sqlUpdCustDelivery  = "UPDATE customer SET c_balance = c_balance + CAST(? AS DECIMAL(12,2)), c_delivery_cnt = c_delivery_cnt + 1 " +
		"WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"
)

var (
	qOldestNew = valueSQL("SELECT no_o_id FROM new_order WHERE no_w_id = ? AND no_d_id = ? ORDER BY no_o_id LIMIT 1 FOR UPDATE")
	qOrderCust = valueSQL("SELECT o_c_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_id = ? FOR UPDATE")
	qOrderSum  = valueSQL("SELECT SUM(ol_amount) FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?")
)

// delivery is clause 2.7.4, for all ten districts in one transaction. A district whose oldest
// new order another Delivery took meanwhile is skipped, as one without new orders is.
func (w *worker) delivery(ctx context.Context) error {
	for d := 1; d <= districtsPerWH; d++ {
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
		n, err := w.delNewOrder.Exec(ctx, w.w, d, oID)
		if err != nil {
			return err
		}
		if n == 0 {
			continue
		}
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
		if _, err := w.updOrderCarrier.Exec(ctx, w.carrier, w.w, d, oID); err != nil {
			return err
		}
		if _, err := w.updOrderLineDate.Exec(ctx, w.w, d, oID); err != nil {
			return err
		}
		rows, err = w.rows(ctx, qOrderSum, w.w, d, oID)
		if err != nil {
			return err
		}
		sum := "0"
		if len(rows) > 0 && rows[0][0] != "" {
			sum = rows[0][0]
		}
		if _, err := w.updCustDelivery.Exec(ctx, sum, w.w, d, cID); err != nil {
			return err
		}
	}
	return nil
}
