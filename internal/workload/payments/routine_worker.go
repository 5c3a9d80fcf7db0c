package payments

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/fairbench/fairbench/internal/dialect"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/workload"
)

// The published study's transfer: four round trips over six tables (users, auth_tokens,
// permissions, accounts, cards, transfers). The approving user is the receiving account's holder,
// whose token the client holds as it holds the sender's.
const (
	// Round trip 1: the requesting user, by token, active and allowed to transfer.
	sqlAuthorize = "SELECT u.id FROM auth_tokens t JOIN users u ON u.id = t.user_id " +
		"JOIN permissions p ON p.user_id = u.id AND p.permission = 'transfer' " +
		"WHERE t.token = ? AND t.expires_at > CURRENT_TIMESTAMP AND u.status = 'active'"
	// Round trip 2: the card and account to debit; the client checks balance, card status and expiry.
	sqlDebitAccount = "SELECT a.balance, c.status, c.expires FROM accounts a JOIN cards c ON c.account_id = a.id WHERE a.user_id = ?"
	// Round trip 3: the approving user, by token.
	sqlApprove = "SELECT u.id FROM auth_tokens t JOIN users u ON u.id = t.user_id " +
		"WHERE t.token = ? AND t.expires_at > CURRENT_TIMESTAMP AND u.status = 'active'"
	// Every --delete-every-th operation: one recorded transfer, by the id the routine returned.
	sqlDeleteTransfer = "DELETE FROM transfers WHERE id = ?"
)

// maxRecorded bounds the transfer ids a client keeps for deleting: past it the oldest are
// forgotten (they stay in the table), so a long run's memory does not grow with its length.
const maxRecorded = 1 << 16

type routineWorker struct {
	w                       *worker
	authorize, approve, del sqldb.Stmt
	debitAccount, call      workload.ValueQuery
	lit, approverToken      []byte
	ops                     int
	deleting                bool
	from, to, amountCents   int64
	recorded                []int64
	year                    int
}

func newRoutineWorker(ctx context.Context, w *worker) (*routineWorker, error) {
	switch st, err := routineState(ctx, w.conn); {
	case err != nil:
		return nil, err
	case st != workload.Ours:
		return nil, &workload.NotPreparedError{Workload: name, Detail: "the routine " + routineName + " of --transfer routine is not there (tables prepared by an older fairbench)"}
	}
	r := &routineWorker{w: w, debitAccount: workload.NewValueQuery(sqlDebitAccount), call: workload.NewValueQuery(routineCalls[dialect.Of(w.conn).Family()]).CountAs(sqldb.Write),
		approverToken: make([]byte, 0, 32), year: time.Now().Year()}
	for _, s := range []struct {
		sql string
		dst *sqldb.Stmt
	}{{sqlAuthorize, &r.authorize}, {sqlApprove, &r.approve}, {sqlDeleteTransfer, &r.del}} {
		st, err := w.conn.Prepare(ctx, s.sql)
		if err != nil {
			return nil, w.p.missing(err)
		}
		*s.dst = st
	}
	return r, nil
}

// transaction is one operation: a transfer, or every --delete-every-th one the deletion of the
// oldest transfer this client recorded. A retry (q.Retry, after a deadlock) replays the same
// operation.
func (r *routineWorker) transaction(ctx context.Context, q *workload.Txn) error {
	if !q.Retry {
		r.ops++
		every := r.w.p.deleteEvery
		r.deleting = every > 0 && r.ops%every == 0 && len(r.recorded) > 0
		if !r.deleting {
			r.from, r.to = r.w.draw()
			r.amountCents, _ = cents(string(r.w.amount))
		}
	}
	if r.deleting {
		q.Kind = kindDelete
		n, err := r.del.Exec(ctx, r.recorded[0])
		if err != nil {
			return err
		}
		if n != 1 {
			return fmt.Errorf("deleting transfer %d removed %d rows, want 1", r.recorded[0], n)
		}
		r.recorded = r.recorded[1:]
		return nil
	}
	q.Kind = kindTransfer
	return r.transfer(ctx)
}

func (r *routineWorker) transfer(ctx context.Context) error {
	w := r.w
	if n, err := r.authorize.Query(ctx, w.token); err != nil || n != 1 {
		return r.refused(err, int(n), "user %d is not an active user allowed to transfer", r.from)
	}
	rows, err := r.debitAccount.Rows(ctx, w.conn, &r.lit, r.from)
	if err != nil || len(rows) != 1 {
		return r.refused(err, len(rows), "account and card of user %d", r.from)
	}
	balance, err := cents(rows[0][0])
	if err != nil {
		return err
	}
	if err := r.usable(rows[0][1], rows[0][2]); err != nil {
		return err
	}
	if balance < r.amountCents {
		return workload.ErrRolledBack // declined by the client's balance check
	}
	r.approverToken = appendToken(r.approverToken[:0], r.to)
	if n, err := r.approve.Query(ctx, r.approverToken); err != nil || n != 1 {
		return r.refused(err, int(n), "approving user %d is not an active user", r.to)
	}
	rows, err = r.call.Rows(ctx, w.conn, &r.lit, r.from, r.to, string(w.amount))
	if err != nil {
		return err
	}
	if len(rows) != 1 {
		return fmt.Errorf("%s returned %d rows, want 1", routineName, len(rows))
	}
	id, err := strconv.ParseInt(rows[0][0], 10, 64)
	if err != nil {
		return fmt.Errorf("%s returned %q, want a transfer id", routineName, rows[0][0])
	}
	if id == 0 {
		return workload.ErrRolledBack // declined by the routine: the balance fell since it was read
	}
	if len(r.recorded) == maxRecorded {
		r.recorded = append(r.recorded[:0], r.recorded[maxRecorded/2:]...)
	}
	r.recorded = append(r.recorded, id)
	return nil
}

// refused turns a failed or empty read into the error that stops the run: the data a transfer
// relies on was changed under it.
func (r *routineWorker) refused(err error, rows int, format string, args ...any) error {
	if err != nil {
		return err
	}
	return fmt.Errorf(format+": %d rows, want 1: the payments tables were changed", append(args, rows)...)
}

// usable is the client's card check: active and not expired (MM/YY).
func (r *routineWorker) usable(status, expires string) error {
	if status != "active" {
		return fmt.Errorf("card of user %d is %s: the payments tables were changed", r.from, status)
	}
	var mm, yy int
	if _, err := fmt.Sscanf(expires, "%d/%d", &mm, &yy); err != nil || 2000+yy < r.year {
		return fmt.Errorf("card of user %d expires %q: the payments tables were changed", r.from, expires)
	}
	return nil
}
