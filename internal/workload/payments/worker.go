package payments

import (
	"context"
	"fmt"

	"github.com/fairbench/fairbench/internal/dialect"
	"github.com/fairbench/fairbench/internal/randgen"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/workload"
)

// appendToken writes user's auth token: 32 hex digits derived from the id, so a client can
// present a user's token without looking it up, as a logged-in app would hold it.
func appendToken(b []byte, user int64) []byte {
	const hexdigits = "0123456789abcdef"
	x := uint64(user)
	for half := 0; half < 2; half++ {
		x += 0x9e3779b97f4a7c15
		z := x
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		z ^= z >> 31
		for i := 60; i >= 0; i -= 4 {
			b = append(b, hexdigits[z>>uint(i)&0xf])
		}
	}
	return b
}

// The statements of one transfer. Amounts travel as decimal text and are cast on the server, so
// DECIMAL arithmetic stays exact on every engine (MySQL would compute a DECIMAL minus a string
// parameter in floating point).
const (
	// Round trip 1: the sender's token must be valid and the receiver must exist.
	sqlAuth = "SELECT u.id, u.name, u.status FROM auth_tokens t JOIN users u ON u.id = t.user_id " +
		"WHERE t.token = ? AND t.expires_at > CURRENT_TIMESTAMP " +
		"UNION ALL SELECT id, name, status FROM users WHERE id = ?"
	// Round trip 2: both parties' cards and accounts, if the sender may transfer at all.
	sqlCards = "SELECT a.id, a.bank_id, a.balance, c.number, c.status FROM accounts a JOIN cards c ON c.account_id = a.id " +
		"WHERE a.user_id IN (?, ?) AND EXISTS (SELECT 1 FROM permissions p WHERE p.user_id = ? AND p.permission = 'transfer')"
	sqlDebit  = "UPDATE accounts SET balance = balance - CAST(? AS DECIMAL(15,2)) WHERE id = ? AND balance >= CAST(? AS DECIMAL(15,2))"
	sqlCredit = "UPDATE accounts SET balance = balance + CAST(? AS DECIMAL(15,2)) WHERE id = ?"
	// The id is the client's (acks.go), so the transfer can be found again after a run.
	sqlTransfer = "INSERT INTO transfers (id, from_account, to_account, amount, created_at) VALUES (?, ?, ?, CAST(? AS DECIMAL(15,2)), CURRENT_TIMESTAMP)"
)

// sqlDelete is the deletion of a user's oldest transfers in each SQL family: PostgreSQL has no
// DELETE ... LIMIT, and MySQL takes no LIMIT in an IN subquery; both forms remove the same rows.
var sqlDelete = map[dialect.Family]string{
	dialect.MySQLFamily:    "DELETE FROM transfers WHERE from_account = ? ORDER BY id LIMIT %d",
	dialect.PostgresFamily: "DELETE FROM transfers WHERE id IN (SELECT id FROM transfers WHERE from_account = ? ORDER BY id LIMIT %d)",
}

type worker struct {
	p    *payments
	conn sqldb.Conn
	rng  *randgen.Rand

	auth, cards, debit, credit, insert, del sqldb.Stmt

	token, amount []byte // reused parameter buffers

	// nextID is the id of the worker's next transfer; acks the ids it saw committed.
	nextID int64
	acks   workload.Acks

	// --transfer routine (routine_worker.go)
	r *routineWorker
}

