package reproduce

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/fairbench/fairbench/internal/engine"
	"github.com/fairbench/fairbench/internal/engine/discovery"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/study"
	"github.com/fairbench/fairbench/internal/testserver"
)

// The studies start servers of their own; Main stops any a failed test left running.
func TestMain(m *testing.M) { testserver.Main(m) }

// studyKinds are the engines a tiny run of each study uses: the study's own, at most two.
var studyKinds = map[string][]string{
	"shootout":  {discovery.Postgres, discovery.MySQL},
	"bandwidth": {discovery.Postgres, discovery.MariaDB},
	"ingest":    {discovery.Postgres, discovery.MySQL},
	"payments":  {discovery.Postgres, discovery.MariaDB},
	"scaling":   {discovery.MariaDB},
}

// installedKinds skips the test when an engine is missing, unless the environment requires it
// (make test sets FAIRBENCH_REQUIRE_ENGINES), where a missing engine fails it.
func installedKinds(t *testing.T, kinds []string) []string {
	t.Helper()
	for _, k := range kinds {
		if _, err := discovery.Find(k, ""); err != nil {
			if strings.Contains(os.Getenv("FAIRBENCH_REQUIRE_ENGINES"), k) {
				t.Fatalf("%s is required but not installed: %v", k, err)
			}
			t.Skipf("%s not installed: %v", k, err)
		}
	}
	return kinds
}

// testWorkDir is where the servers' data directories go; the postgres user must be able to enter it.
func testWorkDir(t *testing.T) string {
	d, err := os.MkdirTemp("/tmp", "fairbench-reproduce-test-")
	if err != nil {
		t.Fatal(err)
	}
	_ = os.Chmod(d, 0o755)
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// TestStudiesRunTiny runs every study's definition end to end at a tiny scale (seconds per step)
// on real servers: its suites parse and scale, every run leaves results, and the report has all
// the study's rows, each with a verdict.
func TestStudiesRunTiny(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real servers")
	}
	for _, s := range List() {
		t.Run(s.Name, func(t *testing.T) {
			kinds := installedKinds(t, studyKinds[s.Name])
			if s.Name == "shootout" {
				kinds = oldestRelease(kinds, discovery.Postgres)
			}
			if s.Name == "bandwidth" {
				if _, err := study.CheckBandwidth(); err != nil {
					t.Skipf("bandwidth study not possible here: %v", err)
				}
			}
			out := t.TempDir()
			rows, err := Reproduce(context.Background(), s, Options{Scale: tiny, Engines: kinds, OutDir: out, Cores: runtime.NumCPU(),
				Log: testLog{t}, Execute: CompareExecutor(ExecConfig{WorkDir: testWorkDir(t), Command: "go test"})})
			if err != nil {
				t.Fatal(err)
			}
			if r := engine.Running(); len(r) != 0 {
				t.Errorf("%d servers still running after the study", len(r))
			}
			checkRunsLeftResults(t, s, out)
			checkRowsJudged(t, s, out, rows)
			checkReleases(t, out, kinds)
		})
	}
}

// oldestRelease names kind's oldest installed release in kinds when it has more than one (the
// shoot-out published PostgreSQL 17, not the newest), as the command line's --engines
// postgres@17 does: a study then runs that release, not the newest.
func oldestRelease(kinds []string, kind string) []string {
	var oldest discovery.Installation
	n := 0
	for _, in := range discovery.Discover("") {
		if in.Kind == kind {
			if n == 0 {
				oldest = in // Discover lists each kind's releases oldest first
			}
			n++
		}
	}
	if n < 2 {
		return kinds
	}
	out := slices.Clone(kinds)
	for i, k := range out {
		if k == kind {
			out[i] = oldest.Name()
		}
	}
	return out
}

// checkReleases: every result of an engine named KIND@RELEASE ran that release.
func checkReleases(t *testing.T, out string, kinds []string) {
	t.Helper()
	var rs []*result.Result
	dirs, _ := filepath.Glob(filepath.Join(out, "*", "results"))
	for _, d := range dirs {
		more, _ := result.ReadDir(d)
		rs = append(rs, more...)
	}
	for _, name := range kinds {
		kind, _, named := strings.Cut(name, "@")
		if !named {
			continue
		}
		seen := 0
		for _, r := range rs {
			if r.Engine.Kind == kind {
				seen++
				if r.Engine.Name() != name {
					t.Errorf("%s %s ran %s, not the release named, %s", r.Engine.Kind, r.Workload.Name, r.Engine.Name(), name)
				}
			}
		}
		if seen == 0 {
			t.Errorf("no results of %s", name)
		}
	}
}

// checkRunsLeftResults: each run the study defines wrote complete results (or, for the
// bandwidth study, a complete document).
func checkRunsLeftResults(t *testing.T, s *Study, out string) {
	t.Helper()
	for _, run := range s.Runs(tiny) {
		dir := filepath.Join(out, run.Name)
		if run.Bandwidth != nil {
			if doc := readBandwidth(dir); doc == nil || !doc.Complete {
				t.Errorf("run %s: no complete bandwidth.json: %+v", run.Name, doc)
			}
			continue
		}
		rs, err := result.ReadPath(dir)
		if err != nil || len(rs) == 0 {
			t.Errorf("run %s: no results (%v)", run.Name, err)
			continue
		}
		for _, r := range rs {
			if !r.Complete {
				t.Errorf("run %s: %s %s incomplete: %s", run.Name, r.Engine.Kind, r.Workload.Name, r.Error)
			}
		}
	}
}

// checkRowsJudged: rows.json and report.md hold every row the study's judge makes, each with one
// of the three verdicts, and at least one row compares (the runs measured what the rows need).
func checkRowsJudged(t *testing.T, s *Study, out string, rows []Row) {
	t.Helper()
	pub, _ := LoadPublished(s.Key)
	if want := len(s.Judge(pub, Measured{})); len(rows) != want {
		t.Errorf("%d rows, want the study's %d", len(rows), want)
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	compared := 0
	for _, r := range rows {
		switch r.Verdict {
		case Agrees, Disagrees:
			compared++
		case NotComparable:
		default:
			t.Errorf("row %q has no verdict: %q", r.Figure, r.Verdict)
		}
		if !strings.Contains(string(md), "| "+r.Figure+" | "+r.Run+" | ") {
			t.Errorf("report.md lacks the row %q", r.Figure)
		}
		t.Logf("%s (%s): published %s, measured %s: %s", r.Figure, r.Run, r.Published, r.Measured, r.Verdict)
	}
	// A tiny ingest ramp's few clients cannot saturate either engine, and its rows rightly say
	// "not comparable here"; every other study must compare something.
	if compared == 0 && s.Name != "ingest" {
		t.Errorf("no row compared: every run's figures are missing")
	}
	var saved struct {
		Rows []Row `json:"rows"`
	}
	b, _ := os.ReadFile(filepath.Join(out, "rows.json"))
	if err := json.Unmarshal(b, &saved); err != nil || len(saved.Rows) != len(rows) {
		t.Errorf("rows.json: %d rows (%v), want %d", len(saved.Rows), err, len(rows))
	}
	if s.Name == "shootout" && !strings.Contains(string(md), "| binlog flipped |") {
		t.Errorf("the shoot-out's report does not explain MySQL's gap by the binary log:\n%s", md)
	}
}

type testLog struct{ t *testing.T }

func (w testLog) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
