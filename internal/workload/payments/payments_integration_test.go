package payments

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/job"
	"github.com/fairbench/fairbench/internal/randgen"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/runner"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/testserver"
	"github.com/fairbench/fairbench/internal/workload"
	"github.com/fairbench/fairbench/internal/workload/workloadtest"
)

func TestMain(m *testing.M) { testserver.Main(m) }

func TestMoneyText(t *testing.T) {
	for _, tc := range []struct {
		text  string
		cents int64
		back  string
	}{
		{"1000.00", 100000, "1000.00"}, {"7", 700, "7.00"}, {"-12.5", -1250, "-12.50"}, {"0.05", 5, "0.05"},
		{"-0.01", -1, "-0.01"}, {".5", 50, "0.50"}, {"10000000000.00", 1000000000000, "10000000000.00"}, {"3.1000", 310, "3.10"},
	} {
		c, err := cents(tc.text)
		if err != nil || c != tc.cents {
			t.Errorf("cents(%q) = %d, %v; want %d", tc.text, c, err, tc.cents)
		}
		if got := money(c); got != tc.back {
			t.Errorf("money(%d) = %q, want %q", c, got, tc.back)
		}
	}
	for _, bad := range []string{"x", "1.001", "1.2.3", "", "-", "1.x"} {
		if c, err := cents(bad); err == nil {
			t.Errorf("cents(%q) = %d, want an error", bad, c)
		}
	}
}

func TestTokens(t *testing.T) {
	seen := map[string]bool{}
	for u := int64(1); u <= 1000; u++ {
		tok := string(appendToken(nil, u))
		if len(tok) != 32 || strings.Trim(tok, "0123456789abcdef") != "" {
			t.Fatalf("token of user %d = %q, want 32 hex digits", u, tok)
		}
		if seen[tok] {
			t.Fatalf("token of user %d repeats", u)
		}
		seen[tok] = true
		if again := string(appendToken(nil, u)); again != tok {
			t.Fatalf("token of user %d is not stable: %q then %q", u, tok, again)
		}
	}
}

func TestOptions(t *testing.T) {
	for _, tc := range []struct {
		set     map[string]string
		wantErr string
	}{
		{map[string]string{}, ""},
		{map[string]string{"accounts": "1"}, "--accounts must be at least 2"},
		{map[string]string{"banks": "0"}, "--banks must be at least 1"},
		{map[string]string{"deletes": "maybe"}, "--deletes must be on or off"},
		{map[string]string{"transfer": "proc"}, "--transfer must be routine or statements"},
		{map[string]string{"delete-every": "20"}, "--delete-every needs --transfer routine"},
		{map[string]string{"transfer": "routine", "delete-every": "-1"}, "--delete-every must be at least 0"},
		{map[string]string{"transfer": "routine", "delete-every": "20", "deletes": "on"}, "choose one"},
		{map[string]string{"transfer": "routine", "delete-every": "20"}, ""},
	} {
		_, err := job.New(sqldb.Target{Kind: sqldb.Postgres}, name, tc.set, randgen.DefaultConfig("uniform"), 1)
		if (err == nil) != (tc.wantErr == "") || err != nil && !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%v: error %v, want %q", tc.set, err, tc.wantErr)
		}
	}
}

func newJob(t *testing.T, tg sqldb.Target, set map[string]string) *job.Job {
	t.Helper()
	return workloadtest.Job(t, tg, name, set, 5)
}

// run uses 8 threads so that transfers on hot accounts conflict and get declined.
func run(t *testing.T, j *job.Job) *result.Result {
	t.Helper()
	return workloadtest.Run(t, j, 8, 1500*time.Millisecond)
}

func wantCheckError(t *testing.T, j *job.Job, what string, parts ...string) {
	t.Helper()
	err := j.Workload.Check(context.Background(), j.Env(1, false, nil, nil))
	if err == nil {
		t.Fatalf("check after %s passed, want it to fail", what)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Fatalf("check after %s: %v\nwant it to say %q", what, err, p)
		}
	}
}

