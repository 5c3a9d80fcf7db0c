// Package payments is a money-transfer service's hot path: a transfer authenticates the sender by
// token, reads both parties' cards and accounts with a permission check, and moves the amount
// between two DECIMAL balances in one transaction that also records the transfer. The data is
// built so that money is conserved, and Check proves it was.
package payments

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/workload"
)

const name = "payments"

// Tables, parents first (ClaimTables and DropOwned drop in reverse).
var tableNames = []string{"banks", "users", "permissions", "auth_tokens", "accounts", "cards", "transfers", "payments_meta"}

// Every account starts with the same balance, so the expected balance of any account follows from
// the transfers alone and no per-account starting figure has to be stored.
const (
	initialCents = 100000 // 1000.00
	minAmount    = 100    // 1.00
	maxAmount    = 50000  // 500.00: an account can be drained in two transfers, so declines do happen
	deleteBatch  = 10     // transfers removed by one delete transaction
	deletePct    = 10
)

// Transaction kinds, indexes into TransactionKinds.
const (
	kindTransfer = iota
	kindDelete
)

func init() {
	workload.Register(workload.Spec{
		Name: name,
		Description: "money transfers: authenticate by token, read cards and accounts with a permission check, then debit " +
			"(declined without funds), credit and record the transfer in BEGIN/COMMIT; money is conserved and checked",
		Options: []workload.Option{
			{Name: "accounts", Default: "1000000", Help: "users, each with one account, card and auth token", Max: workload.MaxInt},
			{Name: "banks", Default: "50", Help: "banks the accounts are spread over", Max: workload.MaxInt},
			{Name: "deletes", Default: "off", Help: fmt.Sprintf("on: %d%% of transactions delete the %d oldest transfers of one account (the per-account check is then no longer possible)", deletePct, deleteBatch)},
			{Name: "transfer", Default: "statements", Help: "statements: debit, credit and record as client statements in BEGIN/COMMIT after two reads (7 round trips); " +
				"routine: the published study's shape, 3 reads and one call of the server-side routine transfer_funds (4 round trips)"},
			{Name: "delete-every", Default: "0", Help: "with --transfer routine: every Nth operation of a client deletes the oldest transfer it recorded (the study: 20); 0: none"},
		},
		Dataset:     "payments",
		DataOptions: []string{"accounts", "banks"},
		New: func(o workload.Options) (workload.Workload, error) {
			p := &payments{}
			var err error
			if p.accounts, err = o.Int("accounts", 2); err != nil {
				return nil, err
			}
			if p.banks, err = o.Int("banks", 1); err != nil {
				return nil, err
			}
			if p.deletes, err = o.Bool("deletes"); err != nil {
				return nil, err
			}
			return p, p.transferOptions(o)
		},
	})
}

type payments struct {
	accounts, banks int
	deletes         bool
	// routine: a transfer is one call of transfer_funds (routine.go); deleteEvery: every Nth
	// operation deletes a transfer the routine recorded.
	routine     bool
	deleteEvery int
	// ids hands each worker its block of transfer ids (acks.go).
	ids idSpace
}

func (p *payments) transferOptions(o workload.Options) error {
	switch o["transfer"] {
	case "statements":
	case "routine":
		p.routine = true
	default:
		return fmt.Errorf("--transfer must be routine or statements, got %q", o["transfer"])
	}
	var err error
	if p.deleteEvery, err = o.Int("delete-every", 0); err != nil {
		return err
	}
	switch {
	case p.deleteEvery > 0 && !p.routine:
		return fmt.Errorf("--delete-every needs --transfer routine, whose call returns the id of the transfer to delete")
	case p.deleteEvery > 0 && p.deletes:
		return fmt.Errorf("--delete-every and --deletes on are two delete patterns: choose one")
	}
	return nil
}

// deleting says whether a run removes transfers, so that Check can no longer recompute each balance.
func (p *payments) deleting() bool { return p.deletes || p.deleteEvery > 0 }

// Traits: transfers and, where a run removes them, deletes, counted apart.
func (p *payments) Traits() workload.Traits {
	kinds := []string{"transfer"}
	if p.deleting() {
		kinds = append(kinds, "delete")
	}
	return workload.Traits{TransactionKinds: kinds}
}

func (p *payments) missing(err error) error {
	if sqldb.IsUndefinedTable(err) {
		return &workload.NotPreparedError{Workload: name, Detail: "payments tables not found"}
	}
	return err
}

// meta reads what Prepare recorded about the data.
func readMeta(ctx context.Context, c sqldb.Conn) (map[string]string, error) {
	rows, err := c.Query(ctx, "SELECT name, value FROM payments_meta")
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	for _, r := range rows {
		m[r[0]] = r[1]
	}
	return m, nil
}

// metaInt reads one whole-number figure from payments_meta.
func metaInt(m map[string]string, key string) (int64, error) {
	v, ok := m[key]
	if !ok {
		return 0, fmt.Errorf("payments_meta has no %q row: prepare again", key)
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("payments_meta %q = %q is not a whole number", key, v)
	}
	return n, nil
}

// Cleanup drops the payments tables and routine fairbench created and leaves any others alone.
func (p *payments) Cleanup(ctx context.Context, env *workload.Env) error {
	c, err := env.Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	return errors.Join(workload.DropOwnedRoutines(ctx, c, []string{routineName}), workload.DropOwned(ctx, c, tableNames))
}

// cents parses a DECIMAL(15,2) as the server prints it ("-12.5", "1000.00", "7") into cents.
func cents(s string) (int64, error) {
	if s == "" || s == "-" {
		return 0, fmt.Errorf("%q is not a decimal number", s)
	}
	neg := len(s) > 0 && s[0] == '-'
	if neg {
		s = s[1:]
	}
	whole, frac := s, ""
	for i := 0; i < len(s); i++ {
		if s[i] == '.' {
			whole, frac = s[:i], s[i+1:]
			break
		}
	}
	if len(frac) > 2 {
		for _, ch := range frac[2:] {
			if ch != '0' {
				return 0, fmt.Errorf("%q has fractions of a cent", s)
			}
		}
		frac = frac[:2]
	}
	for len(frac) < 2 {
		frac += "0"
	}
	if whole == "" {
		whole = "0"
	}
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a decimal number", s)
	}
	f, err := strconv.ParseInt(frac, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a decimal number", s)
	}
	v := w*100 + f
	if neg {
		v = -v
	}
	return v, nil
}

// appendMoney writes cents as a decimal with two places, the text a DECIMAL(15,2) parameter takes.
func appendMoney(b []byte, c int64) []byte {
	if c < 0 {
		b = append(b, '-')
		c = -c
	}
	b = strconv.AppendInt(b, c/100, 10)
	b = append(b, '.', byte('0'+c%100/10), byte('0'+c%10))
	return b
}

func money(c int64) string { return string(appendMoney(nil, c)) }
