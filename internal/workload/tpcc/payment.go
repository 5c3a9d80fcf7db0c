package tpcc

import (
	"context"
	"fmt"
	"strconv"
)

// Payment's statements (clause 2.5.2).
const (
	sqlUpdWarehouseYTD = "UPDATE warehouse SET w_ytd = w_ytd + CAST(? AS DECIMAL(12,2)) WHERE w_id = ?"
	sqlUpdDistrictYTD  = "UPDATE district SET d_ytd = d_ytd + CAST(? AS DECIMAL(12,2)) WHERE d_w_id = ? AND d_id = ?"
	sqlUpdCustPay      = "UPDATE customer SET c_balance = c_balance - CAST(? AS DECIMAL(12,2)), " +
		"c_ytd_payment = c_ytd_payment + CAST(? AS DECIMAL(12,2)), c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"
	sqlUpdCustPayBC = "UPDATE customer SET c_balance = c_balance - CAST(? AS DECIMAL(12,2)), " +
		"c_ytd_payment = c_ytd_payment + CAST(? AS DECIMAL(12,2)), c_payment_cnt = c_payment_cnt + 1, c_data = ? " +
		"WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?"
	sqlInsHistory = "INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data) " +
		"VALUES (?, ?, ?, ?, ?, CURRENT_TIMESTAMP, ?, ?)"
)

var (
	qWarehouseAddr = valueSQL("SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip FROM warehouse WHERE w_id = ?")
	qDistrictAddr  = valueSQL("SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip FROM district WHERE d_w_id = ? AND d_id = ?")
	qCustByName    = valueSQL("SELECT c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first")
	qCustPay       = valueSQL("SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_since, " +
		"c_credit, c_credit_lim, c_discount, c_balance FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ? FOR UPDATE")
	qCustData = valueSQL("SELECT c_data FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ? FOR UPDATE")
)

// payment is clause 2.5.2.
func (w *worker) payment(ctx context.Context) error {
	w.buf = appendDec(w.buf[:0], w.amount, 2)
	amount := string(w.buf)
	if _, err := w.updWarehouseYTD.Exec(ctx, amount, w.w); err != nil {
		return err
	}
	rows, err := w.rows(ctx, qWarehouseAddr, w.w)
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		return fmt.Errorf("warehouse %d not found", w.w)
	}
	wName := rows[0][0]
	if _, err := w.updDistrictYTD.Exec(ctx, amount, w.w, w.d); err != nil {
		return err
	}
	rows, err = w.rows(ctx, qDistrictAddr, w.w, w.d)
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		return fmt.Errorf("district %d/%d not found", w.w, w.d)
	}
	dName := rows[0][0]
	cID, err := w.customerID(ctx, qCustByName, w.cW, w.cD)
	if err != nil {
		return err
	}
	rows, err = w.rows(ctx, qCustPay, w.cW, w.cD, cID)
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		return fmt.Errorf("customer %d/%d/%d not found", w.cW, w.cD, cID)
	}
	if rows[0][10] == "BC" {
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
		if _, err := w.updCustPayBC.Exec(ctx, amount, amount, b, w.cW, w.cD, cID); err != nil {
			return err
		}
	} else {
		if _, err := w.updCustPay.Exec(ctx, amount, amount, w.cW, w.cD, cID); err != nil {
			return err
		}
	}
	hData := wName + "    " + dName
	_, err = w.insHist.Exec(ctx, cID, w.cD, w.cW, w.d, w.w, amount, hData)
	return err
}

// customerID resolves the customer of Payment and OrderStatus: by id, or by last name as the row
// at position ceil(n/2) of those with that name sorted by first name (clause 2.5.2.2).
func (w *worker) customerID(ctx context.Context, byName valueQuery, cw, cd int) (int, error) {
	if !w.byName {
		return w.cID, nil
	}
	rows, err := w.rows(ctx, byName, cw, cd, w.cLast)
	if err != nil {
		return 0, err
	}
	if len(rows) == 0 {
		return 0, fmt.Errorf("no customer named %s in district %d/%d", w.cLast, cw, cd)
	}
	return strconv.Atoi(rows[(len(rows)-1)/2][0])
}
