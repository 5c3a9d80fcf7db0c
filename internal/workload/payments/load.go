package payments

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/fairbench/fairbench/internal/dialect"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/workload"
)

// table is one table's DDL and data. Rows are numbered 1..rows; gen writes row i.
type table struct {
	name string
	// cols is the column list; pk the primary key, declared at CREATE on InnoDB (where it is the
	// clustered index) and added after the load on PostgreSQL (where building it once is cheaper).
	cols, pk string
	insert   []string // columns the generator fills
	rows     int
	gen      func(w *workload.Rows, i int, scratch []byte)
	// after runs once the table is loaded: secondary indexes, then foreign keys.
	indexes, fkeys []string
}

func (p *payments) tables(d dialect.Dialect) []table {
	ts, serial := d.TypeName("datetime", 0, 0), d.TypeName("bigserial", 0, 0)
	initial := money(initialCents)
	return []table{
		{name: "banks", cols: "id int NOT NULL, name varchar(64) NOT NULL, swift char(11) NOT NULL", pk: "id",
			insert: []string{"id", "name", "swift"}, rows: p.banks,
			gen: func(w *workload.Rows, i int, s []byte) {
				w.Int(int64(i))
				w.Bytes(fmt.Appendf(s, "Bank %d", i))
				w.Bytes(fmt.Appendf(s, "FBNK%07d", i))
			}},
		{name: "users", cols: "id int NOT NULL, name varchar(64) NOT NULL, email varchar(128) NOT NULL, status varchar(16) NOT NULL", pk: "id",
			insert: []string{"id", "name", "email", "status"}, rows: p.accounts,
			gen: func(w *workload.Rows, i int, s []byte) {
				w.Int(int64(i))
				w.Bytes(fmt.Appendf(s, "User %d", i))
				w.Bytes(fmt.Appendf(s, "user%d@example.com", i))
				w.Str("active")
			}},
		// Every user may view and transfer; the transfer check still reads the row.
		{name: "permissions", cols: "user_id int NOT NULL, permission varchar(32) NOT NULL", pk: "user_id, permission",
			insert: []string{"user_id", "permission"}, rows: 2 * p.accounts,
			gen: func(w *workload.Rows, i int, s []byte) {
				w.Int(int64((i + 1) / 2))
				if i%2 == 1 {
					w.Str("view")
				} else {
					w.Str("transfer")
				}
			},
			fkeys: []string{"FOREIGN KEY (user_id) REFERENCES users (id)"}},
		{name: "auth_tokens", cols: "token char(32) NOT NULL, user_id int NOT NULL, expires_at " + ts + " NOT NULL", pk: "token",
			insert: []string{"token", "user_id", "expires_at"}, rows: p.accounts,
			gen: func(w *workload.Rows, i int, s []byte) {
				w.Bytes(appendToken(s, int64(i)))
				w.Int(int64(i))
				w.Str("2099-12-31 00:00:00")
			},
			indexes: []string{"user_id"}, fkeys: []string{"FOREIGN KEY (user_id) REFERENCES users (id)"}},
		// Account i belongs to user i, so a client knows a user's account without a lookup.
		{name: "accounts", cols: "id int NOT NULL, user_id int NOT NULL, bank_id int NOT NULL, balance decimal(15,2) NOT NULL", pk: "id",
			insert: []string{"id", "user_id", "bank_id", "balance"}, rows: p.accounts,
			gen: func(w *workload.Rows, i int, s []byte) {
				w.Int(int64(i))
				w.Int(int64(i))
				w.Int(int64((i-1)%p.banks + 1))
				w.Str(initial)
			},
			indexes: []string{"user_id", "bank_id"},
			fkeys:   []string{"FOREIGN KEY (user_id) REFERENCES users (id)", "FOREIGN KEY (bank_id) REFERENCES banks (id)"}},
		{name: "cards", cols: "id int NOT NULL, account_id int NOT NULL, number char(16) NOT NULL, expires char(5) NOT NULL, status varchar(16) NOT NULL", pk: "id",
			insert: []string{"id", "account_id", "number", "expires", "status"}, rows: p.accounts,
			gen: func(w *workload.Rows, i int, s []byte) {
				w.Int(int64(i))
				w.Int(int64(i))
				w.Bytes(fmt.Appendf(s, "4%015d", i))
				w.Str("12/30")
				w.Str("active")
			},
			indexes: []string{"account_id"}, fkeys: []string{"FOREIGN KEY (account_id) REFERENCES accounts (id)"}},
		// (from_account, id) serves the delete of an account's oldest transfers; InnoDB appends the
		// id to every secondary index anyway, PostgreSQL needs it spelled out.
		{name: "transfers", cols: "id " + serial + ", from_account int NOT NULL, to_account int NOT NULL, amount decimal(15,2) NOT NULL, created_at " + ts + " NOT NULL", pk: "id",
			indexes: []string{"from_account, id", "to_account"},
			fkeys:   []string{"FOREIGN KEY (from_account) REFERENCES accounts (id)", "FOREIGN KEY (to_account) REFERENCES accounts (id)"}},
		{name: "payments_meta", cols: "name varchar(32) NOT NULL, value varchar(64) NOT NULL", pk: "name"},
	}
}

// loadChunk is how many rows one loading job writes: tables are split so several connections
// share the big ones, and a job's rows do not depend on how many connections there are.
const loadChunk = 250000

type loadJob struct {
	t      *table
	lo, hi int
}

