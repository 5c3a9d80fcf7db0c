package tpcb

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/fairbench/fairbench/internal/dialect"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/workload"
)

// createSQL is pgbench -i's DDL (initCreateTables), in its order. pgbench adds the primary keys
// after the load, because building an index once is cheaper than maintaining it per row; where
// the engine clusters rows by the primary key (InnoDB), adding it afterwards would rebuild the
// whole table: there the keys are declared up front and rows arrive in key order instead.
func (w *tpcb) createSQL(d dialect.Dialect) (names, ddl []string) {
	// timestamp without time zone: DATETIME in MySQL's terms (TIMESTAMP there converts time zones).
	mtime := d.TypeName("datetime", 0, 0)
	tables := []struct{ name, cols, pk string }{
		{"pgbench_history", "tid int,bid int,aid int,delta int,mtime " + mtime + ",filler char(22)", ""},
		{"pgbench_tellers", "tid int not null,bid int,tbalance int,filler char(84)", "tid"},
		{"pgbench_accounts", "aid int not null,bid int,abalance int,filler char(84)", "aid"},
		{"pgbench_branches", "bid int not null,bbalance int,filler char(88)", "bid"},
	}
	for _, t := range tables {
		names = append(names, t.name)
		cols, with := t.cols, ""
		if t.pk != "" && d.Caps().PrimaryKeyAtCreate {
			cols += ",primary key (" + t.pk + ")"
		}
		if t.pk != "" {
			with = d.FillFactor(w.fillfactor)
		}
		ddl = append(ddl, fmt.Sprintf("create table %s(%s)%s", t.name, cols, with))
	}
	return names, ddl
}

// Prepare does what 'pgbench -i' does (create tables, generate data client-side, vacuum, primary
// keys), with pgbench_accounts loaded over several connections when --load-threads allows.
func (w *tpcb) Prepare(ctx context.Context, env *workload.Env) error {
	c, err := workload.ConnectClaiming(ctx, env, name, tableNames)
	if err != nil {
		return err
	}
	defer c.Close()
	d := dialect.Of(c)
	names, ddl := w.createSQL(d)
	for i, q := range ddl {
		if err := workload.CreateOwned(ctx, c, names[i], q); err != nil {
			return err
		}
	}
	total := int64(w.branches() + w.tellers() + w.accounts())
	var done atomic.Int64
	progress := func(n int64) {
		if env.Progress != nil {
			env.Progress(done.Add(n), total)
		}
	}
	defer workload.ReadyBulkLoad(ctx, c)()
	// pgbench fills branches and tellers one INSERT per row with a NULL filler; loading only the
	// other columns gives the same rows.
	if err := workload.BulkLoad(ctx, c, "pgbench_branches", []string{"bid", "bbalance"}, 1, int64(w.branches()), func(b []byte, i int64) []byte {
		return fmt.Appendf(b, "%d\t0\n", i)
	}, progress); err != nil {
		return fmt.Errorf("loading pgbench_branches: %w", err)
	}
	if err := workload.BulkLoad(ctx, c, "pgbench_tellers", []string{"tid", "bid", "tbalance"}, 1, int64(w.tellers()), func(b []byte, i int64) []byte {
		return fmt.Appendf(b, "%d\t%d\t0\n", i, (i-1)/tellersPerScale+1)
	}, progress); err != nil {
		return fmt.Errorf("loading pgbench_tellers: %w", err)
	}
	if err := w.loadAccounts(ctx, env, progress); err != nil {
		return fmt.Errorf("loading pgbench_accounts: %w", err)
	}
	// pgbench -i's "vacuum" and "primary keys" steps, in its order.
	for _, t := range []string{"pgbench_branches", "pgbench_tellers", "pgbench_accounts", "pgbench_history"} {
		if err := d.Maintain(ctx, c, t); err != nil {
			return err
		}
	}
	if d.Caps().PrimaryKeyAtCreate {
		return nil
	}
	for _, pk := range []string{"pgbench_branches add primary key (bid)", "pgbench_tellers add primary key (tid)",
		"pgbench_accounts add primary key (aid)"} {
		if err := c.Exec(ctx, "alter table "+pk); err != nil {
			return err
		}
	}
	return nil
}

// loadAccounts splits the accounts into contiguous aid ranges, one per loading connection. Rows
// are pgbench's: bid = (aid-1)/100000+1, abalance 0, and an empty (not NULL) filler.
func (w *tpcb) loadAccounts(ctx context.Context, env *workload.Env, progress func(int64)) error {
	parts := max(1, min(env.LoadThreads, w.scale))
	per := (w.scale + parts - 1) / parts * accountsPerScale
	var wg sync.WaitGroup
	errs := make([]error, parts)
	for p := 0; p < parts; p++ {
		lo, hi := p*per+1, min((p+1)*per, w.accounts())
		if lo > hi {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := env.Connect(ctx)
			if err != nil {
				errs[p] = err
				return
			}
			defer conn.Close()
			errs[p] = copyAccounts(ctx, conn, lo, hi, progress)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func appendAccount(b []byte, aid int) []byte {
	b = strconv.AppendInt(b, int64(aid), 10)
	b = append(b, '\t')
	b = strconv.AppendInt(b, int64((aid-1)/accountsPerScale+1), 10)
	return append(b, "\t0\t\n"...)
}

func copyAccounts(ctx context.Context, c sqldb.Conn, lo, hi int, progress func(int64)) error {
	return workload.BulkLoad(ctx, c, "pgbench_accounts", []string{"aid", "bid", "abalance", "filler"}, int64(lo), int64(hi),
		func(b []byte, aid int64) []byte { return appendAccount(b, int(aid)) }, progress)
}
