package payments

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/workload"
)

// Check verifies the invariants of a payments system against the figures Prepare recorded:
//   - money is conserved: the balances add up to the accounts times the initial balance;
//   - no balance is negative: a debit only happens when the balance covers it;
//   - every transfer moved money between two different accounts, a positive amount;
//   - every transfer has both movements: each account's balance is the initial balance minus
//     its outgoing transfers plus its incoming ones. Once a run with --deletes has removed
//     transfers this cannot be recomputed, so it is checked only while no transfer was deleted
//     (payments_meta remembers); the global total above is still exact then;
//   - the tables a transfer only reads keep their sizes.
func (p *payments) Check(ctx context.Context, env *workload.Env) error {
	c, err := env.Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	m, err := readMeta(ctx, c)
	if err != nil {
		return p.missing(err)
	}
	f, err := readFigures(m)
	if err != nil {
		return err
	}
	k := &checker{ctx: ctx, c: c, p: p, f: f}
	if err := k.sizes(); err != nil {
		return err
	}
	if err := k.balances(); err != nil {
		return err
	}
	if err := k.transfers(); err != nil {
		return err
	}
	if m["transfers_deleted"] == "1" {
		if env.Log != nil {
			fmt.Fprintln(env.Log, "payments: a --deletes run removed transfers, so balances are checked in total, not account by account")
		}
	} else if err := k.perAccount(); err != nil {
		return err
	}
	if len(k.problems) > 0 {
		return fmt.Errorf("payments check failed: %s", strings.Join(k.problems, "; "))
	}
	return nil
}

// figures are what Prepare recorded in payments_meta: the accounts, the banks, each account's
// initial balance and their total, in cents.
type figures struct{ accounts, banks, initial, total int64 }

func readFigures(m map[string]string) (figures, error) {
	var f figures
	var err error
	if f.accounts, err = metaInt(m, "accounts"); err != nil {
		return f, err
	}
	if f.banks, err = metaInt(m, "banks"); err != nil {
		return f, err
	}
	if f.initial, err = cents(m["initial_balance"]); err != nil {
		return f, fmt.Errorf("payments_meta initial_balance: %w", err)
	}
	if f.total, err = cents(m["total"]); err != nil {
		return f, fmt.Errorf("payments_meta total: %w", err)
	}
	if f.total != f.accounts*f.initial {
		return f, fmt.Errorf("payments_meta is inconsistent: total %s is not %d accounts × %s", money(f.total), f.accounts, money(f.initial))
	}
	return f, nil
}

// checker runs Check's queries and gathers the invariants found broken; an error is a check
// that could not run.
type checker struct {
	ctx      context.Context
	c        sqldb.Conn
	p        *payments
	f        figures
	problems []string
}

func (k *checker) problem(format string, args ...any) {
	k.problems = append(k.problems, fmt.Sprintf(format, args...))
}

// one is a query's single value.
func (k *checker) one(sql string) (string, error) {
	rows, err := k.c.Query(k.ctx, sql)
	if err != nil {
		return "", k.p.missing(err)
	}
	return rows[0][0], nil
}

// sizes: the tables a transfer only reads keep their sizes.
func (k *checker) sizes() error {
	n := k.f.accounts
	for _, t := range []struct {
		table string
		want  int64
	}{{"banks", k.f.banks}, {"users", n}, {"permissions", 2 * n}, {"auth_tokens", n}, {"accounts", n}, {"cards", n}} {
		got, err := k.one("SELECT COUNT(*) FROM " + t.table)
		if err != nil {
			return err
		}
		if got != strconv.FormatInt(t.want, 10) {
			k.problem("%s has %s rows, prepared with %d", t.table, got, t.want)
		}
	}
	return nil
}

// balances: money is conserved and no balance is negative.
func (k *checker) balances() error {
	rows, err := k.c.Query(k.ctx, "SELECT COALESCE(SUM(balance), 0), COUNT(CASE WHEN balance < 0 THEN 1 END) FROM accounts")
	if err != nil {
		return k.p.missing(err)
	}
	sum, err := cents(rows[0][0])
	if err != nil {
		return fmt.Errorf("sum of balances: %w", err)
	}
	if f := k.f; sum != f.total {
		k.problem("money is not conserved: the balances add up to %s, expected %s (%d accounts × %s)",
			money(sum), money(f.total), f.accounts, money(f.initial))
	}
	if rows[0][1] != "0" {
		k.problem("%s accounts have a negative balance: a debit went through without funds", rows[0][1])
	}
	return nil
}

// transfers: every transfer moved a positive amount between two different accounts.
func (k *checker) transfers() error {
	bad, err := k.one("SELECT COUNT(*) FROM transfers WHERE amount <= 0 OR from_account = to_account")
	if err != nil {
		return err
	}
	if bad != "0" {
		k.problem("%s transfers have a non-positive amount or the same sender and receiver", bad)
	}
	return nil
}

// perAccount: each account's balance is the initial balance minus its outgoing transfers plus
// its incoming ones.
func (k *checker) perAccount() error {
	initial := money(k.f.initial)
	from := fmt.Sprintf("FROM accounts a LEFT JOIN (SELECT id, SUM(d) AS net FROM ("+
		"SELECT from_account AS id, -amount AS d FROM transfers UNION ALL SELECT to_account, amount FROM transfers) x GROUP BY id"+
		") m ON m.id = a.id WHERE a.balance <> %s + COALESCE(m.net, 0)", initial)
	count, err := k.one("SELECT COUNT(*) " + from)
	if err != nil || count == "0" {
		return err
	}
	ex, err := k.c.Query(k.ctx, fmt.Sprintf("SELECT a.id, a.balance, %s + COALESCE(m.net, 0) %s ORDER BY a.id LIMIT 3", initial, from))
	if err != nil {
		return err
	}
	var shown []string
	for _, r := range ex {
		shown = append(shown, fmt.Sprintf("account %s has %s, its transfers say %s", r[0], r[1], r[2]))
	}
	k.problem("%s accounts do not match their transfers (initial balance − sent + received): %s", count, strings.Join(shown, "; "))
	return nil
}
