package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fairbench/fairbench/internal/engine/discovery"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/testserver"
)

func TestMain(m *testing.M) {
	// The shard tests run fairbench as separate processes, as separate client hosts would: the
	// test binary re-executes itself as the command line.
	if args := os.Getenv("FAIRBENCH_TEST_CLI_ARGS"); args != "" {
		os.Exit(Main(strings.Split(args, "\x1f"), os.Stdout, os.Stderr))
	}
	testserver.Main(m)
}

func run(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = Main(args, &o, &e)
	return code, o.String(), e.String()
}

func withPassword(tg sqldb.Target, pw string) string {
	u := tg.Redacted()
	if pw == "" {
		return u
	}
	return strings.Replace(u, tg.User+"@", tg.User+":"+pw+"@", 1)
}

// Bad input: one clear line naming the problem and the fix, exit status 2, no password echoed.
func TestBadInput(t *testing.T) {
	tg := testserver.Database(t, "postgres")
	good := withPassword(tg, tg.Password)
	tpchWarmup := filepath.Join(t.TempDir(), "tpch-warmup.yaml")
	if err := os.WriteFile(tpchWarmup, []byte("warmup: 1s\nsteps:\n  - {workload: oltp_point_select}\n  - {workload: tpch, warmup: 5s}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"bad DSN", []string{"run", "--target", "postgres//oops:hunter2", "--workload", "oltp_read_write"}, "bad --target"},
		{"bad scheme", []string{"run", "--target", "oracle://u:hunter2@h/db", "--workload", "oltp_read_write"}, "scheme"},
		{"unreachable server", []string{"run", "--target", "postgres://u:hunter2@127.0.0.1:1/db", "--workload", "oltp_read_write"}, "connection refused"},
		{"wrong password", []string{"run", "--target", withPassword(tg, "hunter2"), "--workload", "oltp_read_write"}, "wrong user or password"},
		{"unknown workload", []string{"run", "--target", good, "--workload", "oltp_nope"}, "unknown workload"},
		{"option of another workload", []string{"run", "--target", good, "--workload", "oltp_read_write", "--random-points", "3"}, "has no option --random-points"},
		{"missing tables at run", []string{"run", "--target", good, "--workload", "oltp_point_select", "--time", "1s"}, "run 'fairbench prepare"},
		{"bad duration", []string{"run", "--target", good, "--workload", "oltp_point_select", "--time", "soon"}, "not a duration"},
		{"bad threads", []string{"run", "--target", good, "--workload", "oltp_point_select", "--threads", "0"}, "--threads"},
		{"bad rand type", []string{"run", "--target", good, "--workload", "oltp_point_select", "--rand-type", "lognormal"}, "--rand-type"},
		{"unknown flag", []string{"run", "--target", good, "--wrokload", "x"}, "unknown flag"},
		{"a rate for a fixed list", []string{"run", "--target", good, "--workload", "tpch", "--rate", "10"}, "fixed list of queries"},
		{"a warm-up for a fixed list", []string{"run", "--target", good, "--workload", "tpch", "--warmup", "10s"}, "--warmup: tpch runs a fixed list"},
		{"capacity of a fixed list", []string{"capacity", "--target", good, "--workload", "tpch", "--slo", "p99<=1s"}, "fixed list of queries"},
		{"capture, negative watch", []string{"capture", "--target", good, "--out", filepath.Join(t.TempDir(), "c.yaml"), "--watch", "-1s"}, "--watch -1s"},
		{"capture, watch too often", []string{"capture", "--target", good, "--out", filepath.Join(t.TempDir(), "c.yaml"), "--watch-every", "10us"}, "--watch-every 10µs"},
		{"unknown suite", []string{"compare", "--suite", "nosuch"}, "no suite"},
		{"unknown engine", []string{"compare", "--engines", "oracle"}, "unknown engine"},
		{"uninstalled version", []string{"compare", "--engines", "postgres@16,mysql"}, "postgres@16 is not installed (installed: postgres@"},
		{"MySQL 8.4", []string{"compare", "--engines", "mysql@8.4"}, "MySQL 8.4 is in no Debian suite"},
		{"bad version", []string{"serve", "--engine", "postgres@latest"}, "a version is a number"},
		{"version twice", []string{"compare", "--engines", "postgres,postgres"}, "chosen twice"},
		{"a warm-up for a suite of fixed lists", []string{"compare", "--engines", "postgres", "--suite", "tpch", "--warmup", "2s", "--out", t.TempDir()}, "--warmup: every step of suite tpch runs a fixed list"},
		{"a warm-up on a fixed list's step", []string{"compare", "--engines", "postgres", "--suite", tpchWarmup, "--out", t.TempDir()}, "step 2: warmup: tpch runs a fixed list"},
		{"study, uninstalled version", []string{"study", "mvcc", "--engines", "postgres@16"}, "is not installed"},
		{"reproduction, two releases", []string{"reproduce", "shootout", "--engines", "postgres@15,postgres", "--out", t.TempDir()}, "one release of each engine (postgres twice)"},
		{"reproduction, uninstalled version", []string{"reproduce", "shootout", "--engines", "postgres@16", "--out", t.TempDir()}, "postgres@16 is not installed"},
		{"report of an empty dir", []string{"report", t.TempDir()}, "no results"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := run(c.args...)
			if code != 2 {
				t.Errorf("exit %d, want 2 (stderr %q)", code, stderr)
			}
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			if len(lines) != 1 || !strings.Contains(stderr, c.want) {
				t.Errorf("stderr %q: want one line containing %q", stderr, c.want)
			}
			if strings.Contains(stderr, "hunter2") || strings.Contains(stderr, "goroutine") {
				t.Errorf("stderr leaks a password or a stack trace: %q", stderr)
			}
		})
	}
}

