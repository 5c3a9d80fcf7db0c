// Package tpcb is pgbench's built-in "tpcb-like" workload as PostgreSQL 15's pgbench runs it: the
// same four pgbench_* tables, filled as 'pgbench -i' fills them, and the same seven statements per
// transaction with the same random draws, so a figure can be set beside pgbench's.
package tpcb

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/fairbench/fairbench/internal/randgen"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/workload"
)

// Rows per scale unit, pgbench's nbranches, ntellers and naccounts.
const (
	branchesPerScale = 1
	tellersPerScale  = 10
	accountsPerScale = 100000
)

// Parents first, as ClaimTables and DropOwned want them; pgbench's tables have no foreign keys.
var tableNames = []string{"pgbench_branches", "pgbench_tellers", "pgbench_accounts", "pgbench_history"}

const name = "tpcb"

func init() {
	workload.Register(workload.Spec{
		Name: name,
		Description: "pgbench's TPC-B-like transaction (PostgreSQL 15 built-in tpcb-like): update one account, read it back, " +
			"update a teller and a branch, insert a history row, in BEGIN/END (7 statements)",
		Options: []workload.Option{
			{Name: "scale", Default: "1", Help: "pgbench scale factor: 1 branch, 10 tellers and 100,000 accounts per unit (pgbench -s)"},
			{Name: "fillfactor", Default: "100", Help: "fillfactor of pgbench_branches, _tellers and _accounts on PostgreSQL (pgbench -F); ignored on MySQL/MariaDB"},
		},
		Dataset:     "pgbench",
		DataOptions: []string{"scale", "fillfactor"},
		New: func(o workload.Options) (workload.Workload, error) {
			scale, err := o.Int("scale", 1)
			if err != nil {
				return nil, err
			}
			// Beyond 20000 pgbench switches aid to bigint; fairbench keeps pgbench's int schema.
			if scale > 20000 {
				return nil, fmt.Errorf("--scale must be at most 20000 (aid is an int column), got %d", scale)
			}
			ff, err := o.Int("fillfactor", 10)
			if err != nil {
				return nil, err
			}
			if ff > 100 {
				return nil, fmt.Errorf("--fillfactor must be between 10 and 100, got %d", ff)
			}
			return &tpcb{scale: scale, fillfactor: ff}, nil
		},
	})
}

type tpcb struct {
	scale, fillfactor int
}

func (w *tpcb) branches() int { return branchesPerScale * w.scale }
func (w *tpcb) tellers() int  { return tellersPerScale * w.scale }
func (w *tpcb) accounts() int { return accountsPerScale * w.scale }

// QueriesPerTransaction is what one transaction sends: the SELECT, three UPDATEs and the INSERT,
// and BEGIN and END.
func (w *tpcb) QueriesPerTransaction() (read, write, other int) { return 1, 4, 2 }

func (w *tpcb) missing(err error) error {
	if sqldb.IsUndefinedTable(err) {
		return &workload.NotPreparedError{Workload: name, Detail: "pgbench_* tables not found"}
	}
	return err
}

type worker struct {
	conn                              sqldb.Conn
	rng                               *randgen.Rand
	naccounts, nbranches, ntellers    uint32
	updAccount, selAccount, updTeller sqldb.Stmt
	updBranch, insHistory             sqldb.Stmt
}

// The statements of pgbench's tpcb-like script, word for word.
const (
	sqlUpdAccount = "UPDATE pgbench_accounts SET abalance = abalance + ? WHERE aid = ?"
	sqlSelAccount = "SELECT abalance FROM pgbench_accounts WHERE aid = ?"
	sqlUpdTeller  = "UPDATE pgbench_tellers SET tbalance = tbalance + ? WHERE tid = ?"
	sqlUpdBranch  = "UPDATE pgbench_branches SET bbalance = bbalance + ? WHERE bid = ?"
	sqlInsHistory = "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (?, ?, ?, ?, CURRENT_TIMESTAMP)"
)

// NewWorker prepares pgbench's statements. Like pgbench, which reads the scale from
// pgbench_branches, it makes sure the tables match --scale: ids past the tables would update
// nothing and the run would measure the wrong thing.
func (w *tpcb) NewWorker(ctx context.Context, conn sqldb.Conn, rng *randgen.Rand, thread, threads int) (workload.Worker, error) {
	if thread == 0 {
		rows, err := conn.Query(ctx, "SELECT COUNT(*) FROM pgbench_branches")
		if err != nil {
			return nil, w.missing(err)
		}
		if n, _ := strconv.Atoi(rows[0][0]); n != w.branches() {
			return nil, fmt.Errorf("pgbench_branches has %s rows but --scale is %d: pass --scale %s, the scale the tables were prepared with",
				rows[0][0], w.scale, rows[0][0])
		}
	}
	wk := &worker{conn: conn, rng: rng,
		naccounts: uint32(w.accounts()), nbranches: uint32(w.branches()), ntellers: uint32(w.tellers())}
	for _, s := range []struct {
		sql string
		dst *sqldb.Stmt
	}{
		{sqlUpdAccount, &wk.updAccount}, {sqlSelAccount, &wk.selAccount}, {sqlUpdTeller, &wk.updTeller},
		{sqlUpdBranch, &wk.updBranch}, {sqlInsHistory, &wk.insHistory},
	} {
		st, err := conn.Prepare(ctx, s.sql)
		if err != nil {
			return nil, w.missing(err)
		}
		*s.dst = st
	}
	return wk, nil
}

