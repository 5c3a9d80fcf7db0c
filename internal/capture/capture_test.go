package capture

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/fairbench/fairbench/internal/dialect"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/testserver"
	"github.com/fairbench/fairbench/internal/workloadfile"
)

func TestMain(m *testing.M) { testserver.Main(m) }

// private are values a user's database holds that a captured file must not, without
// --sample-values: strings, a salary, a birth date.
var private = []string{"alice.secret@example.org", "bob.hidden@example.org", "carol.private@example.org", "123457", "1987-06-05"}

// seed creates a user's tables (a parent with a foreign key to it, one private value of each
// kind per row) and runs the statements an application would, so the server's statistics hold
// them.
func seed(t *testing.T, ctx context.Context, c sqldb.Conn) {
	t.Helper()
	stmts := []string{
		"CREATE TABLE teams (id int NOT NULL, title varchar(40) NOT NULL, PRIMARY KEY (id))",
		"CREATE TABLE people (id bigint NOT NULL, team_id int NOT NULL, email varchar(80) NOT NULL, salary decimal(10,2), born date, active boolean NOT NULL, " +
			"PRIMARY KEY (id), FOREIGN KEY (team_id) REFERENCES teams (id))",
		"CREATE INDEX people_email ON people (email)",
		"INSERT INTO teams VALUES (1, 'red'), (2, 'blue')",
	}
	for i, e := range private[:3] {
		stmts = append(stmts, fmt.Sprintf("INSERT INTO people VALUES (%d, %d, '%s', %s.50, '%s', %s)", i+1, i%2+1, e, private[3], private[4], []string{"true", "false"}[i%2]))
	}
	for _, s := range stmts {
		if err := c.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	for i := range 30 {
		for _, q := range []string{
			fmt.Sprintf("SELECT email, salary FROM people WHERE id = %d", i%3+1),
			fmt.Sprintf("SELECT count(*) FROM people WHERE email = 'x%d@example.org'", i),
			fmt.Sprintf("UPDATE people SET salary = salary + %d WHERE id = %d", i, i%3+1),
		} {
			if _, err := c.Query(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
}

// Captured from a real server of each engine: the file parses, keeps the schema (keys, the
// foreign key as a ref), weighs and types the statements, and holds no private value unless
// --sample-values asks for a sample of them.
func TestCaptureOnRealServers(t *testing.T) {
	for _, kind := range testserver.Kinds() {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			c := testserver.Conn(t, kind)
			seed(t, ctx, c)
			out, summary, err := Capture(ctx, c, Options{Name: "people", Top: 20, Source: kind})
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			text := string(out)
			for _, v := range private {
				if strings.Contains(text, v) {
					t.Errorf("the captured file holds the private value %q:\n%s", v, text)
				}
			}
			f, err := workloadfile.Parse(out, "people.yaml")
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{
				"{name: id, type: \"bigint\", gen: {sequence: 1}}",
				"{name: team_id, type: \"int\", gen: {ref: teams.id}}",
				"foreign_keys:",
				"SELECT email, salary FROM people WHERE id = :id",
				"SELECT count(*) FROM people WHERE email = :email",
				"id: {ref: people.id}",
				"UPDATE people SET salary = salary + :delta WHERE id = :id",
				"email: {string: [",
			} {
				// MariaDB's digests write some names as keywords (ID): SQL takes them alike.
				if !strings.Contains(strings.ToLower(text), strings.ToLower(want)) {
					t.Errorf("want %q in the captured file:\n%s", want, text)
				}
			}
			// The three statements run 30 times each, the most frequent; the inserts may follow.
			if len(f.Transactions) < 3 || f.Transactions[2].Weight != 30 {
				t.Errorf("want the 3 statements run 30 times each first:\n%s", text)
			}
			// 90 of the 93 calls (MySQL's digests collapse the three seeding INSERTs' rows).
			var kept int
			var share float64
			if _, err := fmt.Sscanf(summary, "2 tables; %d statements kept, %f%% of the calls", &kept, &share); err != nil || kept < 3 || share < 95 {
				t.Errorf("summary %q: want both tables and the statements run 30 times each kept", summary)
			}
			sampled, _, err := Capture(ctx, c, Options{Name: "people", Top: 20, SampleValues: true, Source: kind})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(sampled), private[0]) {
				t.Errorf("--sample-values: want the sampled emails among the compared values:\n%s", sampled)
			}
		})
	}
}

// The transformations of a normalized statement, engine by engine's spelling.
func TestTypeParams(t *testing.T) {
	people := &table{name: "people", rows: 100, columns: []*column{
		{name: "id", portable: "bigint", gen: "sequence: 1", genKind: "sequence"},
		{name: "email", portable: "varchar", length: 80, gen: "string: [10, 30]", genKind: "string"},
	}}
	tables := map[string]*table{"people": people}
	for _, tc := range []struct {
		in, want string
		rows     float64
		params   []string
	}{
		{"SELECT email FROM people WHERE id = $1", "SELECT email FROM people WHERE id = :id", 1, []string{"id: ref: people.id"}},
		{"SELECT email FROM people WHERE id = ?", "SELECT email FROM people WHERE id = :id", 1, []string{"id: ref: people.id"}},
		{"SELECT email FROM people WHERE id BETWEEN ? AND ?", "SELECT email FROM people WHERE id BETWEEN :id AND :id + 9", 10, []string{"id: ref: people.id"}},
		{"SELECT count(*) FROM people WHERE id BETWEEN $1 AND $2", "SELECT count(*) FROM people WHERE id BETWEEN :id AND :id + 99", 1, []string{"id: ref: people.id"}},
		{"INSERT INTO people (id, email) VALUES ($1, $2)", "INSERT INTO people (id, email) VALUES (:id, :email)", 1, []string{"id: next: people.id", "email: string: [10, 30]"}},
		{"UPDATE people SET email = ? WHERE id = ?", "UPDATE people SET email = :email WHERE id = :id", 1, []string{"email: string: [10, 30]", "id: ref: people.id"}},
		{"SELECT email FROM people WHERE id = $1 OR id = $1 LIMIT $2", "SELECT email FROM people WHERE id = :id OR id = :id LIMIT :limit", 1, []string{"id: ref: people.id", "limit: uniform: [1, 100]"}},
	} {
		got, params := typeParams(tc.in, tables, tc.rows)
		var ps []string
		for _, p := range params {
			ps = append(ps, p.name+": "+p.gen)
		}
		if got != tc.want || strings.Join(ps, "; ") != strings.Join(tc.params, "; ") {
			t.Errorf("%s:\n got %s %v\nwant %s %v", tc.in, got, ps, tc.want, tc.params)
		}
	}
}

// A statement's text comes from the server, written by whoever ran it: no text makes capture
// panic, and every placeholder becomes a parameter declared once.
func FuzzStatementText(f *testing.F) {
	for _, s := range []string{"SELECT c FROM people WHERE id = $1", "SELECT COUNT ( * ) FROM `people` WHERE id BETWEEN ? AND ?",
		"INSERT INTO people VALUES ($1, $2)", "UPDATE people SET email = ? WHERE id IN (...)", "INSERT INTO people (id, email) VALUES ((?), ?)"} {
		f.Add(s, int64(10), int64(20))
	}
	people := &table{name: "people", rows: 100, columns: []*column{
		{name: "id", portable: "bigint", gen: "sequence: 1", genKind: "sequence"},
		{name: "email", portable: "varchar", length: 80, gen: "string: [10, 30]", genKind: "string"},
	}}
	f.Fuzz(func(t *testing.T, text string, calls, rows int64) {
		txns, _ := toTransactions([]dialect.StatementStat{{Text: text, Calls: calls, Rows: rows}}, []*table{people}, 5, false)
		for _, x := range txns {
			seen := map[string]bool{}
			for _, p := range x.params {
				if seen[p.name] || !strings.Contains(x.sql, ":"+p.name) {
					t.Fatalf("%q: parameter %s declared twice or unused in %q", text, p.name, x.sql)
				}
				seen[p.name] = true
			}
		}
	})
}

// What MySQL's and MariaDB's digests do to a statement, undone: the texts a client can run.
func TestFromDigest(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"EXECUTE UPDATE stock SET s_quantity = ? WHERE s_i_id = ?", "UPDATE stock SET s_quantity = ? WHERE s_i_id = ?"},
		{"INSERT INTO new_order ( no_o_id , no_d_id , no_w_id ) VALUES (...)", "INSERT INTO new_order ( no_o_id , no_d_id , no_w_id ) VALUES (?, ?, ?)"},
		{"UPDATE customer SET c_balance = c_balance + CAST ( ? AS DECIMAL (...) )", "UPDATE customer SET c_balance = c_balance + CAST ( ? AS DECIMAL(30,6) )"},
		{"UPDATE order_line SET ol_delivery_d = NOW WHERE ol_w_id = ?", "UPDATE order_line SET ol_delivery_d = CURRENT_TIMESTAMP WHERE ol_w_id = ?"},
		{"SELECT NOW()", "SELECT NOW()"},
		{"SELECT COUNT ( DISTINCTROW s_i_id ) FROM stock", "SELECT COUNT ( DISTINCT s_i_id ) FROM stock"},
		{"INSERT INTO t (a) VALUES (...) /* , ... */", "INSERT INTO t (a) VALUES (...) /* , ... */"},
	} {
		if got := fromDigest(tc.in); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.in, got, tc.want)
		}
	}
}