// Prepare creates the tables, loads them over --load-threads connections (COPY on PostgreSQL,
// multi-row INSERTs on MySQL and MariaDB), then adds keys, indexes and foreign keys, and records
// the starting figures Check needs in payments_meta.
func (p *payments) Prepare(ctx context.Context, env *workload.Env) error {
	c, err := workload.ConnectClaiming(ctx, env, name, tableNames)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := claimRoutine(ctx, c); err != nil {
		return err
	}
	d := dialect.Of(c)
	tables := p.tables(d)
	if err := createTables(ctx, c, tables, d); err != nil {
		return err
	}
	defer workload.ReadyBulkLoad(ctx, c)()
	if err := loadRows(ctx, env, tables); err != nil {
		return err
	}
	if err := addKeys(ctx, env, tables, d); err != nil {
		return err
	}
	// The routine is part of the dataset whatever --transfer a run uses, so one prepare serves both.
	if err := createRoutine(ctx, c); err != nil {
		return fmt.Errorf("creating %s: %w", routineName, err)
	}
	meta := fmt.Sprintf("INSERT INTO payments_meta (name, value) VALUES ('accounts', '%d'), ('banks', '%d'), "+
		"('initial_balance', '%s'), ('total', '%s'), ('transfers_deleted', '0')",
		p.accounts, p.banks, money(initialCents), money(int64(p.accounts)*initialCents))
	return c.Exec(ctx, meta)
}

// createTables creates the tables, with their primary keys where the engine clusters rows by the
// key (InnoDB); elsewhere they are added after the load, where building them once is cheaper.
func createTables(ctx context.Context, c sqldb.Conn, tables []table, d dialect.Dialect) error {
	for _, t := range tables {
		cols := t.cols
		if d.Caps().PrimaryKeyAtCreate {
			cols += ", PRIMARY KEY (" + t.pk + ")"
		}
		if err := workload.CreateOwned(ctx, c, t.name, fmt.Sprintf("CREATE TABLE %s (%s)", t.name, cols)); err != nil {
			return err
		}
	}
	return nil
}

// loadRows loads every table's rows in chunks over --load-threads connections, through the
// engine's bulk path (dialect.Loader).
func loadRows(ctx context.Context, env *workload.Env, tables []table) error {
	var jobs []loadJob
	var total int64
	for i := range tables {
		t := &tables[i]
		for lo := 1; lo <= t.rows; lo += loadChunk {
			jobs = append(jobs, loadJob{t: t, lo: lo, hi: min(lo+loadChunk-1, t.rows)})
		}
		total += int64(t.rows)
	}
	var done atomic.Int64
	progress := func(n int64) {
		if env.Progress != nil {
			env.Progress(done.Add(n), total)
		}
	}
	return workload.OnConnections(ctx, env, env.LoadThreads, jobs, func(conn sqldb.Conn, j loadJob) error {
		if err := copyRows(ctx, conn, j, progress); err != nil {
			return fmt.Errorf("loading %s: %w", j.t.name, err)
		}
		return nil
	})
}

// addKeys adds keys and indexes table by table in parallel, then the foreign keys, which need
// their parents' keys, then the statistics: on PostgreSQL a VACUUM ANALYZE, as pgbench -i does,
// so the first run does not pay for setting hint bits on freshly loaded rows.
func addKeys(ctx context.Context, env *workload.Env, tables []table, d dialect.Dialect) error {
	phases := []func(sqldb.Conn, table) error{
		func(conn sqldb.Conn, t table) error {
			var ddl []string
			if !d.Caps().PrimaryKeyAtCreate {
				ddl = append(ddl, fmt.Sprintf("ALTER TABLE %s ADD PRIMARY KEY (%s)", t.name, t.pk))
			}
			for _, ix := range t.indexes {
				ddl = append(ddl, fmt.Sprintf("CREATE INDEX %s_%s ON %s (%s)", t.name, indexSuffix(ix), t.name, ix))
			}
			return workload.ExecAll(ctx, conn, ddl)
		},
		func(conn sqldb.Conn, t table) error {
			// The rows are consistent by construction; with checks off InnoDB adds a foreign
			// key in place instead of copying the table to validate it.
			ddl := d.LoadingSession()
			for n, fk := range t.fkeys {
				ddl = append(ddl, fmt.Sprintf("ALTER TABLE %s ADD CONSTRAINT %s_fk%d %s", t.name, t.name, n+1, fk))
			}
			return workload.ExecAll(ctx, conn, ddl)
		},
		func(conn sqldb.Conn, t table) error { return d.Maintain(ctx, conn, t.name) },
	}
	for _, phase := range phases {
		if err := workload.OnConnections(ctx, env, env.LoadThreads, tables, phase); err != nil {
			return err
		}
	}
	return nil
}

func indexSuffix(cols string) string {
	out := make([]byte, 0, len(cols))
	for i := 0; i < len(cols); i++ {
		switch ch := cols[i]; ch {
		case ' ':
		case ',':
			out = append(out, '_')
		default:
			out = append(out, ch)
		}
	}
	return string(out)
}

func copyRows(ctx context.Context, c sqldb.Conn, j loadJob, progress func(int64)) error {
	w := &workload.Rows{}
	scratch := make([]byte, 0, 64)
	return workload.BulkLoad(ctx, c, j.t.name, j.t.insert, int64(j.lo), int64(j.hi), func(b []byte, i int64) []byte {
		w.Buf = b
		w.Reset()
		j.t.gen(w, int(i), scratch[:0])
		w.End()
		return w.Buf
	}, progress)
}