func TestPaymentsOnRealServers(t *testing.T) {
	for _, kind := range testserver.Kinds() {
		t.Run(kind, func(t *testing.T) {
			tg := testserver.Database(t, kind)
			ctx := context.Background()
			j := newJob(t, tg, map[string]string{"accounts": "10000", "banks": "7"})
			workloadtest.Prepare(t, j, 2)
			c := workloadtest.Conn(t, tg)
			for _, tc := range []struct{ sql, want string }{
				{"SELECT COUNT(*) FROM users", "10000"},
				{"SELECT COUNT(*) FROM permissions WHERE permission = 'transfer'", "10000"},
				{"SELECT COUNT(DISTINCT bank_id) FROM accounts", "7"},
				{"SELECT SUM(balance) FROM accounts", "10000000.00"},
				{"SELECT COUNT(*) FROM transfers", "0"},
				{"SELECT value FROM payments_meta WHERE name = 'total'", "10000000.00"},
				{"SELECT COUNT(*) FROM auth_tokens WHERE user_id = 42 AND token = '" + string(appendToken(nil, 42)) + "'", "1"},
			} {
				if got := workloadtest.Rows(t, c, tc.sql)[0][0]; got != tc.want {
					t.Fatalf("%s = %s, want %s", tc.sql, got, tc.want)
				}
			}
			if err := j.Workload.Check(ctx, j.Env(1, false, nil, nil)); err != nil {
				t.Fatalf("check after prepare: %v", err)
			}

			res := run(t, j)
			if res.Retries == 0 && res.Errors == 0 && res.Queries.Read != 2*res.Transactions {
				t.Fatalf("%d reads for %d transfers, want 2 each", res.Queries.Read, res.Transactions)
			}
			// Declined transfers are rolled back, so the table holds the others, and the transfers
			// each thread finished after the measured window closed (not counted): at most 8.
			committed := res.Transactions - res.Rollbacks
			if got := atoi64(t, workloadtest.Rows(t, c, "SELECT COUNT(*) FROM transfers")[0][0]); got < committed || got > committed+8 {
				t.Fatalf("transfers has %d rows, want %d (transactions minus declines) to %d (with one more per thread)", got, committed, committed+8)
			}
			if k := res.ByKind["transfer"]; k == nil || k.Transactions != res.Transactions {
				t.Fatalf("by kind: %+v, want every transaction a transfer", res.ByKind)
			}
			if err := j.Workload.Check(ctx, j.Env(1, false, nil, nil)); err != nil {
				t.Fatalf("check after the run: %v", err)
			}
			checkAcks(t, j, c, res, committed)

			// Money moved between two accounts without a transfer: the total holds, the
			// per-account check names both accounts.
			workloadtest.Exec(t, c, "UPDATE accounts SET balance = balance - 5 WHERE id = 11")
			workloadtest.Exec(t, c, "UPDATE accounts SET balance = balance + 5 WHERE id = 12")
			wantCheckError(t, j, "moving money by hand", "2 accounts do not match their transfers", "account 11 has", "account 12 has")
			// Money created from nothing.
			workloadtest.Exec(t, c, "UPDATE accounts SET balance = balance + 5 WHERE id = 11")
			wantCheckError(t, j, "creating money", "money is not conserved", "expected 10000000.00", "1 accounts do not match")

			workloadtest.Cleanup(t, j, c, tableNames...)
		})
	}
}

