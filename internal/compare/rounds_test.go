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

	"github.com/fairbench/fairbench/internal/interval"
	"github.com/fairbench/fairbench/internal/report"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/suite"
)

// Rounds until decided on real servers: after the minimum, the open picks get rounds of their
// own steps and engines only, the plan and what it added are recorded, and the report says so.
// Two rounds leave a pick open almost surely (the first look's interval from one degree of
// freedom spans a factor of tens), so at least one look's rounds are added.
func TestRoundsUntilDecided(t *testing.T) {
	kinds := engines(t)[:2]
	o := options(t, kinds)
	o.Suite = twoRounds(t, "oltp_point_select", "oltp_insert")
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

// An --explain knob's effect is decided by the same rounds: an effect still open after the
// minimum gets rounds of the engine's own run and its flipped run, recorded as such. Flipping a
// write setting on a read-only step leaves the effect open after two rounds almost surely (the
// first look's interval from one degree of freedom spans tens of percent), so rounds are added.
func TestRoundsUntilDecidedExplain(t *testing.T) {
	kinds := engines(t)[:1]
	o := options(t, kinds)
	o.Suite, o.Explain = twoRounds(t, "oltp_point_select"), []string{"synchronous-commit"}
	// About 7 s a round here (two servers, each started and loaded): the minimum's two rounds
	// and the looks' rounds to five fit, the three to the next look do not.
	o.Budget = time.Minute
	var log strings.Builder
	o.Log = &log
	defer func() {
		if t.Failed() {
			t.Log(log.String())
		}
	}()
	results := runClean(t, o)
	var env result.Environment
	data, err := os.ReadFile(filepath.Join(o.OutDir, "environment.json"))
	if err != nil || json.Unmarshal(data, &env) != nil || env.Rounds == nil {
		t.Fatalf("environment: %v %s", err, data)
	}
	t.Logf("rounds: added %+v, stopped %s after %.0f s", env.Rounds.Added, env.Rounds.Stopped, env.Rounds.SpentS)
	if len(env.Rounds.Added) == 0 {
		t.Fatalf("no round added for the open knob effect (stopped: %s)", env.Rounds.Stopped)
	}
	for _, a := range env.Rounds.Added {
		if !slices.Equal(a.Knobs, []string{"synchronous-commit"}) || !slices.Equal(a.Workloads, []string{"oltp_point_select"}) {
			t.Errorf("added round %+v: want oltp_point_select with synchronous-commit flipped", a)
		}
		plain, flipped := 0, 0
		for _, res := range results {
			if roundOf(t, o, res) != a.Round {
				continue
			}
			if len(res.Flipped) > 0 {
				flipped++
			} else {
				plain++
			}
		}
		if plain != 1 || flipped != 1 {
			t.Errorf("round %d ran %d plain and %d flipped runs, want one of each", a.Round, plain, flipped)
		}
	}
	// The flipped run follows the engine's own in odd rounds and precedes it in even ones.
	plainAt, flippedAt := map[int]time.Time{}, map[int]time.Time{}
	for _, res := range results {
		if n := roundOf(t, o, res); len(res.Flipped) > 0 {
			flippedAt[n] = res.StartedAt
		} else {
			plainAt[n] = res.StartedAt
		}
	}
	for n, f := range flippedAt {
		if p, ok := plainAt[n]; !ok || f.Before(p) != (n%2 == 0) {
			t.Errorf("round %d: flipped run at %s, plain at %s (ran: %v): want the flipped run first in even rounds only", n, f, p, ok)
		}
	}
	md, err := os.ReadFile(filepath.Join(o.OutDir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "(and with synchronous-commit flipped)") || !strings.Contains(string(md), "look ") {
		t.Errorf("the report does not say the knob's rounds:\n%s", md)
	}
}

// What an added round runs: an open knob effect puts its step in the engine's own round and in
// the knob's flipped run; the environment's line names the knob.
func TestOpenRoundWithKnobs(t *testing.T) {
	r := openRound{steps: map[string]map[string]int{}, knobs: map[string]map[string]map[string]int{}}
	if len(r.steps) != 0 || len(r.knobs) != 0 {
		t.Fatal("a new round is not empty")
	}
	steps := []suite.Resolved{{Workload: "oltp_insert"}, {Workload: "oltp_read_write"}}
	r.add("postgres@18", "", stepKey(steps[1]), 8)
	r.add("mariadb@11.8", "binlog", stepKey(steps[0]), 4)
	if r.steps["mariadb@11.8"][stepKey(steps[0])] != 4 || r.knobs["mariadb@11.8"]["binlog"][stepKey(steps[0])] != 4 || r.knobs["postgres@18"] != nil {
		t.Errorf("round %+v", r)
	}
	a := addedRecord(r, 6, steps)
	if a.Round != 6 || !slices.Equal(a.Engines, []string{"mariadb@11.8", "postgres@18"}) || !slices.Equal(a.Workloads, []string{"oltp_insert", "oltp_read_write"}) ||
		!slices.Equal(a.Knobs, []string{"binlog"}) {
		t.Errorf("added record %+v", a)
	}
	c := &comparison{costs: costs{overhead: map[string]time.Duration{"mariadb@11.8": 10 * time.Second, "postgres@18": 8 * time.Second},
		step: map[string]time.Duration{"mariadb@11.8|" + stepKey(steps[0]): 5 * time.Second, "postgres@18|" + stepKey(steps[1]): 6 * time.Second}}}
	// mariadb's own run and its flipped run, 15 s each; postgres's 14 s.
	if got := c.roundCost(r); got != 44*time.Second {
		t.Errorf("round cost %s, want 44s", got)
	}
}

// twoRounds is a suite of short steps of the workloads, two rounds, for rounds until decided.
func twoRounds(t *testing.T, workloads ...string) *suite.Suite {
	t.Helper()
	text := "name: tiny-rounds\ndescription: short steps, two rounds, then until decided\nthreads: 2\ntime: 1s\nwarmup: 200ms\nrepeat: 2\n" +
		"options: {tables: \"1\", table-size: \"2000\"}\nsteps:\n"
	for _, w := range workloads {
		text += "  - workload: " + w + "\n"
	}
	s, err := suite.Parse([]byte(text), "tiny-rounds.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The rounds added at a time bring the nearest open pick to the plan's next look (5, 8, 12, 18
// rounds): after 8 rounds, a pick with all 8 needs 4, one that lost a round needs 1, one that
// lost four (4 left, below the first look) needs 1; an unknown count is taken as all run.
func TestFewerToLook(t *testing.T) {
	rule := interval.Sequential(5)
	for _, tc := range []struct {
		toLook, have, n, want int
	}{
		{0, 8, 8, 4},
		{0, 7, 8, 1},
		{0, 4, 8, 1},
		{0, 0, 8, 4},
		{4, 7, 8, 1},
		{1, 8, 8, 1},
		{0, 5, 5, 3},
		{0, 9, 8, 4}, // more than were run is not a count compare made: all run
	} {
		if got := fewerToLook(tc.toLook, rule, tc.have, tc.n); got != tc.want {
			t.Errorf("fewerToLook(%d, have %d of %d) = %d, want %d", tc.toLook, tc.have, tc.n, got, tc.want)
		}
	}
}

// When the budget cannot hold the next look of every open pick, the rounds left go to the picks
// nearest a decision that fit together: three open picks after 8 rounds (4 rounds to the look at
// 12), postgres and mariadb costing 10 s a round to start and 5 s a step, mysql 30 s and 5 s.
func TestFittingPicksNearestFirst(t *testing.T) {
	steps := map[string]string{"insert": "k-insert", "select": "k-select", "rw": "k-rw"}
	c := &comparison{stepOf: steps, costs: costs{
		overhead: map[string]time.Duration{"postgres": 10 * time.Second, "mariadb": 10 * time.Second, "mysql": 30 * time.Second},
		step:     map[string]time.Duration{}}}
	for _, e := range []string{"postgres", "mariadb", "mysql"} {
		for _, k := range steps {
			c.costs.step[e+"|"+k] = 5 * time.Second
		}
	}
	picks := []report.Open{
		{Workload: "insert", Engines: []string{"mariadb", "postgres"}, Rounds: 8, Nearness: 0.7},
		{Workload: "select", Engines: []string{"mariadb", "mysql"}, Rounds: 8, Nearness: 0.9},
		{Workload: "rw", Engines: []string{"postgres", "mariadb"}, Rounds: 8, Nearness: 0.5},
	}
	rule := interval.Sequential(5)
	// A round of all three: postgres 10+5+5, mariadb 10+15, mysql 30+5 = 80 s; 4 rounds with the
	// margin 368 s. select alone: mariadb 15 + mysql 35 = 50 s a round, 230 s to the look;
	// insert and rw: postgres 20 + mariadb 20 = 40 s, 184 s.
	for _, tc := range []struct {
		left time.Duration
		want []string
	}{
		{400 * time.Second, []string{"insert", "select", "rw"}},
		{300 * time.Second, []string{"select"}},       // the nearest fits alone; with another it would not
		{200 * time.Second, []string{"insert", "rw"}}, // the nearest does not fit; the next two do together
		{100 * time.Second, nil},
	} {
		var got []string
		for _, p := range c.fitting(picks, rule, 8, tc.left) {
			got = append(got, p.Workload)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s left: picks %v, want %v", tc.left, got, tc.want)
		}
	}
	// The environment names what waited, a knob's effect by its knob.
	picks = append(picks, report.Open{Workload: "rw", Knob: "fsync", Engines: []string{"postgres"}})
	fit := c.fitting(picks[:3], rule, 8, 200*time.Second)
	if got, want := deferredPicks(picks, fit), []string{"select", "rw with fsync flipped"}; !slices.Equal(got, want) {
		t.Errorf("deferred %v, want %v", got, want)
	}
	if got := deferredPicks(picks[:3], picks[:3]); got != nil {
		t.Errorf("every pick ran, yet deferred %v", got)
	}
}

// When the budget stops the rounds, the log says what would decide each open pick: the rounds in
// all, their time at the run's pace (each engine's last round outside its steps and its step),
// and the budget that would hold them; a pick no practical number decides is said so, and then
// no budget is named.
func TestLogToDecide(t *testing.T) {
	var log strings.Builder
	c := &comparison{opts: &Options{Log: &log}, started: time.Now().Add(-10 * time.Minute), stepOf: map[string]string{"insert": "k-insert", "select": "k-select"},
		costs: costs{overhead: map[string]time.Duration{"postgres": 10 * time.Second, "mariadb": 10 * time.Second},
			step: map[string]time.Duration{"postgres|k-insert": 5 * time.Second, "mariadb|k-insert": 5 * time.Second, "postgres|k-select": 5 * time.Second, "mariadb|k-select": 5 * time.Second}}}
	insert := report.Open{Workload: "insert", Engines: []string{"mariadb", "postgres"}, Rounds: 18, ToDecide: 41}
	c.logToDecide([]report.Open{insert}, interval.Sequential(5), 18)
	// 23 rounds more, each 15 s on each of the two engines: 690 s after the 10 minutes spent.
	for _, want := range []string{"insert: about 41 rounds in all would decide at the spread so far, 23 more: about 11m30s at this run's pace", "--budget 22m0s would hold them all"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, log.String())
		}
	}
	log.Reset()
	far := report.Open{Workload: "select", Engines: []string{"mariadb", "postgres"}, Rounds: 18, ToDecide: interval.DecideLimit + 1}
	c.logToDecide([]report.Open{insert, far}, interval.Sequential(5), 18)
	if got := log.String(); !strings.Contains(got, "select: not even 200 rounds would decide at the spread so far") || strings.Contains(got, "--budget") {
		t.Errorf("a pick no practical number decides: log\n%s", got)
	}
}
