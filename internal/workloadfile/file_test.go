package workloadfile

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/randgen"
	"github.com/fairbench/fairbench/internal/sqldb"
)

// minimal is a valid file that the error cases below break one thing at a time.
const minimal = `name: kv
tables:
  - name: kv
    rows: 100
    columns:
      - {name: k, type: bigint, gen: {sequence: 1}}
      - {name: v, type: varchar(20), gen: {string: [5, 20]}}
    primary_key: [k]
transactions:
  - name: get
    params: {k: {ref: kv.k}}
    statements:
      - SELECT v FROM kv WHERE k = :k
`

// `primary_key: []` is a table without one on purpose (a captured table as its source has it),
// where leaving the key out is a mistake.
func TestParseNoPrimaryKeyOnPurpose(t *testing.T) {
	f, err := Parse([]byte(strings.Replace(minimal, "    primary_key: [k]\n", "    primary_key: []\n", 1)), "kv.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if tb := f.Tables[0]; !tb.NoPrimaryKey || len(tb.PrimaryKey) != 0 {
		t.Errorf("table %+v: want no primary key, on purpose", tb)
	}
}

// A decimal's bounds may have a fraction (a tax rate in decimal(4,4)): values are drawn between
// them in steps of the column's scale, never outside.
func TestDecimalWithFractionalBounds(t *testing.T) {
	file := strings.Replace(minimal, "      - {name: v,", "      - {name: rate, type: \"decimal(4,4)\", gen: {decimal: [0.01, 0.2]}}\n      - {name: v,", 1)
	f, err := Parse([]byte(file), "kv.yaml")
	if err != nil {
		t.Fatal(err)
	}
	g := f.Tables[0].Columns[1].Gen
	cfg := randgen.DefaultConfig("uniform")
	if err := cfg.Init(); err != nil {
		t.Fatal(err)
	}
	rng := cfg.New(1)
	lo, hi := "9", "0"
	for range 10000 {
		v := string(g.Append(nil, rng, 0))
		if len(v) != 6 || v < "0.0100" || v > "0.2000" {
			t.Fatalf("drew %s from [0.01, 0.2] at scale 4", v)
		}
		lo, hi = min(lo, v), max(hi, v)
	}
	if lo > "0.0110" || hi < "0.1990" {
		t.Errorf("drew %s to %s: want the whole range", lo, hi)
	}
}

// A sequence with every and cycle is one column of a composite key: (row / every) % cycle.
func TestSequenceCycle(t *testing.T) {
	file := strings.Replace(minimal, "      - {name: v,", "      - {name: d, type: int, gen: {sequence: 1, every: 3, cycle: 2}}\n      - {name: v,", 1)
	f, err := Parse([]byte(file), "kv.yaml")
	if err != nil {
		t.Fatal(err)
	}
	g := f.Tables[0].Columns[1].Gen
	var got []string
	for row := range int64(12) {
		got = append(got, string(g.Append(nil, nil, row)))
	}
	if want := "1 1 1 2 2 2 1 1 1 2 2 2"; strings.Join(got, " ") != want {
		t.Errorf("rows 0-11: %v, want %s", got, want)
	}
}

// A whole number written as a float (1e5) is taken; a fraction is not (see TestParseErrors).
func TestWholeFloat(t *testing.T) {
	f, err := Parse([]byte(strings.Replace(minimal, "rows: 100", "rows: 1e2", 1)), "kv.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if f.Tables[0].Rows != 100 {
		t.Errorf("rows: 1e2 read as %d", f.Tables[0].Rows)
	}
}

// A captured transaction's share of its source (capture writes it; the report shows it).
func TestParseSource(t *testing.T) {
	f, err := Parse([]byte(strings.Replace(minimal, "    params: {k: {ref: kv.k}}", "    source: {calls: 16.5, time: 40}\n    params: {k: {ref: kv.k}}", 1)), "kv.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if s := f.Transactions[0].Source; s == nil || s.Calls != 16.5 || s.Time != 40 {
		t.Errorf("source %+v, want 16.5%% of the calls and 40%% of the time", s)
	}
}

