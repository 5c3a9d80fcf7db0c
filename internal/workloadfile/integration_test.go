package workloadfile_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/fingerprint"
	"github.com/fairbench/fairbench/internal/job"
	"github.com/fairbench/fairbench/internal/randgen"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/runner"
	"github.com/fairbench/fairbench/internal/runspec"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/testserver"
	"github.com/fairbench/fairbench/internal/workload"
	"github.com/fairbench/fairbench/internal/workload/workloadtest"

	_ "github.com/fairbench/fairbench/internal/workload/all"
)

func TestMain(m *testing.M) { testserver.Main(m) }

const shop = "../../examples/workloads/shop.yaml"

var shopTables = []string{"customers", "products", "orders", "order_lines"}

// The shop example on every engine through the command line's path: the same rows loaded (equal
// content checksums and the same indexes), every transaction run without an error, the data
// check passed, and cleanup leaving nothing.
func TestShopOnEveryEngine(t *testing.T) {
	prints := map[string]*result.Dataset{}
	answers := map[string][]result.Answer{}
	for _, kind := range []string{"postgres", "mariadb", "mysql"} {
		t.Run(kind, func(t *testing.T) {
			tg := testserver.Database(t, kind)
			j := workloadtest.Job(t, tg, shop, map[string]string{"scale": "1"}, 7)
			workloadtest.Prepare(t, j, 2)
			c := workloadtest.Conn(t, tg)
			fp, err := fingerprint.Take(context.Background(), c)
			if err != nil {
				t.Fatal(err)
			}
			prints[kind] = fp
			answers[kind] = j.Workload.(workload.Answerer).Answers(context.Background(), c)
			res := workloadtest.Run(t, j, 4, 2*time.Second)
			for _, k := range []string{"browse", "search", "place_order", "pay"} {
				if bk := res.ByKind[k]; bk == nil || bk.Transactions == 0 || bk.Errors > 0 {
					t.Errorf("transaction %s: %+v", k, bk)
				}
			}
			if res.Queries.Write == 0 || res.Queries.Read == 0 {
				t.Errorf("queries %+v: want reads and writes", res.Queries)
			}
			checkStatementTimes(t, res)
			checkVerdicts(t, j, "rows kept", "stock_not_negative", "lines_have_orders")
			workloadtest.PrepareAgainRefused(t, j, 1)
			workloadtest.Cleanup(t, j, c, shopTables...)
		})
	}
	pg := prints["postgres"]
	for kind, fp := range prints {
		if pg == nil || fp == nil {
			continue
		}
		if !slices.Equal(fp.Tables, pg.Tables) {
			t.Errorf("%s loaded %+v, postgres %+v: want the same rows", kind, fp.Tables, pg.Tables)
		}
		if !slices.Equal(fp.Indexes, pg.Indexes) {
			t.Errorf("%s has indexes %v, postgres %v", kind, fp.Indexes, pg.Indexes)
		}
		if !slices.Equal(withoutPlans(t, answers[kind]), withoutPlans(t, answers["postgres"])) || len(answers[kind]) != 2 {
			t.Errorf("%s answered %+v, postgres %+v: want the same answers to the two reads", kind, answers[kind], answers["postgres"])
		}
	}
}

// The same statements on the same rows, answered otherwise (a collation), and one that only
// PostgreSQL takes: the answers say which .
func TestAnswersDiffer(t *testing.T) {
	got := map[string][]result.Answer{}
	for _, kind := range []string{"postgres", "mariadb"} {
		tg := testserver.Database(t, kind)
		j := workloadtest.Job(t, tg, "testdata/portability.yaml", nil, 1)
		workloadtest.Prepare(t, j, 1)
		c := workloadtest.Conn(t, tg)
		got[kind] = j.Workload.(workload.Answerer).Answers(context.Background(), c)
		if len(got[kind]) != 3 {
			t.Fatalf("%s: %d answers, want one per read statement (3): %+v", kind, len(got[kind]), got[kind])
		}
	}
	pg, my := got["postgres"], got["mariadb"]
	for i, name := range []string{"sorted", "exact"} {
		if pg[i].Transaction != name || pg[i].Error != "" || my[i].Error != "" {
			t.Fatalf("%s: %+v / %+v", name, pg[i], my[i])
		}
		if pg[i].Checksum == my[i].Checksum {
			t.Errorf("%s: both engines answered %s: want the collation's difference to show", name, pg[i].Checksum)
		}
	}
	if pg[2].Error != "" || my[2].Error == "" {
		t.Errorf("regex: postgres %+v, mariadb %+v: want it answered on PostgreSQL and MariaDB's error named", pg[2], my[2])
	}
	t.Logf("mariadb on ~: %s", my[2].Error)
}

