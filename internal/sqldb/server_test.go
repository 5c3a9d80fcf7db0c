package sqldb_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/engine"
	"github.com/fairbench/fairbench/internal/engine/discovery"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/testserver"
)

func TestMain(m *testing.M) { testserver.Main(m) }

// freeze stops every process of the server with SIGSTOP, as a hung or stopped server looks to
// a client: the kernel still accepts TCP connections, nothing answers. The returned function
// (also run at cleanup) resumes them.
func freeze(t *testing.T, srv *engine.Server) func() {
	t.Helper()
	pids := srv.PIDs()
	if len(pids) == 0 {
		t.Fatal("the server has no processes")
	}
	thawed := false
	thaw := func() {
		if thawed {
			return
		}
		thawed = true
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGCONT)
		}
	}
	t.Cleanup(thaw)
	for _, pid := range pids {
		// A process of the tree may have ended since it was listed (ESRCH): nothing to stop.
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil && err != syscall.ESRCH {
			thaw()
			t.Fatalf("SIGSTOP %d: %v", pid, err)
		}
	}
	// kill returns before the stop takes effect: a thread busy on the other CPU can still answer
	// a statement (MySQL once did, in 2 ms). Wait until every thread is seen stopped.
	deadline := time.Now().Add(2 * time.Second)
	for !allStopped(pids) {
		if time.Now().After(deadline) {
			thaw()
			t.Fatalf("the server's threads were not all stopped 2 s after SIGSTOP")
		}
		time.Sleep(5 * time.Millisecond)
	}
	return thaw
}

// allStopped reports whether every thread of every live process in pids is in state T (stopped),
// as /proc/PID/task/TID/stat says (a zombie or dead thread runs nothing either).
func allStopped(pids []int) bool {
	for _, pid := range pids {
		stats, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
		for _, path := range stats {
			b, err := os.ReadFile(path)
			if err != nil {
				continue // the thread ended
			}
			// The state follows the command name's closing parenthesis: "pid (comm) S ...".
			i := bytes.LastIndexByte(b, ')')
			if i < 0 || i+2 >= len(b) {
				continue
			}
			if st := b[i+2]; st != 'T' && st != 't' && st != 'Z' && st != 'X' {
				return false
			}
		}
	}
	return true
}

// withOption returns tg with one more DSN option, parsed as a user's DSN would be.
func withOption(t *testing.T, tg sqldb.Target, name, value string) sqldb.Target {
	t.Helper()
	q := url.Values{}
	for k, v := range tg.Params {
		q[k] = v
	}
	q.Set(name, value)
	u := url.URL{Scheme: string(tg.Kind), Host: fmt.Sprintf("%s:%d", tg.Host, tg.Port), Path: "/" + tg.Database,
		User: url.UserPassword(tg.User, tg.Password), RawQuery: q.Encode()}
	out, err := sqldb.ParseTarget(u.String())
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// within fails the test unless f returns within limit, and returns f's error.
func within(t *testing.T, limit time.Duration, what string, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- f() }()
	select {
	case err := <-done:
		t.Logf("%s returned after %v: %v", what, time.Since(start).Round(time.Millisecond), err)
		return err
	case <-time.After(limit):
		t.Fatalf("%s still blocked after %v", what, limit)
		return nil
	}
}

func TestConnectToStoppedServer(t *testing.T) {
	for _, kind := range testserver.Kinds() {
		t.Run(kind, func(t *testing.T) {
			base := testserver.Database(t, kind)
			tg := withOption(t, base, "connect_timeout", "1")
			freeze(t, testserver.Server(t, kind))
			err := within(t, 5*time.Second, "Open", func() error {
				c, err := sqldb.Open(context.Background(), tg)
				if err == nil {
					c.Close()
				}
				return err
			})
			var ce *sqldb.ConnectError
			if !errors.As(err, &ce) || ce.Reason != sqldb.NoAnswer {
				t.Fatalf("err = %v, want a ConnectError NoAnswer", err)
			}
			if !strings.Contains(err.Error(), "connect_timeout") {
				t.Errorf("the message does not say how to wait longer: %v", err)
			}
			// Ctrl-C while connecting, with a long connect_timeout: it ends within a second and
			// says it was interrupted.
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(200*time.Millisecond, cancel)
			err = within(t, 1500*time.Millisecond, "Open interrupted", func() error {
				c, err := sqldb.Open(ctx, withOption(t, base, "connect_timeout", "30"))
				if err == nil {
					c.Close()
				}
				return err
			})
			if !errors.As(err, &ce) || ce.Reason != sqldb.Interrupted || !strings.Contains(err.Error(), "interrupted while connecting") {
				t.Errorf("err = %v, want a ConnectError Interrupted that says so", err)
			}
		})
	}
}