// prepare, run with --out, check and cleanup through the command line, as a user would.
func TestPrepareRunCleanup(t *testing.T) {
	tg := testserver.Database(t, "mariadb")
	dsn := withPassword(tg, tg.Password)
	base := []string{"--target", dsn, "--workload", "oltp_read_write", "--tables", "2", "--table-size", "1000"}
	if code, out, errOut := run(append([]string{"prepare"}, base...)...); code != 0 {
		t.Fatalf("prepare: exit %d\n%s%s", code, out, errOut)
	}
	if code, _, errOut := run(append([]string{"prepare"}, base...)...); code != 2 || !strings.Contains(errOut, "--force") {
		t.Fatalf("second prepare: exit %d %q, want 2 and a hint to use --force", code, errOut)
	}
	out := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := run(append([]string{"run", "--threads", "2", "--time", "1s", "--out", out, "--check"}, base...)...)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "transactions:") || !strings.Contains(stdout, "check: oltp_read_write passed") || !strings.Contains(stderr, "[ 1s ] thds: 2 tps:") {
		t.Fatalf("missing the sysbench-like summary, interval line or check:\n%s\n%s", stdout, stderr)
	}
	r, err := result.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Complete || r.Engine.Kind != "mariadb" || !strings.Contains(r.Engine.Version, "MariaDB") || r.TPS <= 0 || r.Histogram == "" {
		t.Fatalf("result: complete=%v engine=%+v tps=%.1f", r.Complete, r.Engine, r.TPS)
	}
	if code, _, errOut := run(append([]string{"cleanup"}, base...)...); code != 0 {
		t.Fatalf("cleanup: exit %d %s", code, errOut)
	}
}

// A thread sweep writes one result per step.
func TestThreadSweep(t *testing.T) {
	tg := testserver.Database(t, "postgres")
	base := []string{"--target", withPassword(tg, tg.Password), "--workload", "oltp_point_select", "--tables", "1", "--table-size", "1000"}
	if code, _, e := run(append([]string{"prepare"}, base...)...); code != 0 {
		t.Fatal(e)
	}
	out := filepath.Join(t.TempDir(), "sweep.json")
	if code, _, e := run(append([]string{"run", "--threads", "1,2", "--time", "500ms", "--out", out}, base...)...); code != 0 {
		t.Fatal(e)
	}
	for _, n := range []int{1, 2} {
		r, err := result.Read(strings.TrimSuffix(out, ".json") + fmt.Sprintf("-t%d.json", n))
		if err != nil || r.Threads != n || r.Label != fmt.Sprintf("threads=%d", n) {
			t.Fatalf("step %d: %v %+v", n, err, r)
		}
	}
	_ = context.Background()
	_ = os.Remove(out)
}

// `fairbench engines` lists every engine@version with its origin, and what more can be installed.
func TestEnginesListing(t *testing.T) {
	var b strings.Builder
	listEngines(&b, []discovery.Installation{
		{Kind: discovery.Postgres, Version: "15.18", Binary: "/usr/lib/postgresql/15/bin/postgres", Origin: "host"},
		{Kind: discovery.Postgres, Version: "18.1", Binary: "/opt/fairbench/roots/sid/usr/lib/postgresql/18/bin/postgres", Root: "/opt/fairbench/roots/sid", Origin: "sid root"},
		{Kind: discovery.MySQL, Version: "9.7.4", Binary: "/opt/fairbench/roots/sid/usr/sbin/mysqld", Root: "/opt/fairbench/roots/sid", Origin: "sid root"},
	})
	out := b.String()
	for _, want := range []string{
		"postgres@15    (host)         15.18",
		"postgres@18    (sid root)     18.1",
		"mysql@9.7      (sid root)     9.7.4",
		"mariadb        not installed: run scripts/install-engines.sh",
		"more versions: scripts/install-engines.sh --versions postgres@17,mariadb@10.11,mariadb@11.8",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("listing lacks %q:\n%s", want, out)
		}
	}
}