// The other examples on every engine: loaded alike (equal content checksums), answering alike,
// and run without an error.
func TestExamplesOnEveryEngine(t *testing.T) {
	for _, file := range []string{"../../examples/workloads/kv.yaml", "../../examples/workloads/timeseries.yaml"} {
		sums := map[string][]result.DatasetTable{}
		answers := map[string][]result.Answer{}
		for _, kind := range []string{"postgres", "mariadb", "mysql"} {
			tg := testserver.Database(t, kind)
			j := workloadtest.Job(t, tg, file, nil, 3)
			workloadtest.Prepare(t, j, 2)
			c := workloadtest.Conn(t, tg)
			fp, err := fingerprint.Take(context.Background(), c)
			if err != nil {
				t.Fatal(err)
			}
			sums[kind] = fp.Tables
			answers[kind] = j.Workload.(workload.Answerer).Answers(context.Background(), c)
			res := workloadtest.Run(t, j, 2, time.Second)
			if res.Errors > 0 {
				t.Errorf("%s on %s: %d errors", file, kind, res.Errors)
			}
		}
		for _, kind := range []string{"mariadb", "mysql"} {
			if !slices.Equal(sums[kind], sums["postgres"]) {
				t.Errorf("%s: %s loaded %+v, postgres %+v", file, kind, sums[kind], sums["postgres"])
			}
			if !slices.Equal(withoutPlans(t, answers[kind]), withoutPlans(t, answers["postgres"])) {
				t.Errorf("%s: %s answered %+v, postgres %+v", file, kind, answers[kind], answers["postgres"])
			}
		}
	}
}

// withoutPlans is answers with their plans taken off, which every engine words otherwise (its own
// index names, its own join order): each answer must have one.
func withoutPlans(t *testing.T, as []result.Answer) []result.Answer {
	t.Helper()
	out := make([]result.Answer, len(as))
	for i, a := range as {
		if a.Plan == "" && a.Error == "" {
			t.Errorf("answer %s #%d has no plan", a.Transaction, a.Statement)
		}
		a.Plan = ""
		out[i] = a
	}
	return out
}

// checkStatementTimes: the shop's seven timed statements (place_order's three and its COMMIT),
// each run at least once per transaction of its kind, each with a time; a statement fails only
// in an attempt that was retried (two place_orders may deadlock on one product) or errored.
func checkStatementTimes(t *testing.T, res *result.Result) {
	t.Helper()
	want := []string{"browse #1: SELECT", "search #1: SELECT", "place_order #1: INSERT", "place_order #2: INSERT",
		"place_order #3: UPDATE", "place_order: COMMIT", "pay #1: UPDATE"}
	if len(res.ClientStatements) != len(want) {
		t.Fatalf("client statements %+v, want %d", res.ClientStatements, len(want))
	}
	for i, st := range res.ClientStatements {
		kind, _, _ := strings.Cut(st.Label, " ")
		kind = strings.TrimSuffix(kind, ":")
		if !strings.HasPrefix(st.Label, want[i]) || st.Failed > res.Retries+res.Errors || st.MeanMS <= 0 || st.MaxMS < st.MeanMS {
			t.Errorf("statement %d: %+v, want %q..., timed, failed no more than the %d retries and %d errors",
				i, st, want[i], res.Retries, res.Errors)
		}
		if bk := res.ByKind[kind]; bk == nil || st.Executions < bk.Transactions {
			t.Errorf("%s ran %d times for %+v transactions", st.Label, st.Executions, bk)
		}
	}
}

