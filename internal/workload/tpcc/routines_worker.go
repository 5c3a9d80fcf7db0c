package tpcc

import (
	"context"
	"fmt"
	"strconv"

	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/workload"
)

// callRoutine runs the drawn transaction as one CALL (routines.go), outside any transaction the
// client opens: the routine commits or rolls back itself. It counts the call as the one
// statement the client sent, a write for the three kinds that write.
func (w *worker) callRoutine(ctx context.Context) error {
	var args []any
	switch w.kind {
	case kindNewOrder:
		args = w.newOrderArgs()
	case kindPayment:
		w.buf = appendDec(w.buf[:0], w.amount, 2)
		args = []any{w.w, w.d, w.cW, w.cD, w.cID, w.byNameFlag(), w.cLast, string(w.buf)}
	case kindOrderStatus:
		args = []any{w.w, w.d, w.cID, w.byNameFlag(), w.cLast}
	case kindDelivery:
		args = []any{w.w, w.carrier}
	default:
		args = []any{w.w, w.d, w.thresh}
	}
	rows, err := w.rows(ctx, w.calls[w.kind], args...)
	if sqldb.IsConnectionLost(err) {
		// The CALL holds the COMMIT: with no answer the transaction may have committed, so it is
		// in doubt, not to be run again. A NewOrder's order number is the routine's to choose,
		// so an in-doubt one cannot be recorded by key (acks.go); an acknowledged one is.
		return workload.CommitInDoubt(err)
	}
	if err != nil {
		return err
	}
	if len(rows) != 1 || len(rows[0]) == 0 {
		return fmt.Errorf("%s returned %d rows, want 1", routineNames[w.kind], len(rows))
	}
	if w.kind == kindNewOrder {
		return w.newOrderOutcome(rows[0])
	}
	return nil
}

// newOrderArgs are NewOrder's inputs with its lines as comma-separated lists, in the order the
// statements style visits them (sorted by item, the unused item last).
func (w *worker) newOrderArgs() []any {
	var items, supply, qty []byte
	for i, in := range w.ol {
		if i > 0 {
			items, supply, qty = append(items, ','), append(supply, ','), append(qty, ',')
		}
		items = strconv.AppendInt(items, int64(in.item), 10)
		supply = strconv.AppendInt(supply, int64(in.supplyW), 10)
		qty = strconv.AppendInt(qty, int64(in.qty), 10)
	}
	return []any{w.w, w.d, w.cID, len(w.ol), w.allLocal, string(items), string(supply), string(qty)}
}

// newOrderOutcome reads the routine's row: order id 0 is the unused item's rollback, which the
// routine has done; otherwise the order's id and total amount, the terminal's output, and the
// order is recorded as acknowledged (acks.go).
func (w *worker) newOrderOutcome(row []string) error {
	oID, err := strconv.Atoi(row[0])
	if err != nil {
		return fmt.Errorf("tpcc_new_order returned order id %q", row[0])
	}
	if oID == 0 {
		return workload.ErrRolledBack
	}
	w.total, _ = strconv.ParseFloat(row[1], 64)
	w.acks.Committed = append(w.acks.Committed, orderKey(w.w, w.d, oID))
	return nil
}

func (w *worker) byNameFlag() int {
	if w.byName {
		return 1
	}
	return 0
}
