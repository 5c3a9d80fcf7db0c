package compare

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/suite"
)

// Rounds until decided on real servers: after the minimum, the open picks get rounds of their
// own steps and engines only, the plan and what it added are recorded, and the report says so.
// Two rounds leave a pick open almost surely (the first look's interval from one degree of
// freedom spans a factor of tens), so at least one look's rounds are added.
func TestRoundsUntilDecided(t *testing.T) {
	kinds := engines(t)[:2]
	s, err := suite.Parse([]byte(`
name: tiny-rounds
description: one short step, two rounds, then until decided
threads: 2
time: 1s
warmup: 200ms
repeat: 2
options: {tables: "1", table-size: "2000"}
steps:
  - workload: oltp_point_select
  - workload: oltp_insert
`), "tiny-rounds.yaml")
	if err != nil {
		t.Fatal(err)
	}
	o := options(t, kinds)
	o.Suite = s
	// About 50 s for the minimum rounds here, 25 s for the one round to the second look; the
	// third look's two rounds do not fit.
	o.Budget = 100 * time.Second
	var log strings.Builder
	o.Log = &log
	defer func() {
		if t.Failed() {
			t.Log(log.String())
		}
	}()
	insts, err := Plan(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckBudget(o, insts); err != nil {
		t.Fatal(err)
	}
	results := runClean(t, o)
	data, err := os.ReadFile(filepath.Join(o.OutDir, "environment.json"))
	if err != nil {
		t.Fatal(err)
	}
	var env result.Environment
	if err := json.Unmarshal(data, &env); err != nil {
		t.Fatal(err)
	}
	r := env.Rounds
	if r == nil || r.Rule != "sequential" || r.MinRounds != 2 || r.BudgetS != 100 || r.SpentS <= 0 || r.Stopped == "" {
		t.Fatalf("environment's rounds: %+v", r)
	}
	t.Logf("rounds: minimum %d, added %+v, stopped %s after %.0f s", r.MinRounds, r.Added, r.Stopped, r.SpentS)
	if len(r.Added) == 0 {
		t.Fatalf("no round added after two (stopped: %s)", r.Stopped)
	}
	// Every added round ran only what it recorded, and an added round's numbers follow the plan's.
	perRound := map[int][]string{}
	for _, res := range results {
		round := roundOf(t, o, res)
		perRound[round] = append(perRound[round], res.Engine.Kind+" "+res.Workload.Name)
	}
	for _, a := range r.Added {
		var want []string
		for _, e := range a.Engines {
			for _, w := range a.Workloads {
				want = append(want, strings.SplitN(e, "@", 2)[0]+" "+w)
			}
		}
		slices.Sort(want)
		got := slices.Sorted(slices.Values(perRound[a.Round]))
		if !slices.Equal(got, want) {
			t.Errorf("round %d ran %v, recorded %v", a.Round, got, want)
		}
		if a.Round < 3 {
			t.Errorf("added round numbered %d, after the minimum of 2", a.Round)
		}
	}
	if len(perRound[1]) != 2*len(kinds) || len(perRound[2]) != 2*len(kinds) {
		t.Errorf("the minimum rounds ran %v and %v, want every step on every engine", perRound[1], perRound[2])
	}
	md, err := os.ReadFile(filepath.Join(o.OutDir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "Rounds until decided: every step ran 2 rounds") || !strings.Contains(string(md), "of rounds until decided)") {
		t.Errorf("the report does not say how its rounds were chosen:\n%s", md)
	}
	if spent := time.Duration(r.SpentS * float64(time.Second)); spent > o.Budget+time.Minute {
		t.Errorf("spent %s of a %s budget", spent, o.Budget)
	}
}

// roundOf reads a result's round from its file name's last part (…-3.json).
func roundOf(t *testing.T, o *Options, res *result.Result) int {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(o.OutDir, "results", "*.json"))
	for _, f := range files {
		r, err := result.Read(f)
		if err != nil || !r.StartedAt.Equal(res.StartedAt) || r.Engine.Kind != res.Engine.Kind {
			continue
		}
		base := strings.TrimSuffix(filepath.Base(f), ".json")
		n := 0
		for i := strings.LastIndex(base, "-") + 1; i < len(base); i++ {
			n = n*10 + int(base[i]-'0')
		}
		return n
	}
	t.Fatalf("no file for %s %s", res.Engine.Kind, res.Workload.Name)
	return 0
}
