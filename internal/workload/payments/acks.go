package payments

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/workload"
)

// Acknowledged transfers are found again by id after a run. The client chooses each transfer's
// id, so it knows it without a round trip (RETURNING or LAST_INSERT_ID would differ by engine):
// each worker takes a block of 2^32 ids above every id in the table when the run began and
// above 2^62, where the engines' own sequences (which --transfer routine uses) never reach.
const (
	idFloor   = int64(1) << 62
	idBlock   = int64(1) << 32
	ackChunks = 1 << 14 // ids per lookup query after a run
)

// idSpace hands out the workers' blocks: each starts above every id in the table when the worker
// was made (so a workload reused on another server, or a worker made after a reconnect, never
// collides with a row) and above every block handed out before.
type idSpace struct {
	mu   sync.Mutex
	next int64
}

// block returns a fresh worker's first id.
func (s *idSpace) block(ctx context.Context, c sqldb.Conn) (int64, error) {
	rows, err := c.Query(ctx, "SELECT COALESCE(MAX(id), 0) FROM transfers")
	if err != nil {
		return 0, err
	}
	top, err := strconv.ParseInt(rows[0][0], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("largest transfer id %q: %w", rows[0][0], err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	first := max(idFloor, (top/idBlock+1)*idBlock, s.next)
	s.next = first + idBlock
	return first, nil
}

// Acks are the worker's acknowledged and in-doubt transfer ids.
func (w *worker) Acks() *workload.Acks { return &w.acks }

// commit sends COMMIT and records the transfer's id by the answer: committed, or in doubt when
// the connection died with the COMMIT in flight. A COMMIT the server refused (a Galera
// certification failure, a serialization failure) did not commit: it is neither.
func (w *worker) commit(ctx context.Context, id int64) error {
	err := w.conn.Exec(ctx, "COMMIT")
	switch {
	case err == nil:
		w.acks.Committed = append(w.acks.Committed, id)
	case sqldb.IsConnectionLost(err):
		w.acks.InDoubt = append(w.acks.InDoubt, id)
		return workload.CommitInDoubt(err)
	}
	return err
}

// CheckAcks looks up every acknowledged and in-doubt transfer id on the server env connects to.
// On Galera the session first waits for the node to apply what the cluster committed
// (wsrep_sync_wait), so a node that is behind does not make a transfer look lost.
func (p *payments) CheckAcks(ctx context.Context, env *workload.Env, acks []*workload.Acks) (workload.AckVerdict, error) {
	switch {
	case p.routine:
		var v workload.AckVerdict
		v.Acknowledged, v.InDoubt = workload.Totals(acks)
		v.NotChecked = "--transfer routine: the server's routine chooses the ids, which the client does not record"
		return v, nil
	case p.deleting():
		var v workload.AckVerdict
		v.Acknowledged, v.InDoubt = workload.Totals(acks)
		v.NotChecked = "--deletes removes transfers during the run, so a missing one proves nothing"
		return v, nil
	}
	v, err := workload.VerifyAcks(ctx, env, acks, presentIDs)
	return v, p.missing(err)
}

// presentIDs returns which of ids (sorted) the transfers table holds, asking for ranges of them.
func presentIDs(ctx context.Context, c sqldb.Conn, ids []int64) (map[int64]bool, error) {
	found := make(map[int64]bool, len(ids))
	for from := 0; from < len(ids); from += ackChunks {
		part := ids[from:min(from+ackChunks, len(ids))]
		rows, err := c.Query(ctx, "SELECT id FROM transfers WHERE id >= ? AND id <= ?", part[0], part[len(part)-1])
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			id, err := strconv.ParseInt(r[0], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("transfer id %q: %w", r[0], err)
			}
			found[id] = true
		}
	}
	return found, nil
}