// The statement options on every engine (testdata/bank.yaml): a balance read into :seen and the
// update that must still find it, a miss rolled back (so the money adds up after the run); a
// serializable transaction and one at the default level, each proving its level with its
// engine's own SQL and an expected row (a wrong level would roll back); think time paused.
func TestStatementOptionsOnEveryEngine(t *testing.T) {
	for _, kind := range []string{"postgres", "mariadb", "mysql"} {
		t.Run(kind, func(t *testing.T) {
			tg := testserver.Database(t, kind)
			j := workloadtest.Job(t, tg, "testdata/bank.yaml", nil, 5)
			workloadtest.Prepare(t, j, 1)
			c := workloadtest.Conn(t, tg)
			before := total(t, c)
			res := workloadtest.Run(t, j, 4, 2*time.Second)
			for _, k := range []string{"transfer", "strict", "relaxed"} {
				if bk := res.ByKind[k]; bk == nil || bk.Transactions == 0 || bk.Errors > 0 {
					t.Errorf("transaction %s: %+v", k, bk)
				}
			}
			for _, k := range []string{"strict", "relaxed"} {
				if bk := res.ByKind[k]; bk != nil && bk.Rollbacks > 0 {
					t.Errorf("transaction %s rolled back %d times: its isolation level was not the one it checks", k, bk.Rollbacks)
				}
			}
			if after := total(t, c); after != before {
				t.Errorf("the balances add up to %s after the run, %s before: a transfer's missed expectation was not undone", after, before)
			}
			checkVerdicts(t, j, "rows kept", "no_overdraft", "accounts_kept")
			// A check that fails names itself and what it found: an overdraft made by hand.
			workloadtest.Exec(t, c, "UPDATE accounts SET balance = -5 WHERE id = 7")
			dc, err := j.Check(context.Background(), nil)
			if err != nil || dc.Passed || dc.Verdicts[1].OK || !strings.Contains(dc.Verdicts[1].Detail, "returned 1, not 0") {
				t.Errorf("check after an overdraft: %+v, %v: want no_overdraft failed, returning 1", dc, err)
			}
			if bk := res.ByKind["transfer"]; bk != nil {
				t.Logf("%s: %d transfers, %d rolled back on a missed expectation, %d retried", kind, bk.Transactions, bk.Rollbacks, bk.Retries)
			}
			// Each transfer statement timed; a miss is its statement's failure.
			if len(res.ClientStatements) != 8 {
				t.Fatalf("client statements %+v: want transfer's three and COMMIT, strict's, relaxed's two and COMMIT", res.ClientStatements)
			}
			// relaxed's second statement runs by chance, in about a quarter of its runs.
			if n, by := res.ClientStatements[6].Executions, res.ByKind["relaxed"].Transactions; by < 100 || n < by/8 || n > by/2 {
				t.Errorf("relaxed's statement with chance 0.25 ran %d times in %d transactions", n, by)
			}
			if miss := res.ClientStatements[1].Failed; miss < res.ByKind["transfer"].Rollbacks {
				t.Errorf("transfer's update failed %d times for %d rollbacks", miss, res.ByKind["transfer"].Rollbacks)
			}
		})
	}
}

// checkVerdicts runs the job's data check: it must pass, with these verdicts in this order.
func checkVerdicts(t *testing.T, j *job.Job, names ...string) {
	t.Helper()
	dc, err := j.Check(context.Background(), nil)
	if err != nil || !dc.Passed || len(dc.Verdicts) != len(names) {
		t.Fatalf("check: %+v, %v: want %v passed", dc, err, names)
	}
	for i, v := range dc.Verdicts {
		if v.Name != names[i] || !v.OK {
			t.Errorf("verdict %d: %+v, want %s passed", i, v, names[i])
		}
	}
}

func total(t *testing.T, c sqldb.Conn) string {
	t.Helper()
	rows, err := c.Query(context.Background(), "SELECT sum(balance) FROM accounts")
	if err != nil {
		t.Fatal(err)
	}
	return rows[0][0]
}

// existingFile is a workload file on a table the user made: a read, and (with write) an update.
const existingFile = `name: mine
existing_tables: true
tables:
  - name: user_accounts
transactions:
  - name: look
    params: {a: {uniform: [1, 50]}}
    statements:
      - sql: SELECT balance FROM user_accounts WHERE id = :a
        expect: {rows: 1}
`