// NewWorker prepares the statements and makes sure the tables hold the --accounts this run
// draws from: a transfer to an account that does not exist would stop the run half-way.
func (p *payments) NewWorker(ctx context.Context, conn sqldb.Conn, rng *randgen.Rand, thread, threads int) (workload.Worker, error) {
	if thread == 0 {
		m, err := readMeta(ctx, conn)
		if err != nil {
			return nil, p.missing(err)
		}
		n, err := metaInt(m, "accounts")
		if err != nil {
			return nil, err
		}
		if n != int64(p.accounts) {
			return nil, fmt.Errorf("the payments tables hold %d accounts but --accounts is %d: pass --accounts %d", n, p.accounts, n)
		}
		if p.deleting() {
			// From here on transfers may be missing, so Check can no longer recompute each balance.
			if err := conn.Exec(ctx, "UPDATE payments_meta SET value = '1' WHERE name = 'transfers_deleted'"); err != nil {
				return nil, err
			}
		}
	}
	w := &worker{p: p, conn: conn, rng: rng, token: make([]byte, 0, 32), amount: make([]byte, 0, 16)}
	if p.routine {
		var err error
		w.r, err = newRoutineWorker(ctx, w)
		return w, err
	}
	stmts := []struct {
		sql string
		dst *sqldb.Stmt
	}{
		{sqlAuth, &w.auth}, {sqlCards, &w.cards}, {sqlDebit, &w.debit}, {sqlCredit, &w.credit}, {sqlTransfer, &w.insert},
	}
	if p.deletes {
		del := sqlDelete[dialect.Of(conn).Family()]
		stmts = append(stmts, struct {
			sql string
			dst *sqldb.Stmt
		}{fmt.Sprintf(del, deleteBatch), &w.del})
	}
	for _, s := range stmts {
		st, err := conn.Prepare(ctx, s.sql)
		if err != nil {
			return nil, p.missing(err)
		}
		*s.dst = st
	}
	var err error
	if w.nextID, err = p.ids.block(ctx, conn); err != nil {
		return nil, p.missing(err)
	}
	w.acks.Committed = make([]int64, 0, 1024)
	return w, nil
}

// account draws an account (= user) id with the --rand-type distribution, so skewed runs have
// hot accounts as real payment systems do.
func (w *worker) account() int64 { return int64(w.rng.Default(1, uint32(w.p.accounts))) }

func (w *worker) Transaction(ctx context.Context, q *workload.Txn) error {
	if w.r != nil {
		return w.r.transaction(ctx, q)
	}
	if w.p.deletes && w.rng.Uniform(1, 100) <= deletePct {
		q.Kind = kindDelete
		_, err := w.del.Exec(ctx, w.account())
		return err
	}
	q.Kind = kindTransfer
	from, to := w.draw()

	n, err := w.auth.Query(ctx, w.token, to)
	if err != nil {
		return err
	}
	if n != 2 {
		return fmt.Errorf("authenticating user %d and finding user %d gave %d rows, want 2: the users or auth_tokens tables were changed", from, to, n)
	}
	if n, err = w.cards.Query(ctx, from, to, from); err != nil {
		return err
	}
	if n != 2 {
		return fmt.Errorf("cards and accounts of users %d and %d with the sender's transfer permission: %d rows, want 2", from, to, n)
	}

	if err := w.conn.Exec(ctx, "BEGIN"); err != nil {
		return err
	}
	// Both rows are locked in id order, so two opposite transfers cannot deadlock.
	if from < to {
		if ok, err := w.debitFrom(ctx, from); !ok || err != nil {
			return err
		}
		if err := w.creditTo(ctx, to); err != nil {
			return err
		}
	} else {
		if err := w.creditTo(ctx, to); err != nil {
			return err
		}
		if ok, err := w.debitFrom(ctx, from); !ok || err != nil {
			return err
		}
	}
	// Recorded in the same transaction: a transfer row exists exactly when both movements
	// committed, which is what Check's per-account invariant relies on.
	id := w.nextID
	w.nextID++
	if _, err := w.insert.Exec(ctx, id, from, to, w.amount); err != nil {
		return err
	}
	return w.commit(ctx, id)
}

// draw picks the sender, the receiver and the amount, and the sender's token.
func (w *worker) draw() (from, to int64) {
	from = w.account()
	// The receiver is any other account: draw from one fewer and skip the sender.
	to = int64(w.rng.Default(1, uint32(w.p.accounts-1)))
	if to >= from {
		to++
	}
	w.amount = appendMoney(w.amount[:0], int64(w.rng.Uniform(minAmount, maxAmount)))
	w.token = appendToken(w.token[:0], from)
	return from, to
}

// debitFrom takes the amount if the balance covers it; a decline is ErrRolledBack (ok false).
func (w *worker) debitFrom(ctx context.Context, from int64) (ok bool, err error) {
	n, err := w.debit.Exec(ctx, w.amount, from, w.amount)
	if err != nil {
		return false, err
	}
	if n == 0 {
		return false, workload.ErrRolledBack
	}
	return true, nil
}

func (w *worker) creditTo(ctx context.Context, to int64) error {
	n, err := w.credit.Exec(ctx, w.amount, to)
	if err != nil {
		return err
	}
	if n != 1 {
		return fmt.Errorf("crediting account %d changed %d rows, want 1", to, n)
	}
	return nil
}
