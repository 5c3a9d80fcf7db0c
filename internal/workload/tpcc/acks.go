package tpcc

import (
	"context"
	"fmt"
	"strconv"

	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/workload"
)

// Acknowledged NewOrders are found again after a run by their key, (warehouse, district,
// order number), packed into one int64: the order number in the low 32 bits, the district in
// the 4 above, the warehouse above those.
func orderKey(w, d, oID int) int64 { return int64(w)<<36 | int64(d)<<32 | int64(oID) }

func splitOrderKey(k int64) (w, d, oID int) {
	return int(k >> 36), int(k >> 32 & 0xf), int(k & 0xffffffff)
}

// Acks are the NewOrders the worker saw committed, or in doubt.
func (w *worker) Acks() *workload.Acks { return &w.acks }

// commit sends COMMIT and, for a NewOrder, records its key by the answer: committed, or in doubt
// when the connection died with the COMMIT in flight. Other transactions are not recorded:
// NewOrder is the one whose effect (a new order) can be looked for afterwards.
func (w *worker) commit(ctx context.Context) error {
	err := w.conn.Exec(ctx, "COMMIT")
	switch {
	case w.order == 0:
	case err == nil:
		w.acks.Committed = append(w.acks.Committed, w.order)
	case sqldb.IsConnectionLost(err):
		w.acks.InDoubt = append(w.acks.InDoubt, w.order)
	}
	if sqldb.IsConnectionLost(err) {
		return workload.CommitInDoubt(err)
	}
	return err
}

// CheckAcks looks up every acknowledged and in-doubt NewOrder in orders (which Delivery updates
// but never deletes), one query per district over the range of its order numbers.
func (t *tpcc) CheckAcks(ctx context.Context, env *workload.Env, acks []*workload.Acks) (workload.AckVerdict, error) {
	return workload.VerifyAcks(ctx, env, acks, presentOrders)
}

// presentOrders returns which of keys (sorted) the orders table holds.
func presentOrders(ctx context.Context, c sqldb.Conn, keys []int64) (map[int64]bool, error) {
	found := make(map[int64]bool, len(keys))
	for i := 0; i < len(keys); {
		w, d, lo := splitOrderKey(keys[i])
		j := i
		for j < len(keys) && keys[j]>>32 == keys[i]>>32 {
			j++
		}
		_, _, hi := splitOrderKey(keys[j-1])
		rows, err := c.Query(ctx, "SELECT o_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_id >= ? AND o_id <= ?", w, d, lo, hi)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			o, err := strconv.Atoi(r[0])
			if err != nil {
				return nil, fmt.Errorf("o_id %q: %w", r[0], err)
			}
			found[orderKey(w, d, o)] = true
		}
		i = j
	}
	return found, nil
}
