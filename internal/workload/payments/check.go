package payments

import (
	"context"
	"fmt"
	"strconv"
	"strings"

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
	n, err := metaInt(m, "accounts")
	if err != nil {
		return err
	}
	banks, err := metaInt(m, "banks")
	if err != nil {
		return err
	}
	initial, err := cents(m["initial_balance"])
	if err != nil {
		return fmt.Errorf("payments_meta initial_balance: %w", err)
	}
	total, err := cents(m["total"])
	if err != nil {
		return fmt.Errorf("payments_meta total: %w", err)
	}
	if total != n*initial {
		return fmt.Errorf("payments_meta is inconsistent: total %s is not %d accounts × %s", money(total), n, money(initial))
	}
	one := func(sql string) (string, error) {
		rows, err := c.Query(ctx, sql)
		if err != nil {
			return "", p.missing(err)
		}
		return rows[0][0], nil
	}
	var problems []string

	for _, t := range []struct {
		table string
		want  int64
	}{{"banks", banks}, {"users", n}, {"permissions", 2 * n}, {"auth_tokens", n}, {"accounts", n}, {"cards", n}} {
		got, err := one("SELECT COUNT(*) FROM " + t.table)
		if err != nil {
			return err
		}
		if got != strconv.FormatInt(t.want, 10) {
			problems = append(problems, fmt.Sprintf("%s has %s rows, prepared with %d", t.table, got, t.want))
		}
	}

	rows, err := c.Query(ctx, "SELECT COALESCE(SUM(balance), 0), COUNT(CASE WHEN balance < 0 THEN 1 END) FROM accounts")
	if err != nil {
		return p.missing(err)
	}
	sum, err := cents(rows[0][0])
	if err != nil {
		return fmt.Errorf("sum of balances: %w", err)
	}
	if sum != total {
		problems = append(problems, fmt.Sprintf("money is not conserved: the balances add up to %s, expected %s (%d accounts × %s)",
			money(sum), money(total), n, money(initial)))
	}
	if rows[0][1] != "0" {
		problems = append(problems, fmt.Sprintf("%s accounts have a negative balance: a debit went through without funds", rows[0][1]))
	}

	bad, err := one("SELECT COUNT(*) FROM transfers WHERE amount <= 0 OR from_account = to_account")
	if err != nil {
		return err
	}
	if bad != "0" {
		problems = append(problems, fmt.Sprintf("%s transfers have a non-positive amount or the same sender and receiver", bad))
	}

	if m["transfers_deleted"] == "1" && env.Log != nil {
		fmt.Fprintln(env.Log, "payments: a --deletes run removed transfers, so balances are checked in total, not account by account")
	}
	if m["transfers_deleted"] != "1" {
		// Each account's net movement from the transfers, against its balance.
		from := fmt.Sprintf("FROM accounts a LEFT JOIN (SELECT id, SUM(d) AS net FROM ("+
			"SELECT from_account AS id, -amount AS d FROM transfers UNION ALL SELECT to_account, amount FROM transfers) x GROUP BY id"+
			") m ON m.id = a.id WHERE a.balance <> %s + COALESCE(m.net, 0)", money(initial))
		count, err := one("SELECT COUNT(*) " + from)
		if err != nil {
			return err
		}
		if count != "0" {
			ex, err := c.Query(ctx, fmt.Sprintf("SELECT a.id, a.balance, %s + COALESCE(m.net, 0) %s ORDER BY a.id LIMIT 3", money(initial), from))
			if err != nil {
				return err
			}
			var shown []string
			for _, r := range ex {
				shown = append(shown, fmt.Sprintf("account %s has %s, its transfers say %s", r[0], r[1], r[2]))
			}
			problems = append(problems, fmt.Sprintf("%s accounts do not match their transfers (initial balance − sent + received): %s",
				count, strings.Join(shown, "; ")))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("payments check failed: %s", strings.Join(problems, "; "))
	}
	return nil
}
