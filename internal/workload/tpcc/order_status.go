package tpcc

import (
	"context"
	"strconv"
)

// OrderStatus's statements (clause 2.6.2).
const (
	sqlSelCustByID   = "SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"
	sqlSelOrderLines = "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line " +
		"WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?"
)

var (
	qCustOSByName = valueSQL("SELECT c_id, c_balance, c_first, c_middle FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first")
	qLastOrder    = valueSQL("SELECT o_id, o_carrier_id, o_entry_d FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ? ORDER BY o_id DESC LIMIT 1")
)

// orderStatus is clause 2.6.2.
func (w *worker) orderStatus(ctx context.Context) error {
	var cID int
	if w.byName {
		var err error
		if cID, err = w.customerID(ctx, qCustOSByName, w.w, w.d); err != nil {
			return err
		}
	} else {
		cID = w.cID
		if _, err := w.selCustByID.Query(ctx, w.w, w.d, cID); err != nil {
			return err
		}
	}
	rows, err := w.rows(ctx, qLastOrder, w.w, w.d, cID)
	if err != nil || len(rows) == 0 {
		return err
	}
	oID, err := strconv.Atoi(rows[0][0])
	if err != nil {
		return err
	}
	_, err = w.selOrderLines.Query(ctx, w.w, w.d, oID)
	return err
}
