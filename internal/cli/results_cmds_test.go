package cli

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/histogram"
	"github.com/fairbench/fairbench/internal/result"
)

// fakeRun writes a PostgreSQL results file whose 20 intervals scatter ±2% around tps.
func fakeRun(t *testing.T, path string, tps float64, seed uint64) {
	t.Helper()
	fakeRunAs(t, path, "postgres", tps, seed)
}

func fakeRunAs(t *testing.T, path, engine string, tps float64, seed uint64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	h := histogram.New()
	h.Record(2000)
	enc, _ := h.Encode()
	r := &result.Result{Complete: true, StartedAt: time.Now().UTC(), Engine: result.Engine{Kind: engine, Version: "15"},
		Workload: result.Workload{Name: "oltp_read_write"}, Threads: 4, DurationS: 20, TPS: tps, Transactions: int64(tps * 20), Histogram: enc}
	for i := 0; i < 20; i++ {
		r.Intervals = append(r.Intervals, result.Interval{T: float64(i + 1), TPS: tps * (1 + 0.04*(rng.Float64()-0.5)), P99MS: 5})
	}
	if err := result.Write(path, r); err != nil {
		t.Fatal(err)
	}
}

func TestDiffExitStatus(t *testing.T) {
	dir := t.TempDir()
	a, same, slow := filepath.Join(dir, "a.json"), filepath.Join(dir, "same.json"), filepath.Join(dir, "slow.json")
	fakeRun(t, a, 1000, 1)
	fakeRun(t, same, 1000, 2)
	fakeRun(t, slow, 600, 3)
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no change passes the gate", []string{"diff", a, same, "--fail-if", "slower-than=5%"}, 0, "no significant change"},
		{"slower fails the gate", []string{"diff", a, slow, "--fail-if", "slower-than=5%"}, 1, "slower than 5.0%"},
		{"slower without a gate", []string{"diff", a, slow}, 0, "slower"},
		{"bad gate", []string{"diff", a, slow, "--fail-if", "slower=5"}, 2, "slower-than=5%"},
		{"missing file", []string{"diff", a, filepath.Join(dir, "nope.json")}, 2, "no such file"},
		{"bad alpha", []string{"diff", a, same, "--alpha", "2"}, 2, "--alpha"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := run(c.args...)
			if code != c.code || !strings.Contains(stdout+stderr, c.want) {
				t.Errorf("exit %d, want %d; output lacks %q:\n%s%s", code, c.code, c.want, stdout, stderr)
			}
		})
	}
}

func TestExportAndHistoryCommands(t *testing.T) {
	dir := t.TempDir()
	fakeRun(t, filepath.Join(dir, "results", "postgres-oltp_read_write.json"), 1000, 1)
	csvPath, htmlPath := filepath.Join(dir, "out.csv"), filepath.Join(dir, "history.html")
	if code, _, stderr := run("export", "--csv", csvPath, dir); code != 0 {
		t.Fatalf("export: exit %d: %s", code, stderr)
	}
	data, _ := os.ReadFile(csvPath)
	if lines := strings.Split(strings.TrimSpace(string(data)), "\n"); len(lines) != 2 || !strings.HasPrefix(lines[1], "postgres,15,oltp_read_write") {
		t.Errorf("CSV:\n%s", data)
	}
	code, stdout, stderr := run("history", "--html", htmlPath, dir, dir)
	if code != 0 || strings.Count(stdout, "| 1,000 |") != 2 {
		t.Errorf("history: exit %d, want two rows of 1000 TPS:\n%s%s", code, stdout, stderr)
	}
	if page, _ := os.ReadFile(htmlPath); !strings.Contains(string(page), "<svg") {
		t.Errorf("history.html has no chart")
	}
	if code, _, stderr := run("export", dir); code != 2 || !strings.Contains(stderr, "--csv") {
		t.Errorf("export without --csv: exit %d: %s", code, stderr)
	}
}

func TestMergeCommandErrors(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "a.json")
	fakeRun(t, good, 1000, 1)
	truncated := filepath.Join(dir, "truncated.json")
	data, _ := os.ReadFile(good)
	if err := os.WriteFile(truncated, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no --out", []string{"merge", good, good}, "--out"},
		{"truncated file", []string{"merge", "--out", filepath.Join(dir, "m.json"), good, truncated}, "not a fairbench results file"},
		{"not shards", []string{"merge", "--out", filepath.Join(dir, "m.json"), good, good}, "no measured window"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := run(c.args...)
			if code != 2 || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
				t.Errorf("exit %d, want 2 and one line containing %q: %s", code, c.want, stderr)
			}
		})
	}
}

// --report-only judges what an earlier reproduction left and starts nothing.
func TestReproduceReportOnly(t *testing.T) {
	dir := t.TempDir()
	for _, e := range []string{"postgres", "mysql", "mariadb"} {
		fakeRunAs(t, filepath.Join(dir, "fair", "results", e+"-oltp_read_write.json"), e, 1000, 1)
	}
	start := time.Now()
	code, stdout, stderr := run("reproduce", "shootout", "--report-only", "--out", dir)
	if code != 0 || !strings.Contains(stdout, "shootout:") || time.Since(start) > 20*time.Second {
		t.Fatalf("exit %d after %s:\n%s%s", code, time.Since(start), stdout, stderr)
	}
	if strings.Contains(stderr, "starting a throwaway server") {
		t.Errorf("--report-only started a server:\n%s", stderr)
	}
	if code, _, stderr := run("reproduce", "shootout", "--report-only"); code != 2 || !strings.Contains(stderr, "--out") {
		t.Errorf("--report-only without --out: exit %d %s", code, stderr)
	}
}
