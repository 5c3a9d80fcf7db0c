package payments

import (
	"context"
	"fmt"
	"strings"

	"github.com/fairbench/fairbench/internal/randgen"
	"github.com/fairbench/fairbench/internal/workload"
)

// tables are payments' tables as data (workload.Table): rows numbered 1..N, keys, indexes and
// foreign keys, which the generated rows satisfy by construction.
func (p *payments) tables() []workload.Table {
	initial := money(initialCents)
	id := func(n string) workload.Column { return workload.Column{Name: n, Type: "int"} }
	vc := func(n string, l int) workload.Column { return workload.Column{Name: n, Type: "varchar", Length: l} }
	ch := func(n string, l int) workload.Column {
		return workload.Column{Name: n, Type: fmt.Sprintf("char(%d)", l)}
	}
	dt := func(n string) workload.Column { return workload.Column{Name: n, Type: "datetime"} }
	dec := func(n string) workload.Column { return workload.Column{Name: n, Type: "decimal", Length: 15, Scale: 2} }
	return []workload.Table{
		{Name: "banks", Columns: []workload.Column{id("id"), vc("name", 64), ch("swift", 11)}, PrimaryKey: []string{"id"},
			Rows: int64(p.banks), Chunk: loadChunk,
			Row: func(r *workload.Rows, i int64, _ *randgen.Rand) {
				r.Int(i)
				r.Text(func(b []byte) []byte { return fmt.Appendf(b, "Bank %d", i) })
				r.Text(func(b []byte) []byte { return fmt.Appendf(b, "FBNK%07d", i) })
			}},
		{Name: "users", Columns: []workload.Column{id("id"), vc("name", 64), vc("email", 128), vc("status", 16)}, PrimaryKey: []string{"id"},
			Rows: int64(p.accounts), Chunk: loadChunk,
			Row: func(r *workload.Rows, i int64, _ *randgen.Rand) {
				r.Int(i)
				r.Text(func(b []byte) []byte { return fmt.Appendf(b, "User %d", i) })
				r.Text(func(b []byte) []byte { return fmt.Appendf(b, "user%d@example.com", i) })
				r.Str("active")
			}},
		// Every user may view and transfer; the transfer check still reads the row.
		{Name: "permissions", Columns: []workload.Column{id("user_id"), vc("permission", 32)}, PrimaryKey: []string{"user_id", "permission"},
			Rows: 2 * int64(p.accounts), Chunk: loadChunk,
			Row: func(r *workload.Rows, i int64, _ *randgen.Rand) {
				r.Int((i + 1) / 2)
				if i%2 == 1 {
					r.Str("view")
				} else {
					r.Str("transfer")
				}
			},
			ForeignKeys: fks("permissions", fk("user_id", "users"))},
		{Name: "auth_tokens", Columns: []workload.Column{ch("token", 32), id("user_id"), dt("expires_at")}, PrimaryKey: []string{"token"},
			Rows: int64(p.accounts), Chunk: loadChunk,
			Row: func(r *workload.Rows, i int64, _ *randgen.Rand) {
				r.Text(func(b []byte) []byte { return appendToken(b, i) })
				r.Int(i)
				r.Str("2099-12-31 00:00:00")
			},
			Indexes: indexes("auth_tokens", "user_id"), ForeignKeys: fks("auth_tokens", fk("user_id", "users"))},
		// Account i belongs to user i, so a client knows a user's account without a lookup.
		{Name: "accounts", Columns: []workload.Column{id("id"), id("user_id"), id("bank_id"), dec("balance")}, PrimaryKey: []string{"id"},
			Rows: int64(p.accounts), Chunk: loadChunk,
			Row: func(r *workload.Rows, i int64, _ *randgen.Rand) {
				r.Int(i)
				r.Int(i)
				r.Int((i-1)%int64(p.banks) + 1)
				r.Str(initial)
			},
			Indexes: indexes("accounts", "user_id", "bank_id"), ForeignKeys: fks("accounts", fk("user_id", "users"), fk("bank_id", "banks"))},
		{Name: "cards", Columns: []workload.Column{id("id"), id("account_id"), ch("number", 16), ch("expires", 5), vc("status", 16)}, PrimaryKey: []string{"id"},
			Rows: int64(p.accounts), Chunk: loadChunk,
			Row: func(r *workload.Rows, i int64, _ *randgen.Rand) {
				r.Int(i)
				r.Int(i)
				r.Text(func(b []byte) []byte { return fmt.Appendf(b, "4%015d", i) })
				r.Str("12/30")
				r.Str("active")
			},
			Indexes: indexes("cards", "account_id"), ForeignKeys: fks("cards", fk("account_id", "accounts"))},
		// (from_account, id) serves the delete of an account's oldest transfers; InnoDB appends the
		// id to every secondary index anyway, PostgreSQL needs it spelled out.
		{Name: "transfers", Columns: []workload.Column{{Name: "id", Type: "bigserial"}, id("from_account"), id("to_account"), dec("amount"), dt("created_at")},
			PrimaryKey: []string{"id"}, Indexes: indexes("transfers", "from_account, id", "to_account"),
			ForeignKeys: fks("transfers", fk("from_account", "accounts"), fk("to_account", "accounts"))},
		{Name: "payments_meta", Columns: []workload.Column{vc("name", 32), vc("value", 64)}, PrimaryKey: []string{"name"}},
	}
}

// fk is a trusted foreign key of one column to another table's id; fks names a table's keys
// table_fkN, as they were always named.
func fk(col, ref string) workload.ForeignKey {
	return workload.ForeignKey{Columns: []string{col}, RefTable: ref, RefColumns: []string{"id"}, Trusted: true}
}

func fks(table string, keys ...workload.ForeignKey) []workload.ForeignKey {
	for i := range keys {
		keys[i].Name = fmt.Sprintf("%s_fk%d", table, i+1)
	}
	return keys
}

// indexes are a table's secondary indexes, each given as a column list ("from_account, id") and
// named table_col[_col].
func indexes(table string, lists ...string) []workload.Index {
	out := make([]workload.Index, len(lists))
	for i, l := range lists {
		cols := strings.Split(l, ", ")
		out[i] = workload.Index{Name: table + "_" + strings.Join(cols, "_"), Columns: cols}
	}
	return out
}

// loadChunk is how many rows one loading job writes: tables are split so several connections
// share the big ones, and a job's rows do not depend on how many connections there are.
const loadChunk = 250000

// Prepare creates the tables, loads them over --load-threads connections through the engine's
// bulk path, then adds keys, indexes and foreign keys, and records the starting figures Check
// needs in payments_meta.
func (p *payments) Prepare(ctx context.Context, env *workload.Env) error {
	c, err := workload.ConnectClaiming(ctx, env, name, tableNames)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := claimRoutine(ctx, c); err != nil {
		return err
	}
	tables := p.tables()
	if err := workload.CreateTables(ctx, c, tables); err != nil {
		return err
	}
	if err := workload.LoadTables(ctx, env, c, tables); err != nil {
		return err
	}
	if err := workload.KeyTables(ctx, env, c, tables); err != nil {
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
