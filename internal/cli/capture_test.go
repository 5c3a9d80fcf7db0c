package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/testserver"
	"github.com/fairbench/fairbench/internal/workloadfile"
)

// A workload captured from one engine's statistics runs on every engine: pgbench's TPC-B run on
// PostgreSQL, captured, loaded and run on PostgreSQL, MariaDB and MySQL without an error; and
// sysbench's read/write run on MariaDB, captured while it runs (MariaDB keeps a prepared
// statement's account only while its connection lives), replayed on PostgreSQL.
func TestCaptureAndReplay(t *testing.T) {
	dir := t.TempDir()
	pg := testserver.Database(t, "postgres")
	src := withPassword(pg, pg.Password)
	mustRun(t, "prepare", "--target", src, "--workload", "pgbench", "--scale", "1")
	mustRun(t, "run", "--target", src, "--workload", "pgbench", "--threads", "2", "--time", "2s", "--out", filepath.Join(dir, "src.json"))
	file := filepath.Join(dir, "tpcb.yaml")
	mustRun(t, "capture", "--target", src, "--out", file)
	if code, _, errOut := run("capture", "--target", src, "--out", file); code != 2 || !strings.Contains(errOut, "--force") {
		t.Errorf("capture over an existing file: exit %d %q, want 2 and --force named", code, errOut)
	}
	f, err := workloadfile.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Transactions) != 5 {
		t.Errorf("%d transactions, want TPC-B's five statements", len(f.Transactions))
	}
	for _, kind := range testserver.Kinds() {
		t.Run(kind, func(t *testing.T) { replay(t, kind, file) })
	}

	maria := testserver.Database(t, "mariadb")
	msrc := withPassword(maria, maria.Password)
	base := []string{"--target", msrc, "--workload", "oltp_read_write", "--tables", "1", "--table-size", "2000"}
	mustRun(t, append([]string{"prepare"}, base...)...)
	done := make(chan struct{})
	go func() {
		defer close(done)
		run(append([]string{"run", "--threads", "2", "--time", "4s", "--out", filepath.Join(dir, "m.json")}, base...)...)
	}()
	time.Sleep(2500 * time.Millisecond)
	mfile := filepath.Join(dir, "rw.yaml")
	mustRun(t, "capture", "--target", msrc, "--out", mfile)
	<-done
	text, _ := os.ReadFile(mfile)
	if !strings.Contains(string(text), "BETWEEN :id AND :id +") {
		t.Errorf("want sysbench's ranges kept as ranges:\n%s", text)
	}
	replay(t, "postgres", mfile)
}

func mustRun(t *testing.T, args ...string) {
	t.Helper()
	if code, out, errOut := run(args...); code != 0 {
		t.Fatalf("%s: exit %d\n%s%s", args[0], code, out, errOut)
	}
}

// replay loads a captured file on a fresh database of kind and runs it a second: no errors.
func replay(t *testing.T, kind, file string) {
	tg := testserver.Database(t, kind)
	dsn := withPassword(tg, tg.Password)
	mustRun(t, "prepare", "--target", dsn, "--workload", file)
	out := filepath.Join(t.TempDir(), "r.json")
	mustRun(t, "run", "--target", dsn, "--workload", file, "--threads", "2", "--time", "1s", "--out", out)
	r, err := result.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	if r.Transactions < 50 || r.Errors > 0 {
		t.Errorf("%s: %d transactions, %d errors: want a replay without errors", kind, r.Transactions, r.Errors)
	}
}
