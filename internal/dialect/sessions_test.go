package dialect

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/testserver"
)

// Each engine's activity rows fold into the category that means the same everywhere.
func TestCategories(t *testing.T) {
	tests := []struct {
		name, got, want string
	}{
		{"pg idle", cat(pgCategory("idle", "Client", "ClientRead")), result.WaitClient},
		{"pg idle in transaction", cat(pgCategory("idle in transaction", "Client", "ClientRead")), result.WaitClient},
		{"pg running", cat(pgCategory("active", "", "")), result.WaitOnCPU},
		{"pg WAL sync, 17's spelling", cat(pgCategory("active", "IO", "WalSync")), result.WaitLogFlush},
		{"pg WAL sync, 15's spelling", cat(pgCategory("active", "IO", "WALSync")), result.WaitLogFlush},
		{"pg waiting for another's WAL flush", cat(pgCategory("active", "LWLock", "WALWrite")), result.WaitLogFlush},
		{"pg page read", cat(pgCategory("active", "IO", "DataFileRead")), result.WaitDataRead},
		{"pg relation extension", cat(pgCategory("active", "IO", "DataFileExtend")), result.WaitDataWrite},
		{"pg row lock", cat(pgCategory("active", "Lock", "transactionid")), result.WaitRowLock},
		{"pg buffer mapping", cat(pgCategory("active", "LWLock", "BufferMapping")), result.WaitLatch},
		{"pg sending rows", cat(pgCategory("active", "Client", "ClientWrite")), result.WaitNetwork},
		{"pg commit waiting for its standby", cat(pgCategory("active", "IPC", "SyncRep")), result.WaitLogFlush},
		{"pg sleep", cat(pgCategory("active", "Timeout", "PgSleep")), result.WaitOther},
		{"innodb row lock wins over the state", cat(innodbCategory("Execute", "updating", "", "", "LOCK WAIT")), result.WaitRowLock},
		{"innodb idle", cat(innodbCategory("Sleep", "", "", "", "")), result.WaitClient},
		{"mysql commit", cat(innodbCategory("Execute", "waiting for handler commit", "", "", "")), result.WaitLogFlush},
		{"mariadb commit", cat(innodbCategory("Execute", "Commit", "", "", "")), result.WaitLogFlush},
		{"redo write in progress", cat(innodbCategory("Execute", "", "wait/io/file/innodb/innodb_log_file", "sync", "")), result.WaitLogFlush},
		{"data file read", cat(innodbCategory("Execute", "", "wait/io/file/innodb/innodb_data_file", "read", "")), result.WaitDataRead},
		{"data file write", cat(innodbCategory("Execute", "", "wait/io/file/innodb/innodb_data_file", "write", "")), result.WaitDataWrite},
		{"mutex", cat(innodbCategory("Execute", "", "wait/synch/mutex/innodb/trx_sys_mutex", "lock", "")), result.WaitLatch},
		{"metadata lock state", cat(innodbCategory("Query", "Waiting for table metadata lock", "", "", "")), result.WaitLatch},
		{"sending", cat(innodbCategory("Execute", "Sending to client", "", "", "")), result.WaitNetwork},
		{"executing", cat(innodbCategory("Execute", "executing", "", "", "")), result.WaitOnCPU},
		{"handler calls are the statement's work", cat(innodbCategory("Execute", "", "wait/io/table/sql/handler", "fetch", "")), result.WaitOnCPU},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, tc.got, tc.want)
		}
	}
}

func cat(category, _ string) string { return category }

