package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/testserver"
)

// oneLineExit fails unless the command exited with want and, when it failed, said one line
// containing has.
func oneLineExit(t *testing.T, want int, has string, args ...string) {
	t.Helper()
	code, _, stderr := run(args...)
	if want == 0 && code == 0 {
		return
	}
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if code != want || len(lines) != 1 || !strings.Contains(stderr, has) {
		t.Fatalf("exit %d, stderr %q: want exit %d and one line containing %q", code, stderr, want, has)
	}
}

// TestTooManyConnectionsIsInput: more --threads than the server lets this user connect is the
// user's to fix (exit 2), said in one line.
func TestTooManyConnectionsIsInput(t *testing.T) {
	tg := testserver.Database(t, "postgres")
	good := withPassword(tg, tg.Password)
	oneLineExit(t, 0, "", "prepare", "--target", good, "--workload", "oltp_point_select", "--tables", "1", "--table-size", "100")
	ctx := context.Background()
	admin, err := sqldb.Open(ctx, tg)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	role := fmt.Sprintf("fb_two_%d", time.Now().UnixNano()%1e9)
	for _, q := range []string{"CREATE ROLE " + role + " LOGIN PASSWORD 'pw2' CONNECTION LIMIT 2",
		"GRANT SELECT ON ALL TABLES IN SCHEMA public TO " + role} {
		if err := admin.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	t.Cleanup(func() {
		_ = admin.Exec(ctx, "REVOKE ALL ON ALL TABLES IN SCHEMA public FROM "+role)
		_ = admin.Exec(ctx, "DROP ROLE "+role)
	})
	limited := tg
	limited.User = role
	oneLineExit(t, 2, "lower --threads", "run", "--target", withPassword(limited, "pw2"), "--workload", "oltp_point_select",
		"--tables", "1", "--table-size", "100", "--threads", "4", "--time", "1s")
}

// TestPasswordOutsideArgv: the password may come from FAIRBENCH_PASSWORD or a file named in the
// DSN, so it never shows in ps.
func TestPasswordOutsideArgv(t *testing.T) {
	tg := testserver.Database(t, "mariadb")
	ctx := context.Background()
	admin, err := sqldb.Open(ctx, tg)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	user := fmt.Sprintf("fb_pw_%d", time.Now().UnixNano()%1e9)
	for _, q := range []string{"CREATE USER '" + user + "'@'%' IDENTIFIED BY 's3cret-pw'",
		"GRANT ALL ON " + tg.Database + ".* TO '" + user + "'@'%'"} {
		if err := admin.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	t.Cleanup(func() { _ = admin.Exec(ctx, "DROP USER '"+user+"'@'%'") })
	noPassword := tg
	noPassword.User, noPassword.Password = user, ""
	dsn := noPassword.Redacted()
	table := []string{"--workload", "oltp_point_select", "--tables", "1", "--table-size", "100"}

	oneLineExit(t, 2, "wrong user or password", append([]string{"cleanup", "--target", dsn}, table...)...)
	t.Setenv("FAIRBENCH_PASSWORD", "s3cret-pw")
	oneLineExit(t, 0, "", append([]string{"prepare", "--target", dsn}, table...)...)
	t.Setenv("FAIRBENCH_PASSWORD", "")
	file := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(file, []byte("s3cret-pw\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	oneLineExit(t, 0, "", append([]string{"cleanup", "--target", dsn + "?password_file=" + file}, table...)...)
}