func TestParseMinimal(t *testing.T) {
	f, err := Parse([]byte(minimal), "kv.yaml")
	if err != nil {
		t.Fatal(err)
	}
	st := f.Transactions[0].Statements[0]
	if st.Text != "SELECT v FROM kv WHERE k = ?" || len(st.Params) != 1 || st.Params[0] != "k" || st.Kind != "read" {
		t.Errorf("statement bound as %q %v %s", st.Text, st.Params, st.Kind)
	}
}

// Every error is one line: file:line:column, what is wrong, and the fix.
func TestParseErrors(t *testing.T) {
	cases := []struct{ name, old, new, want string }{
		{"unknown key", "    rows: 100", "    rows: 100\n    rowz: 5", "kv.yaml:5:5: a table has no key \"rowz\": use name, rows, columns"},
		{"bad type", "type: bigint", "type: number", "kv.yaml:6:25: column kv.k has type \"number\", which not every engine stores alike: use smallint"},
		{"varchar without size", "varchar(20)", "varchar", "varchar needs its size"},
		{"string longer than column", "string: [5, 20]", "string: [5, 30]", "column kv.v is varchar(20) but its strings are up to 30 long"},
		{"generator for the wrong type", "gen: {sequence: 1}}", "gen: {time: [2024-01-01, 2024-02-01]}}", "column kv.k is bigint: generate it with sequence"},
		{"two generators", "gen: {sequence: 1}}", "gen: {sequence: 1, uniform: [1, 2]}}", "has two generators, sequence and uniform"},
		{"undeclared parameter", "WHERE k = :k", "WHERE k = :key", "transaction get uses :key, which its params: do not give"},
		{"unused parameter", "params: {k: {ref: kv.k}}", "params: {k: {ref: kv.k}, z: {uniform: [1, 2]}}", "gives parameter z, which no statement uses"},
		{"ref to a non-sequence", "{ref: kv.k}", "{ref: kv.v}", "ref kv.v: v must be a column of kv generated by sequence"},
		{"ref to no table", "{ref: kv.k}", "{ref: nope.k}", "ref nope.k: there is no table nope"},
		{"own question mark", "WHERE k = :k", "WHERE k = :k OR v = ?", "uses ?, which fairbench's drivers take for a placeholder"},
		{"two statements in one", "WHERE k = :k", "WHERE k = :k; DELETE FROM kv", "holds more than one statement"},
		{"unclosed quote", "WHERE k = :k", "WHERE v = 'x", "has a ' that is never closed"},
		{"no primary key", "    primary_key: [k]\n", "", "table kv has no primary_key"},
		{"text in a key", "type: varchar(20), gen: {string: [5, 20]}}\n    primary_key: [k]", "type: text, gen: {string: [5, 20]}}\n    primary_key: [k]\n    indexes: [[v]]", "is text and in a key or index, which mysql cannot index"},
		{"bad name", "name: kv\ntables", "name: Key Value\ntables", "name \"Key Value\" must be a lowercase name"},
		{"null out of range", "gen: {string: [5, 20]}}", "gen: {string: [5, 20]}, null: 1.5}", "null is 1.5: use a number from 0 to 1"},
		{"weights without pick", "gen: {string: [5, 20]}}", "gen: {string: [5, 20], weights: [1]}}", "weights go with pick"},
		{"foreign key to a later table", "    primary_key: [k]\n", "    primary_key: [k]\n    foreign_keys: [{columns: [k], references: other(id)}]\n", "references other, which must be a table listed before it"},
		{"not yaml", "tables:", "tables: [", "is not valid YAML"},
		{"cycle without a sequence", "params: {k: {ref: kv.k}}", "params: {k: {ref: kv.k}, z: {uniform: [1, 2], cycle: 3}}", "every and cycle go with sequence"},
		{"ref to a cycled sequence", "gen: {sequence: 1}}", "gen: {sequence: 1, cycle: 10}}", "generated by sequence without cycle"},
		{"source share over 100", "    params: {k: {ref: kv.k}}", "    source: {calls: 120, time: 5}\n    params: {k: {ref: kv.k}}", "source calls"},
		{"bad isolation", "    params: {k: {ref: kv.k}}", "    isolation: snapshot\n    params: {k: {ref: kv.k}}", "transaction get's isolation \"snapshot\": use read committed, repeatable read or serializable"},
		{"bad think", "    params: {k: {ref: kv.k}}", "    think: 5 seconds\n    params: {k: {ref: kv.k}}", "transaction get's think: \"5 seconds\" is not a time"},
		{"think range backwards", "    params: {k: {ref: kv.k}}", "    think: [2s, 1s]\n    params: {k: {ref: kv.k}}", "the range [2s, 1s] ends before it starts"},
		{"unknown statement key", "      - SELECT v FROM kv WHERE k = :k", "      - {sql: SELECT v FROM kv WHERE k = :k, oracle: SELECT 1}", "a statement of transaction get has no key \"oracle\": use sql, into, expect, chance, postgres, mysql, mariadb"},
		{"no sql and not every engine", "      - SELECT v FROM kv WHERE k = :k", "      - {postgres: SELECT v FROM kv WHERE k = :k}", "needs its sql:, or a form of its own for each of postgres, mysql and mariadb"},
		{"engine form of another kind", "      - SELECT v FROM kv WHERE k = :k", "      - {sql: SELECT v FROM kv WHERE k = :k, mysql: DELETE FROM kv WHERE k = :k}", "this form of the statement is a write and \"SELECT v FROM kv WHERE k = :k\" a read"},
		{"engine form with other parameters", "      - SELECT v FROM kv WHERE k = :k", "      - {sql: SELECT v FROM kv WHERE k = :k, mariadb: SELECT v FROM kv WHERE k = :k OR k = :j}", "transaction get uses :j, which its params: do not give"},
		{"into a parameter's name", "      - SELECT v FROM kv WHERE k = :k", "      - {sql: SELECT v FROM kv WHERE k = :k, into: [k]}", "into names \"k\", which is not a new lowercase name"},
		{"into used before it is set", "      - SELECT v FROM kv WHERE k = :k", "      - SELECT v FROM kv WHERE k = :k AND v = :got\n      - {sql: SELECT v FROM kv WHERE k = :k, into: [got]}", "uses :got, which its params: do not give and no statement before it sets with into"},
		{"chance above 1", "      - SELECT v FROM kv WHERE k = :k", "      - {sql: SELECT v FROM kv WHERE k = :k, chance: 1.5}", "a statement's chance (the share of the transaction's runs it runs in) is 1.5: use a number from 0.0001 to 1"},
		{"chance with into", "      - SELECT v FROM kv WHERE k = :k", "      - {sql: SELECT v FROM kv WHERE k = :k, into: [got], chance: 0.5}", "a statement with a chance below 1 cannot set parameters with into"},
		{"expect a negative count", "      - SELECT v FROM kv WHERE k = :k", "      - {sql: SELECT v FROM kv WHERE k = :k, expect: {rows: -1}}", "expect's rows is -1: use a number from 0"},
		{"check without equals", "      - SELECT v FROM kv WHERE k = :k\n", "      - SELECT v FROM kv WHERE k = :k\nchecks: [{name: c1, sql: SELECT count(*) FROM kv}]\n", "check c1 has no equals: give the value its query must return"},
		{"check with a parameter", "      - SELECT v FROM kv WHERE k = :k\n", "      - SELECT v FROM kv WHERE k = :k\nchecks: [{name: c1, sql: SELECT count(*) FROM kv WHERE k = :k, equals: 0}]\n", "check c1 must be a query without parameters that returns one value"},
		{"check that writes", "      - SELECT v FROM kv WHERE k = :k\n", "      - SELECT v FROM kv WHERE k = :k\nchecks: [{name: c1, sql: DELETE FROM kv, equals: 0}]\n", "check c1 must be a query without parameters"},
		{"fraction for a whole number", "params: {k: {ref: kv.k}}", "params: {k: {ref: kv.k}, z: {uniform: [0.5, 2]}}", "uniform's MIN must be a whole number"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := strings.Replace(minimal, c.old, c.new, 1)
			if src == minimal {
				t.Fatalf("the case changes nothing: %q not found", c.old)
			}
			_, err := Parse([]byte(src), "kv.yaml")
			if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("Parse = %v\nwant one line containing %q", err, c.want)
			}
		})
	}
}