// A workload file on the user's own tables (existing_tables: true), on every engine: reads run
// as they are; a file that writes is refused unless --write-existing-tables on says it may;
// prepare and cleanup create, record and drop nothing; a missing table is refused by name.
func TestExistingTablesOnEveryEngine(t *testing.T) {
	dir := t.TempDir()
	reads, writes := filepath.Join(dir, "reads.yaml"), filepath.Join(dir, "writes.yaml")
	must(t, os.WriteFile(reads, []byte(existingFile), 0o600))
	must(t, os.WriteFile(writes, []byte(existingFile+"      - UPDATE user_accounts SET balance = balance + 1 WHERE id = :a\n"), 0o600))
	ctx := context.Background()
	for _, kind := range []string{"postgres", "mariadb", "mysql"} {
		t.Run(kind, func(t *testing.T) {
			tg := testserver.Database(t, kind)
			c := workloadtest.Conn(t, tg)
			missing := workloadtest.Job(t, tg, reads, nil, 1)
			var de *workload.DataError
			if _, err := missing.Guard(ctx); !errors.As(err, &de) || !strings.Contains(err.Error(), "table user_accounts is not on this target") {
				t.Fatalf("run before the table exists: %v, want it refused by name", err)
			}
			workloadtest.Exec(t, c, "CREATE TABLE user_accounts (id int PRIMARY KEY, balance int NOT NULL)")
			for i := 1; i <= 50; i++ {
				workloadtest.Exec(t, c, fmt.Sprintf("INSERT INTO user_accounts VALUES (%d, 0)", i))
			}
			j := workloadtest.Job(t, tg, reads, nil, 1)
			if err := j.Prepare(ctx, j.Env(1, false, nil, nil)); err != nil {
				t.Fatalf("prepare on existing tables: %v", err)
			}
			if r := workloadtest.Run(t, j, 2, time.Second); r.Workload.Title != "mine" || r.WorkloadID() != "mine" {
				t.Errorf("the result names the file %q (title %q), want its name: mine", r.WorkloadID(), r.Workload.Title)
			}

			_, err := job.New(tg, writes, nil, randgen.DefaultConfig("uniform"), 1)
			if !errors.As(err, &de) || !strings.Contains(err.Error(), "give --write-existing-tables on") {
				t.Fatalf("a writing file without the flag: %v, want it refused", err)
			}
			jw := workloadtest.Job(t, tg, writes, map[string]string{"write-existing-tables": "on"}, 1)
			res := workloadtest.Run(t, jw, 2, time.Second)
			// Each client may commit one transaction the measured window does not count (it ended
			// in flight), no more.
			got, _ := strconv.ParseInt(workloadtest.Rows(t, c, "SELECT sum(balance) FROM user_accounts")[0][0], 10, 64)
			if got < res.Transactions || got > res.Transactions+2 {
				t.Errorf("the balances add up to %d after %d counted transactions that each add 1 (2 clients)", got, res.Transactions)
			}
			if err := jw.Cleanup(ctx, jw.Env(1, false, nil, nil)); err != nil {
				t.Fatal(err)
			}
			workloadtest.Rows(t, c, "SELECT count(*) FROM user_accounts") // still there
			if _, err := c.Query(ctx, "SELECT count(*) FROM "+workload.DatasetTable); !sqldb.IsUndefinedTable(err) {
				t.Errorf("fairbench recorded a data set in the user's database: %v", err)
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// A retried transaction is the same kind of transaction again: writers that fail to serialize often
// still make half of the transactions drawn (committed, or failed after their last try), as
// their weight says.
// Drawing a new transaction on each retry made them about a third (a kind that conflicts more
// was run less, and by how much depended on the engine). PostgreSQL, whose serializable
// isolation fails concurrent updates of one row most readily.
func TestRetryRunsTheSameTransaction(t *testing.T) {
	tg := testserver.Database(t, "postgres")
	j := workloadtest.Job(t, tg, "testdata/hotrow.yaml", nil, 5)
	workloadtest.Prepare(t, j, 1)
	res := workloadtest.Run(t, j, 8, 2*time.Second)
	w, r := res.ByKind["write"], res.ByKind["read"]
	if w == nil || r == nil || res.Retries < 100 {
		t.Fatalf("by kind %+v, %d retries: want both kinds and at least 100 retries to test with", res.ByKind, res.Retries)
	}
	// A write that ran out of tries is an error of its kind: still a write drawn.
	share := float64(w.Transactions+w.Errors) / float64(w.Transactions+w.Errors+r.Transactions+r.Errors)
	t.Logf("write %d, read %d transactions (write %.1f%%), %d retries, %d errors", w.Transactions, r.Transactions, 100*share, res.Retries, res.Errors)
	if share < 0.45 || share > 0.55 {
		t.Errorf("writes are %.1f%% of the transactions drawn with %d retries, want 45-55%% (their weight is half)", 100*share, res.Retries)
	}
}

// readOnlyForms are statements that read by their first word and write all the same: each is
// refused before the run on existing tables without --write-existing-tables.
var readOnlyForms = []string{
	"WITH x AS (UPDATE user_accounts SET balance = 0 WHERE id = :a RETURNING id) SELECT id FROM x",
	"SELECT balance INTO stolen_copy FROM user_accounts WHERE id = :a",
	"MERGE INTO user_accounts u USING (SELECT 1 AS id) s ON u.id = s.id AND s.id = :a WHEN MATCHED THEN UPDATE SET balance = 0",
	"CALL zero_all(:a)",
	"DO $$BEGIN UPDATE user_accounts SET balance = :a END$$",
	"SELECT set_config('default_transaction_read_only', 'off', false), :a",
}

// zeroAll is a function that writes, called by a statement that reads by every word: only the
// server's read-only session can refuse it.
var zeroAll = map[string]string{
	"postgres": "CREATE FUNCTION zero_all(k int) RETURNS int AS $$ BEGIN UPDATE user_accounts SET balance = 0; RETURN k; END $$ LANGUAGE plpgsql",
	"mysql":    "CREATE FUNCTION zero_all(k int) RETURNS int DETERMINISTIC MODIFIES SQL DATA BEGIN UPDATE user_accounts SET balance = 0; RETURN k; END",
}

// Existing tables without --write-existing-tables stay as they were on every engine: each form
// that may write is refused before the run, and a write hidden in a function is refused by the
// server in the run, in the file's checks and in the answers compare records; the rows' sum is
// the same after all of it and no table was created.
func TestExistingTablesReadOnlyOnEveryEngine(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	head := strings.TrimSuffix(existingFile, "      - sql: SELECT balance FROM user_accounts WHERE id = :a\n        expect: {rows: 1}\n")
	for _, kind := range []string{"postgres", "mariadb", "mysql"} {
		t.Run(kind, func(t *testing.T) {
			tg := testserver.Database(t, kind)
			c := workloadtest.Conn(t, tg)
			workloadtest.Exec(t, c, "CREATE TABLE user_accounts (id int PRIMARY KEY, balance int NOT NULL)")
			for i := 1; i <= 50; i++ {
				workloadtest.Exec(t, c, fmt.Sprintf("INSERT INTO user_accounts VALUES (%d, %d)", i, 7*i))
			}
			workloadtest.Exec(t, c, zeroAll[cmp.Or(map[string]string{"mariadb": "mysql"}[kind], kind)])
			sum := func() string { return workloadtest.Rows(t, c, "SELECT sum(balance) FROM user_accounts")[0][0] }
			before := sum()
			for i, form := range readOnlyForms {
				path := filepath.Join(dir, fmt.Sprintf("%s-%d.yaml", kind, i))
				must(t, os.WriteFile(path, []byte(head+"      - "+strconv.Quote(form)+"\n"), 0o600))
				_, err := job.New(tg, path, nil, randgen.DefaultConfig("uniform"), 1)
				if err == nil || !strings.Contains(err.Error(), "give --write-existing-tables on") {
					t.Errorf("%s: %v, want it refused before the run", form, err)
				}
			}
			hidden := filepath.Join(dir, kind+"-hidden.yaml")
			must(t, os.WriteFile(hidden, []byte(head+"      - SELECT zero_all(:a)\nchecks:\n  - {name: sneaky, sql: SELECT zero_all(1), equals: 1}\n"), 0o600))
			j := workloadtest.Job(t, tg, hidden, nil, 1)
			_, err := j.Run(ctx, runner.Config{Threads: 2, Duration: time.Second, MaxTries: runspec.DefaultMaxTries})
			if err == nil || !strings.Contains(err.Error(), "the server refused a write to the existing tables") {
				t.Errorf("a SELECT of a function that writes: %v, want the server's read-only refusal", err)
			}
			vs, err := j.Workload.(workload.Verdicter).Verdicts(ctx, j.Env(1, false, nil, nil))
			if err != nil || len(vs) != 1 || vs[0].OK {
				t.Errorf("the check that calls it: %+v, %v, want it failed", vs, err)
			}
			answers := j.Workload.(workload.Answerer).Answers(ctx, c)
			if len(answers) != 1 || answers[0].Error == "" {
				t.Errorf("the answer that calls it: %+v, want the server's refusal", answers)
			}
			if after := sum(); after != before {
				t.Errorf("the balances add up to %s after, %s before", after, before)
			}
			if _, err := c.Query(ctx, "SELECT count(*) FROM stolen_copy"); !sqldb.IsUndefinedTable(err) {
				t.Errorf("a table was created in the user's database: %v", err)
			}
			workloadtest.Exec(t, c, "INSERT INTO user_accounts VALUES (51, 0)") // c itself stays writable
		})
	}
}
