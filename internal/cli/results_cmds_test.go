package cli

import (
	"fmt"
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

// fakeShard writes shard i of 2 of a run of workload whose 20 s window opens at from.
func fakeShard(t *testing.T, path string, i int, workload string, from time.Time) {
	t.Helper()
	fakeRun(t, path, 1000, uint64(i))
	r, err := result.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	r.Workload.Name = workload
	r.Shard = &result.Shard{Index: i, Count: 2, Host: fmt.Sprintf("client%d", i)}
	r.Measured = &result.Window{From: from, To: from.Add(20 * time.Second)}
	if err := result.Write(path, r); err != nil {
		t.Fatal(err)
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
	t0 := time.Date(2026, 11, 24, 2, 0, 0, 0, time.UTC)
	shard1, otherWorkload, late := filepath.Join(dir, "s1.json"), filepath.Join(dir, "s2-other.json"), filepath.Join(dir, "s2-late.json")
	fakeShard(t, shard1, 1, "oltp_read_write", t0)
	fakeShard(t, otherWorkload, 2, "oltp_read_only", t0)
	fakeShard(t, late, 2, "oltp_read_write", t0.Add(25*time.Second))
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no --out", []string{"merge", good, good}, "--out"},
		{"truncated file", []string{"merge", "--out", filepath.Join(dir, "m.json"), good, truncated}, "not a fairbench results file"},
		{"not shards", []string{"merge", "--out", filepath.Join(dir, "m.json"), good, good}, "no measured window"},
		{"another workload", []string{"merge", "--out", filepath.Join(dir, "m.json"), shard1, otherWorkload}, "ran oltp_read_only but"},
		{"no overlap", []string{"merge", "--out", filepath.Join(dir, "m.json"), shard1, late}, "began measuring 25s after"},
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

// The shards' results copied into one directory: merge joins them there, and report renders
// them merged, a row per shard, without counting the merged file beside them again.
func TestMergeAndReportAShardDirectory(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 11, 24, 2, 0, 0, 0, time.UTC)
	fakeShard(t, filepath.Join(dir, "shard-1.json"), 1, "oltp_read_write", t0)
	fakeShard(t, filepath.Join(dir, "shard-2.json"), 2, "oltp_read_write", t0.Add(30*time.Millisecond))
	if code, out, errOut := run("merge", "--out", filepath.Join(dir, "merged.json"), dir); code != 0 || !strings.Contains(out, "merged 2 shards: 40000 transactions") {
		t.Fatalf("merge: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := run("report", dir); code != 0 {
		t.Fatalf("report: exit %d\n%s%s", code, out, errOut)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	for _, want := range []string{"## Client shards", "| 1 of 2 | client1 |", "| 2 of 2 | client2 |"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	if code, _, errOut := run("report", t.TempDir()); code != 2 || !strings.Contains(errOut, "no shard results") {
		t.Errorf("report over an empty directory: exit %d %s", code, errOut)
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

// Every output path follows one rule: a file there is replaced only where fairbench wrote it, in
// one line and exit 2 otherwise, and fairbench's own output is written again (export,
// history and report replaced any file).
func TestOutputPathsReplaceOnlyOurs(t *testing.T) {
	dir := t.TempDir()
	res := filepath.Join(dir, "run.json")
	fakeRun(t, res, 1000, 1)
	cmp := filepath.Join(dir, "cmp")
	fakeRun(t, filepath.Join(cmp, "results", "postgres-oltp_read_write.json"), 1000, 2)
	user := func(name string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("the user's own\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	csv, page, notes := user("data.csv"), user("page.html"), user("notes.json")
	refused := [][]string{
		{"export", "--csv", csv, res},
		{"history", "--html", page, res},
		{"merge", "--out", notes, res},
	}
	for _, args := range refused {
		code, stdout, stderr := run(args...)
		if code != 2 || !strings.Contains(stderr, "exists and is not a file fairbench wrote") || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("%v: exit %d\n%s%s", args, code, stdout, stderr)
		}
	}
	for _, p := range []string{csv, page, notes} {
		if b, _ := os.ReadFile(p); string(b) != "the user's own\n" {
			t.Errorf("%s was changed: %q", p, b)
		}
	}
	mine := filepath.Join(dir, "mine.csv")
	for i := 0; i < 2; i++ { // the second replaces what the first wrote
		if code, stdout, stderr := run("export", "--csv", mine, res); code != 0 {
			t.Fatalf("export to fairbench's own file, time %d: exit %d\n%s%s", i+1, code, stdout, stderr)
		}
		if code, stdout, stderr := run("report", cmp); code != 0 {
			t.Fatalf("report, time %d: exit %d\n%s%s", i+1, code, stdout, stderr)
		}
	}
	if err := os.WriteFile(filepath.Join(cmp, "report.md"), []byte("my notes\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := run("report", cmp); code != 2 || !strings.Contains(stderr, "report.md exists and is not a file fairbench wrote") {
		t.Errorf("report over the user's report.md: exit %d, %s", code, stderr)
	}
}