// The statement options: into names a later statement's parameter, an engine's own form replaces
// the portable one there alone, isolation and think are read as given.
func TestParseStatementOptions(t *testing.T) {
	src := strings.Replace(minimal, "    statements:\n      - SELECT v FROM kv WHERE k = :k\n", `    isolation: repeatable_read
    think: [10ms, 30ms]
    statements:
      - sql: SELECT v FROM kv WHERE k = :k
        into: [got]
        expect: {rows: 1}
      - sql: UPDATE kv SET v = :got WHERE k = :k
        mysql: UPDATE kv SET v = CONCAT(:got, '') WHERE k = :k
`, 1)
	f, err := Parse([]byte(src), "kv.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tx := f.Transactions[0]
	if tx.Isolation != "REPEATABLE READ" || tx.ThinkMin != 10*time.Millisecond || tx.ThinkMax != 30*time.Millisecond {
		t.Errorf("isolation %q, think %v-%v", tx.Isolation, tx.ThinkMin, tx.ThinkMax)
	}
	read, write := tx.Statements[0], tx.Statements[1]
	if strings.Join(read.Into, ",") != "got" || read.Expect.Rows != 1 || write.Expect.Expecting() {
		t.Errorf("into %v, expect %+v / %+v", read.Into, read.Expect, write.Expect)
	}
	if write.On(sqldb.MySQL).Text != "UPDATE kv SET v = CONCAT(?, '') WHERE k = ?" || write.On(sqldb.MariaDB) != write {
		t.Errorf("mysql runs %q, mariadb %q", write.On(sqldb.MySQL).Text, write.On(sqldb.MariaDB).Text)
	}
	for _, kind := range engineKinds {
		b := bind(tx, kind)
		// k is parameter 0, got the into slot after it: the update binds got then k.
		if b.slots != 2 || !slices.Equal(b.into[0], []int{1}) || !slices.Equal(b.args[1], []int{1, 0}) {
			t.Errorf("%s: bound %+v", kind, b)
		}
	}
	if !explicit(tx) {
		t.Error("two statements run in autocommit")
	}
}

func TestBind(t *testing.T) {
	cases := []struct{ sql, text, params, kind string }{
		{"SELECT a::int FROM t WHERE b = :x AND c = ':notme' -- :nor\n AND d = :y", "SELECT a::int FROM t WHERE b = ? AND c = ':notme' -- :nor\n AND d = ?", "x y", "read"},
		{"UPDATE t SET s = 'it''s' WHERE id = :id;", "UPDATE t SET s = 'it''s' WHERE id = ?", "id", "write"},
		{`INSERT INTO "t" (a) VALUES (:a) /* :b */`, `INSERT INTO "t" (a) VALUES (?) /* :b */`, "a", "write"},
		{"(SELECT 1)", "(SELECT 1)", "", "read"},
		{"LOCK TABLE t", "LOCK TABLE t", "", "other"},
	}
	for _, c := range cases {
		s := &Statement{SQL: c.sql}
		if err := s.bind(); err != nil {
			t.Errorf("%q: %v", c.sql, err)
			continue
		}
		if s.Text != c.text || strings.Join(s.Params, " ") != c.params || s.Kind != c.kind {
			t.Errorf("%q bound as %q %v %s", c.sql, s.Text, s.Params, s.Kind)
		}
	}
}

// The examples shipped with fairbench parse.
func TestExamplesParse(t *testing.T) {
	files, _ := filepath.Glob("../../examples/workloads/*.yaml")
	if len(files) == 0 {
		t.Fatal("no examples found")
	}
	for _, f := range files {
		if _, err := Load(f); err != nil {
			t.Errorf("%v", err)
		}
	}
}

func TestLoadErrors(t *testing.T) {
	if _, err := Load("/nonexistent/w.yaml"); err == nil || !strings.Contains(err.Error(), "cannot be read") {
		t.Errorf("missing file: %v", err)
	}
	big := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(big, make([]byte, MaxFileBytes+1), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(big); err == nil || !strings.Contains(err.Error(), "larger than 1 MiB") {
		t.Errorf("big file: %v", err)
	}
}

// FuzzParse: no workload file, however mangled, panics the parser, and an accepted one has
// every statement bound and every table keyed.
func FuzzParse(f *testing.F) {
	f.Add([]byte(minimal))
	for _, path := range []string{"../../examples/workloads/shop.yaml", "testdata/bank.yaml"} {
		if b, err := os.ReadFile(path); err == nil {
			f.Add(b)
		}
	}
	for _, s := range []string{"", "name: x", "tables: [{}]", "transactions: [{statements: [':']}]", "name: a\ntables: [{name: t, rows: -1}]"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse(data, "fuzz.yaml")
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("a multi-line error: %q", err)
			}
			return
		}
		for _, tb := range file.Tables {
			if len(tb.PrimaryKey) == 0 && !tb.NoPrimaryKey {
				t.Errorf("accepted table %s without a key", tb.Name)
			}
		}
		for _, tx := range file.Transactions {
			for _, st := range tx.Statements {
				if st.Kind == "" {
					t.Errorf("accepted an unbound statement %q", st.SQL)
				}
			}
			for _, kind := range engineKinds {
				b := bind(tx, kind)
				for i, args := range b.args {
					if len(args) != len(b.forms[i].Params) || slices.ContainsFunc(args, func(a int) bool { return a >= b.slots }) {
						t.Errorf("transaction %s statement %d on %s bound as %v of %d values", tx.Name, i+1, kind, args, b.slots)
					}
				}
			}
		}
	})
}

