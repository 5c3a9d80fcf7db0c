package tpcc

import (
	"context"
	"fmt"
	"strconv"
)

// StockLevel's statements (clause 2.8.2).
const (
	sqlStockCount = "SELECT COUNT(DISTINCT s_i_id) FROM order_line, stock WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id < ? " +
		"AND ol_o_id >= ? AND s_w_id = ? AND s_i_id = ol_i_id AND s_quantity < ?"
)

var qNextOrderID = valueSQL("SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?")

// stockLevel is clause 2.8.2: distinct items of the district's last 20 orders whose stock at the
// home warehouse is below the threshold.
func (w *worker) stockLevel(ctx context.Context) error {
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
	_, err = w.stockCount.Query(ctx, w.w, w.d, next, next-20, w.w, w.thresh)
	return err
}