// A few hot accounts: transfers conflict, balances run dry and get declined, and deletes
// remove transfers while others insert them; money must still be conserved.
func TestDeclinesAndDeletes(t *testing.T) {
	for _, kind := range testserver.Kinds() {
		t.Run(kind, func(t *testing.T) {
			tg := testserver.Database(t, kind)
			ctx := context.Background()
			j := newJob(t, tg, map[string]string{"accounts": "40", "banks": "2"})
			workloadtest.Prepare(t, j, 2)
			res := run(t, j)
			if res.Rollbacks == 0 {
				t.Fatalf("no declined transfer among %d on 40 accounts", res.Transactions)
			}
			if err := j.Workload.Check(ctx, j.Env(1, false, nil, nil)); err != nil {
				t.Fatalf("check after hot transfers: %v", err)
			}

			jd := newJob(t, tg, map[string]string{"accounts": "40", "banks": "2", "deletes": "on"})
			res = run(t, jd)
			del := res.ByKind["delete"]
			if del == nil || del.Transactions == 0 || res.ByKind["transfer"] == nil {
				t.Fatalf("by kind: %+v, want transfers and deletes", res.ByKind)
			}
			if share := float64(del.Transactions) / float64(res.Transactions); share < 0.05 || share > 0.15 {
				t.Fatalf("deletes are %.0f%% of transactions, want about 10%%", 100*share)
			}
			if err := jd.Workload.Check(ctx, jd.Env(1, false, nil, nil)); err != nil {
				t.Fatalf("check after deletes: %v", err)
			}
			c := workloadtest.Conn(t, tg)
			// Once transfers were deleted the total is what is left to check.
			workloadtest.Exec(t, c, "UPDATE accounts SET balance = balance - 1 WHERE id = 3")
			wantCheckError(t, jd, "destroying money", "money is not conserved")

			wrong := newJob(t, tg, map[string]string{"accounts": "41"})
			if _, err := wrong.Run(ctx, runner.Config{Threads: 1, Duration: 100 * time.Millisecond}); err == nil || !strings.Contains(err.Error(), "prepared with --accounts 40, not --accounts 41") {
				t.Fatalf("run with another --accounts: %v, want a refusal", err)
			}
		})
	}
}

func TestRefusesForeignTables(t *testing.T) {
	for _, kind := range testserver.Kinds() {
		t.Run(kind, func(t *testing.T) {
			tg := testserver.Database(t, kind)
			c := workloadtest.Conn(t, tg)
			workloadtest.Exec(t, c, "CREATE TABLE transfers (id int PRIMARY KEY, note varchar(20))")
			workloadtest.Exec(t, c, "INSERT INTO transfers VALUES (1, 'precious')")
			j := newJob(t, tg, map[string]string{"accounts": "100"})
			workloadtest.ForeignTableLeftAlone(t, c, j, "transfers", "banks", "SELECT note FROM transfers", "precious")
		})
	}
}

// The published study's shape on every engine: 4 round trips per transfer through the
// server-side routine, and every Nth operation of a client deleting a transfer it recorded (the
// study's N is 20; 5 here, so that a short run on a busy machine deletes many), which must really
// go: the table holds the committed transfers minus the deletes. Money is conserved.
func TestRoutineTransfersAndDeletes(t *testing.T) {
	const threads = 4
	for _, kind := range testserver.Kinds() {
		t.Run(kind, func(t *testing.T) {
			tg := testserver.Database(t, kind)
			ctx := context.Background()
			j := newJob(t, tg, map[string]string{"accounts": "2000", "banks": "50", "transfer": "routine", "delete-every": "5"})
			workloadtest.Prepare(t, j, 2)
			c := workloadtest.Conn(t, tg)
			res := workloadtest.Run(t, j, threads, 2*time.Second)
			tr, del := res.ByKind["transfer"], res.ByKind["delete"]
			if tr == nil || del == nil || del.Transactions <= threads {
				t.Fatalf("by kind: transfers %+v, deletes %+v: want more than %d deletes", tr, del, threads)
			}
			if share := float64(del.Transactions) / float64(res.Transactions); share > 0.21 {
				t.Errorf("deletes are %.1f%% of operations, want at most 1 in 5", 100*share)
			}
			// A transaction still running when the window closed is not counted but may commit:
			// one per thread either way. The deletes counted are more than that slack, so the
			// row count shows them.
			left := tr.Transactions - tr.Rollbacks - del.Transactions
			if got := atoi64(t, workloadtest.Rows(t, c, "SELECT COUNT(*) FROM transfers")[0][0]); got < left-threads || got > left+threads {
				t.Fatalf("transfers has %d rows, want %d±%d: %d committed transfers minus %d deletes", got, left, threads, tr.Transactions-tr.Rollbacks, del.Transactions)
			}
			if w := res.Wire; res.Rollbacks == 0 && res.Retries == 0 && w != nil {
				t.Logf("wire: %.2f round trips per operation (4 per transfer, 1 per delete)", w.RoundTripsPerTxn)
				if want := float64(4*tr.Transactions+del.Transactions) / float64(res.Transactions); w.RoundTripsPerTxn > want+0.2 {
					t.Errorf("%.2f round trips per operation on the wire, want %.2f", w.RoundTripsPerTxn, want)
				}
			}
			if err := j.Workload.Check(ctx, j.Env(1, false, nil, nil)); err != nil {
				t.Fatalf("check after the run: %v", err)
			}
			workloadtest.Cleanup(t, j, c, tableNames...)
			if st, err := routineState(ctx, c); err != nil || st != workload.Absent {
				t.Fatalf("after cleanup the routine is %v (%v), want it dropped", st, err)
			}
		})
	}
}