// A composite key whose rows are every combination of its columns' values is laid out as that
// combination (TPC-C's customer: 1 warehouse x 10 districts x 3000 customers); one with a gap
// or fewer rows keeps a single sequence column.
func TestCrossProductKeys(t *testing.T) {
	key := func(name string, lo, hi int64) *column {
		return &column{name: name, portable: "int", profile: profile{distinct: hi - lo + 1, min: fmt.Sprint(lo), max: fmt.Sprint(hi)}}
	}
	customer := &table{name: "customer", rows: 30000, primaryKey: []string{"c_w_id", "c_d_id", "c_id"},
		columns: []*column{key("c_w_id", 1, 1), key("c_d_id", 1, 10), key("c_id", 1, 3000)}}
	if !crossProduct(customer) {
		t.Fatal("customer's key not laid out as a cross product")
	}
	for i, want := range []string{"sequence: 1, every: 30000, cycle: 1", "sequence: 1, every: 3000, cycle: 10", "sequence: 1, every: 1, cycle: 3000"} {
		if got := customer.columns[i].gen; got != want {
			t.Errorf("%s: %s, want %s", customer.columns[i].name, got, want)
		}
	}
	if got := paramGen(customer, customer.columns[2]); got != "uniform: [1, 3000]" {
		t.Errorf("a parameter compared with c_id draws %s, want its range", got)
	}
	partial := &table{name: "order_line", rows: 29000, primaryKey: []string{"w", "o"}, columns: []*column{key("w", 1, 10), key("o", 1, 3000)}}
	if crossProduct(partial) {
		t.Error("29,000 rows of 10 x 3000 keys laid out as every combination")
	}
}

// A server that keeps no statement statistics: the error names the setting that turns them on
// and --top 0, which captures the tables alone, with a lookup per table to edit.
func TestCaptureWithoutStatistics(t *testing.T) {
	ctx := context.Background()
	c := testserver.Conn(t, "postgres")
	seed(t, ctx, c)
	if err := c.Exec(ctx, "DROP EXTENSION pg_stat_statements"); err != nil {
		t.Fatal(err)
	}
	_, _, err := Capture(ctx, c, Options{Name: "people", Top: 20})
	var none *NoStatisticsError
	if !errors.As(err, &none) || !strings.Contains(err.Error(), "shared_preload_libraries") || !strings.Contains(err.Error(), "--top 0") {
		t.Fatalf("error %v: want the setting named and --top 0 offered", err)
	}
	out, summary, err := Capture(ctx, c, Options{Name: "people", Top: 0})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "SELECT * FROM people WHERE id = :id") || !strings.Contains(summary, "no statements read") {
		t.Errorf("--top 0: want a key lookup per table and the summary saying so; got %q\n%s", summary, out)
	}
}