// Transaction draws aid, bid, tid and delta in the script's order (\set aid random(1, 100000 *
// :scale) ...): pgbench's random() is uniform, whatever --rand-type says.
func (w *worker) Transaction(ctx context.Context, q *workload.Txn) error {
	aid := int64(w.rng.Uniform(1, w.naccounts))
	bid := int64(w.rng.Uniform(1, w.nbranches))
	tid := int64(w.rng.Uniform(1, w.ntellers))
	delta := int64(w.rng.Uniform(0, 10000)) - 5000

	if err := w.conn.Exec(ctx, "BEGIN"); err != nil {
		return err
	}
	if _, err := w.updAccount.Exec(ctx, delta, aid); err != nil {
		return err
	}
	if _, err := w.selAccount.Query(ctx, aid); err != nil {
		return err
	}
	if _, err := w.updTeller.Exec(ctx, delta, tid); err != nil {
		return err
	}
	if _, err := w.updBranch.Exec(ctx, delta, bid); err != nil {
		return err
	}
	if _, err := w.insHistory.Exec(ctx, tid, bid, aid, delta); err != nil {
		return err
	}
	return w.conn.Exec(ctx, "COMMIT")
}

// Cleanup drops the pgbench_* tables fairbench created and leaves any others alone.
// Traits: the size at the least, the accounts being nearly all of it, each aid, bid, abalance
// and an 84-character filler: about 100 bytes with its header.
func (w *tpcb) Traits() workload.Traits {
	return workload.Traits{MinDataBytes: int64(w.accounts()) * 100}
}

func (w *tpcb) Cleanup(ctx context.Context, env *workload.Env) error {
	c, err := env.Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	return workload.DropOwned(ctx, c, tableNames)
}

// Check verifies what every tpcb-like transaction keeps: it adds the same delta to one account,
// one teller and one branch and records it in the history, so the four sums stay equal; and
// the table sizes still match --scale.
func (w *tpcb) Check(ctx context.Context, env *workload.Env) error {
	c, err := env.Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	type figure struct {
		label, sql string
		want       int64 // row counts; -1 for the sums
		got        int64
	}
	figs := []*figure{
		{label: "pgbench_branches rows", sql: "SELECT COUNT(*) FROM pgbench_branches", want: int64(w.branches())},
		{label: "pgbench_tellers rows", sql: "SELECT COUNT(*) FROM pgbench_tellers", want: int64(w.tellers())},
		{label: "pgbench_accounts rows", sql: "SELECT COUNT(*) FROM pgbench_accounts", want: int64(w.accounts())},
		{label: "sum(abalance)", sql: "SELECT COALESCE(SUM(abalance), 0) FROM pgbench_accounts", want: -1},
		{label: "sum(tbalance)", sql: "SELECT COALESCE(SUM(tbalance), 0) FROM pgbench_tellers", want: -1},
		{label: "sum(bbalance)", sql: "SELECT COALESCE(SUM(bbalance), 0) FROM pgbench_branches", want: -1},
		{label: "sum(pgbench_history.delta)", sql: "SELECT COALESCE(SUM(delta), 0) FROM pgbench_history", want: -1},
	}
	for _, f := range figs {
		rows, err := c.Query(ctx, f.sql)
		if err != nil {
			return w.missing(err)
		}
		if f.got, err = strconv.ParseInt(rows[0][0], 10, 64); err != nil {
			return fmt.Errorf("%s: %q is not a whole number", f.label, rows[0][0])
		}
	}
	var problems []string
	for _, f := range figs[:3] {
		if f.got != f.want {
			problems = append(problems, fmt.Sprintf("%s = %d, expected %d for --scale %d", f.label, f.got, f.want, w.scale))
		}
	}
	// Each sum is compared with the accounts' one, so the message names the table that drifted.
	ref := figs[3]
	for _, f := range figs[4:] {
		if f.got != ref.got {
			problems = append(problems, fmt.Sprintf("%s = %d but %s = %d: every transaction adds the same delta to both",
				f.label, f.got, ref.label, ref.got))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("tpcb check failed: %s", strings.Join(problems, "; "))
	}
	return nil
}