// TestStatementOnStoppedServer: a statement blocked on a stopped server returns when its context
// ends (setup code) and when another goroutine closes the connection (how a run ends at --time
// plus its grace, with statements on a context that is never cancelled).
func TestStatementOnStoppedServer(t *testing.T) {
	for _, kind := range testserver.Kinds() {
		t.Run(kind, func(t *testing.T) {
			tg := testserver.Database(t, kind)
			ctx := context.Background()
			byCtx, err := sqldb.Open(ctx, tg)
			if err != nil {
				t.Fatal(err)
			}
			defer byCtx.Close()
			byClose, err := sqldb.Open(ctx, tg)
			if err != nil {
				t.Fatal(err)
			}
			stmt, err := byClose.Prepare(ctx, "SELECT 1")
			if err != nil {
				t.Fatal(err)
			}
			thaw := freeze(t, testserver.Server(t, kind))

			err = within(t, 3*time.Second, "Query with a 500ms context", func() error {
				qctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
				defer cancel()
				_, err := byCtx.Query(qctx, "SELECT 1")
				return err
			})
			if err == nil {
				t.Fatal("a statement on a stopped server succeeded")
			}

			blocked := make(chan error, 1)
			go func() {
				_, err := stmt.Query(context.WithoutCancel(ctx))
				blocked <- err
			}()
			time.Sleep(300 * time.Millisecond) // let it block in read
			select {
			case err := <-blocked:
				t.Fatalf("the statement returned before Close: %v", err)
			default:
			}
			closed := time.Now()
			if err := within(t, 2*time.Second, "Close", byClose.Close); err != nil {
				t.Logf("Close: %v", err)
			}
			select {
			case err := <-blocked:
				if err == nil {
					t.Fatal("the interrupted statement reported success")
				}
				t.Logf("statement ended %v after Close: %v", time.Since(closed).Round(time.Millisecond), err)
			case <-time.After(time.Second):
				t.Fatal("Close did not end the statement blocked on a stopped server within 1s")
			}
			thaw()
		})
	}
}

// TestWrongProtocol points each scheme at the other family's server.
func TestWrongProtocol(t *testing.T) {
	pg := testserver.Server(t, discovery.Postgres)
	my := testserver.Server(t, discovery.MariaDB)
	cases := []struct {
		dsn    string
		reason sqldb.ConnectReason
		says   string
	}{
		{fmt.Sprintf("postgres://u:secretpw@127.0.0.1:%d/fairbench?connect_timeout=2", my.Port), sqldb.WrongProtocol, "does not speak PostgreSQL's protocol; is it MySQL/MariaDB?"},
		// PostgreSQL waits for the client's first message and MySQL's client for the server's
		// greeting: only the timeout ends that, and the message names the likely cause.
		{fmt.Sprintf("mysql://u:secretpw@127.0.0.1:%d/fairbench?connect_timeout=1", pg.Port), sqldb.NoAnswer, "is it PostgreSQL?"},
	}
	for _, c := range cases {
		t.Run(c.says, func(t *testing.T) {
			tg, err := sqldb.ParseTarget(c.dsn)
			if err != nil {
				t.Fatal(err)
			}
			err = within(t, 5*time.Second, "Open", func() error {
				conn, err := sqldb.Open(context.Background(), tg)
				if err == nil {
					conn.Close()
				}
				return err
			})
			var ce *sqldb.ConnectError
			if !errors.As(err, &ce) || ce.Reason != c.reason || !strings.Contains(err.Error(), c.says) {
				t.Fatalf("err = %v, want reason %d saying %q", err, c.reason, c.says)
			}
			if strings.Contains(err.Error(), "secretpw") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("not one line without the password: %q", err)
			}
		})
	}
}

