package architecture

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/fairbench/fairbench/"

// The layers of docs/architecture.md, as rules on imports: what renders from results reaches no
// engine, no connection and no runner; the engine layer and the workloads reach nothing above
// them; the command is thin. A rule broken here is a layer crossed: move the knowledge (an
// engine's names into internal/dialect and the results' vocabulary, a figure into the results
// at measure time), do not widen the rule.
var rules = []struct {
	pkgs      []string // packages the rule holds for (and their own dependencies)
	forbidden []string // packages none of them may depend on, directly or not
	why       string
}{
	{
		pkgs:      []string{"internal/report", "internal/history", "internal/regress", "internal/export", "internal/merge", "internal/document", "internal/result"},
		forbidden: []string{"internal/engine", "internal/engine/cluster", "internal/engine/discovery", "internal/engine/profile", "internal/dialect", "internal/sqldb", "internal/throwaway", "internal/runner", "internal/job", "internal/compare", "internal/servermetrics"},
		why:       "reports render from results files alone",
	},
	{
		pkgs:      []string{"internal/engine/discovery", "internal/engine/profile"},
		forbidden: []string{"internal/engine", "internal/engine/cluster", "internal/cgroup", "internal/sqldb", "internal/throwaway", "internal/runner", "internal/job", "internal/compare", "internal/cli"},
		why:       "finding what is installed and the fairness profile are data and questions below the servers' start and stop, which use them",
	},
	{
		pkgs:      []string{"internal/dialect", "internal/sqldb"},
		forbidden: []string{"internal/engine", "internal/throwaway", "internal/runner", "internal/job", "internal/compare", "internal/report", "internal/cli"},
		why:       "the engine layer answers questions; it does not start servers or run workloads",
	},
	{
		pkgs:      []string{"internal/runner", "internal/workload"},
		forbidden: []string{"internal/engine", "internal/throwaway", "internal/job", "internal/compare", "internal/report", "internal/cli"},
		why:       "a workload is data plus a small interface, and the runner owns threads and timing, below the jobs",
	},
}

func TestLayers(t *testing.T) {
	for _, r := range rules {
		for _, p := range r.pkgs {
			deps := depsOf(t, p)
			for _, f := range r.forbidden {
				if deps[module+f] {
					t.Errorf("%s depends on %s: %s (docs/architecture.md)", p, f, r.why)
				}
			}
		}
	}
}

// The command is thin: cmd/fairbench reaches the rest through internal/cli only.
func TestCommandIsThin(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, module+"cmd/fairbench").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, imp := range strings.Fields(string(out)) {
		if strings.HasPrefix(imp, module) && imp != module+"internal/cli" {
			t.Errorf("cmd/fairbench imports %s: put it behind internal/cli", imp)
		}
	}
}

// depsOf is every package p depends on, itself included.
func depsOf(t *testing.T, p string) map[string]bool {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", module+p).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", p, err)
	}
	deps := map[string]bool{}
	for _, d := range strings.Fields(string(out)) {
		deps[d] = true
	}
	return deps
}