func atoi64(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("%q is not a number", s)
	}
	return n
}

// A transfer_funds routine someone else made is never replaced or dropped.
func TestForeignRoutineLeftAlone(t *testing.T) {
	for _, kind := range testserver.Kinds() {
		t.Run(kind, func(t *testing.T) {
			tg := testserver.Database(t, kind)
			ctx := context.Background()
			c := workloadtest.Conn(t, tg)
			if kind == "postgres" {
				workloadtest.Exec(t, c, "CREATE FUNCTION transfer_funds(a integer) RETURNS integer LANGUAGE sql AS 'SELECT 7'")
			} else {
				workloadtest.Exec(t, c, "CREATE PROCEDURE transfer_funds() SELECT 7")
			}
			j := newJob(t, tg, map[string]string{"accounts": "100"})
			for _, force := range []bool{false, true} {
				if err := j.Workload.Prepare(ctx, j.Env(1, force, nil, nil)); err == nil || !strings.Contains(err.Error(), "routine transfer_funds exists and was not created by fairbench") {
					t.Fatalf("prepare (force=%v) beside a foreign transfer_funds: %v, want a refusal", force, err)
				}
			}
			if err := j.Workload.Cleanup(ctx, j.Env(1, false, nil, nil)); err == nil || !strings.Contains(err.Error(), "left routine transfer_funds in place") {
				t.Fatalf("cleanup beside a foreign transfer_funds: %v", err)
			}
			if st, _ := routineState(ctx, c); st != workload.Foreign {
				t.Fatalf("the user's routine is %v after prepare and cleanup, want it untouched", st)
			}
		})
	}
}

// checkAcks: every transfer the clients saw committed was looked up and found (the transfers
// finished after the window add up to one per thread), and one that is not there is counted lost.
func checkAcks(t *testing.T, j *job.Job, c sqldb.Conn, res *result.Result, committed int64) {
	t.Helper()
	a := res.Availability
	if a == nil || a.Acks == nil || a.Acks.NotChecked != "" {
		t.Fatalf("availability %+v: want the acknowledged transfers checked", a)
	}
	if ack := a.Acks; ack.Acknowledged < committed || ack.Acknowledged > committed+8 || ack.Lost != 0 || ack.InDoubt != 0 {
		t.Fatalf("acks %+v: want %d to %d acknowledged, none lost or in doubt", ack, committed, committed+8)
	}
	top := atoi64(t, workloadtest.Rows(t, c, "SELECT MAX(id) FROM transfers")[0][0])
	if top < idFloor {
		t.Fatalf("largest transfer id %d: want a client-chosen id above 2^62", top)
	}
	// An id the client would have acknowledged that the table does not hold: counted lost.
	check, err := j.CheckAcks(context.Background(), []*workload.Acks{{Committed: []int64{top, top + 1}, InDoubt: []int64{top - 1}}}, nil, nil)
	if err != nil || check.Lost != 1 || len(check.LostExamples) != 1 || check.LostExamples[0] != top+1 || check.InDoubtFound != 1 {
		t.Fatalf("acknowledged %d (present) and %d (absent), in doubt %d (present): %+v, %v; want one lost, one in doubt found", top, top+1, top-1, check, err)
	}
}