// A file on existing tables names them only, and draws keys from ranges, since fairbench loaded
// none of them.
func TestParseExistingTables(t *testing.T) {
	const head = "name: mine\nexisting_tables: true\ntables:\n  - name: accounts\n"
	const tx = "transactions:\n  - name: look\n    params: {a: {uniform: [1, 9]}}\n    statements: [SELECT 1 FROM accounts WHERE id = :a]\n"
	if f, err := Parse([]byte(head+tx), "mine.yaml"); err != nil || !f.Existing {
		t.Fatalf("Parse = %+v, %v", f, err)
	}
	cases := []struct{ name, src, want string }{
		{"columns given", head + "    columns: [{name: id, type: int, gen: {sequence: 1}}]\n" + tx, "mine.yaml:4:5: table accounts already exists (existing_tables: true): give its name only"},
		{"rows given", head + "    rows: 10\n" + tx, "give its name only"},
		{"ref to it", head + strings.Replace(tx, "{uniform: [1, 9]}", "{ref: accounts.id}", 1), "fairbench did not load accounts (existing_tables: true), so it does not know its keys: draw them with uniform"},
		{"not a boolean", strings.Replace(head, "true", "yes please", 1) + tx, "existing_tables must be true or false"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.src), "mine.yaml")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Parse = %v\nwant %q", err, c.want)
			}
		})
	}
}

// The least the rows take: a header and each column at its shortest, times the scaled rows.
func TestMinDataBytes(t *testing.T) {
	f, err := Parse([]byte(minimal), "kv.yaml")
	if err != nil {
		t.Fatal(err)
	}
	w, err := newFileWorkload(f, 3)
	if err != nil {
		t.Fatal(err)
	}
	// 300 rows of a header (24), a bigint (8) and a varchar of 5 to 20 letters (6 at least).
	if got, want := w.Traits().MinDataBytes, int64(300*(24+8+6)); got != want {
		t.Errorf("MinDataBytes = %d, want %d", got, want)
	}
}