// TestCounters: statements, by class, and round trips are counted on the wire, the same on every
// engine for the same calls; a statement the caller counts as another class, and statements sent
// through the uncounted view, are counted as the caller says.
func TestCounters(t *testing.T) {
	for _, kind := range testserver.Kinds() {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			c, err := sqldb.Open(ctx, testserver.Database(t, kind))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			stmt, err := c.Prepare(ctx, "SELECT ? + 1")
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Exec(ctx, "CREATE TEMPORARY TABLE fb_counted (v int)"); err != nil {
				t.Fatal(err)
			}
			insert, err := c.Prepare(ctx, "INSERT INTO fb_counted VALUES (?)")
			if err != nil {
				t.Fatal(err)
			}
			routine, err := c.Prepare(ctx, "SELECT ? + 2") // stands in for a CALL that writes
			if err != nil {
				t.Fatal(err)
			}
			routine = sqldb.CountAs(routine, sqldb.Write)
			before, ok := sqldb.CountersOf(c)
			if !ok || before.RoundTrips == 0 {
				t.Fatalf("counters %+v, ok %v: the handshake and Prepare made round trips", before, ok)
			}
			const n = 50
			if err := c.Exec(ctx, "BEGIN"); err != nil {
				t.Fatal(err)
			}
			for i := range n {
				if rows, err := stmt.Query(ctx, i); err != nil || rows != 1 {
					t.Fatalf("query: %d rows, %v", rows, err)
				}
			}
			if _, err := insert.Exec(ctx, 1); err != nil {
				t.Fatal(err)
			}
			if _, err := routine.Query(ctx, 1); err != nil {
				t.Fatal(err)
			}
			if _, err := sqldb.QueryAs(ctx, c, sqldb.Write, "SELECT 3"); err != nil {
				t.Fatal(err)
			}
			if _, err := sqldb.Uncounted(c).Query(ctx, "SELECT 4"); err != nil {
				t.Fatal(err)
			}
			if err := c.Exec(ctx, "COMMIT"); err != nil {
				t.Fatal(err)
			}
			after, _ := sqldb.CountersOf(c)
			got := after.Sub(before)
			// BEGIN, n reads, the insert, the routine, the text query counted as a write, COMMIT;
			// the uncounted query is a round trip only.
			want := sqldb.Counters{Statements: n + 5, Reads: n, Writes: 3, RoundTrips: n + 6}
			if got != want {
				t.Fatalf("counted %+v, want %+v", got, want)
			}
			if err := sqldb.Uncounted(c).Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := stmt.Query(ctx, 1); err != nil {
				t.Fatalf("closing the uncounted view closed the connection: %v", err)
			}
		})
	}
}

// TestTooManyConnections: a server without a free slot is an input problem with its own type.
// A user limited to one connection stands in for a full max_connections (which root's reserved
// slot on MySQL/MariaDB would dodge).
func TestTooManyConnections(t *testing.T) {
	for _, kind := range testserver.Kinds() {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			tg := testserver.Database(t, kind)
			admin, err := sqldb.Open(ctx, tg)
			if err != nil {
				t.Fatal(err)
			}
			defer admin.Close()
			user := fmt.Sprintf("fb_limited_%d", time.Now().UnixNano()%1e9)
			create := []string{"CREATE ROLE " + user + " LOGIN PASSWORD 'pw1234' CONNECTION LIMIT 1"}
			drop := "DROP ROLE " + user
			if tg.Kind.MySQLFamily() {
				create = []string{"CREATE USER '" + user + "'@'%' IDENTIFIED BY 'pw1234' WITH MAX_USER_CONNECTIONS 1",
					"GRANT ALL ON " + tg.Database + ".* TO '" + user + "'@'%'"}
				drop = "DROP USER '" + user + "'@'%'"
			}
			t.Cleanup(func() { _ = admin.Exec(ctx, drop) })
			for _, q := range create {
				if err := admin.Exec(ctx, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			limited := tg
			limited.User, limited.Password = user, "pw1234"
			first, err := sqldb.Open(ctx, limited)
			if err != nil {
				t.Fatal(err)
			}
			_, err = sqldb.Open(ctx, limited)
			first.Close()
			if !sqldb.IsTooManyConnections(err) || !strings.Contains(err.Error(), "lower --threads") {
				t.Fatalf("err = %v, want too many connections saying to lower --threads", err)
			}
			t.Log(err)
		})
	}
}