// On each engine, a session idle between statements reads as client time and one blocked by
// another transaction's row lock as a row lock wait: the sampler's two clearest cases, made on a
// real server.
func TestSessionsOnRealServers(t *testing.T) {
	for _, kind := range []string{"postgres", "mariadb", "mysql"} {
		t.Run(kind, func(t *testing.T) {
			tg := testserver.Database(t, kind)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			conns := make([]sqldb.Conn, 3) // sampler, lock holder, blocked
			for i := range conns {
				c, err := sqldb.Open(ctx, tg)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				conns[i] = c
			}
			sampler, holder, blocked := conns[0], conns[1], conns[2]
			view := SamplerFor(sampler.Kind())
			for _, q := range []string{"DROP TABLE IF EXISTS fb_waits", "CREATE TABLE fb_waits (id INT PRIMARY KEY, v INT)", "INSERT INTO fb_waits VALUES (1, 0)"} {
				if err := holder.Exec(ctx, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			holderID, err1 := view.SessionID(ctx, holder)
			blockedID, err2 := view.SessionID(ctx, blocked)
			if err1 != nil || err2 != nil || holderID == blockedID {
				t.Fatalf("session ids %d, %d: %v, %v", holderID, blockedID, err1, err2)
			}
			for _, q := range []string{"BEGIN", "UPDATE fb_waits SET v = 1 WHERE id = 1"} {
				if err := holder.Exec(ctx, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			done := make(chan error, 1)
			go func() { done <- blocked.Exec(ctx, "UPDATE fb_waits SET v = 2 WHERE id = 1") }()
			got := waitFor(ctx, t, view, sampler, []int64{holderID, blockedID}, map[int64]string{holderID: result.WaitClient, blockedID: result.WaitRowLock})
			t.Logf("%s: %+v", kind, got)
			if err := holder.Exec(ctx, "COMMIT"); err != nil {
				t.Fatal(err)
			}
			if err := <-done; err != nil {
				t.Errorf("blocked update: %v", err)
			}
			if err := holder.Exec(ctx, "DROP TABLE fb_waits"); err != nil {
				t.Error(err)
			}
		})
	}
}

// waitFor reads the sessions until each has its wanted category (the blocked update needs a
// moment to reach its lock wait), and fails the test after 10 s.
func waitFor(ctx context.Context, t *testing.T, view SessionSampler, c sqldb.Conn, ids []int64, want map[int64]string) []Session {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, err := view.Sessions(ctx, c, ids)
		if err != nil {
			t.Fatal(err)
		}
		ok := len(got) == len(want)
		for _, s := range got {
			ok = ok && want[s.ID] == s.Category
		}
		if ok {
			return got
		}
		if time.Now().After(deadline) {
			trx, err := c.Query(ctx, "SELECT trx_mysql_thread_id, trx_state FROM information_schema.innodb_trx")
			t.Fatalf("sessions %+v, want categories %v (innodb_trx %v %v)", got, want, trx, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Each engine's statement accounts count a prepared statement's executions, as the workloads run
// them (server-side prepared, parameters bound), under one normalized text.
func TestStatementsOnRealServers(t *testing.T) {
	for _, kind := range []string{"postgres", "mariadb", "mysql"} {
		t.Run(kind, func(t *testing.T) {
			ctx, c := realConn(t, kind, time.Minute)
			for _, q := range []string{"DROP TABLE IF EXISTS fb_stmts", "CREATE TABLE fb_stmts (id INT PRIMARY KEY, v INT)", "INSERT INTO fb_stmts VALUES (1, 10), (2, 20)"} {
				if err := c.Exec(ctx, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			defer func() { _ = c.Exec(context.Background(), "DROP TABLE fb_stmts") }()
			src := StatementsFor(c.Kind())
			calls := func() int64 {
				stats, err := src.Statements(ctx, c)
				if err != nil {
					t.Fatal(err)
				}
				var n int64
				for _, s := range stats {
					if strings.Contains(s.Text, "fb_stmts") && strings.Contains(strings.ToUpper(s.Text), "SELECT") {
						n += s.Calls
					}
				}
				return n
			}
			st, err := c.Prepare(ctx, "SELECT v FROM fb_stmts WHERE id = ?")
			if err != nil {
				t.Fatal(err)
			}
			before := calls() // MySQL counts the prepare under the statement's digest too
			for i := range 50 {
				if n, err := st.Query(ctx, 1+i%2); err != nil || n != 1 {
					t.Fatalf("execution %d: %d rows, %v", i, n, err)
				}
			}
			if got := calls() - before; got != 50 {
				t.Errorf("%d executions counted, want 50", got)
			}
		})
	}
}
