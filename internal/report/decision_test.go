package report

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/interval"
	"github.com/fairbench/fairbench/internal/result"
)

// run is a minimal result: the decision only reads engine, workload, threads, label, TPS,
// p95 and completeness.
func run(kind, workload string, threads int, tps float64, complete bool) *result.Result {
	return &result.Result{
		Complete:  complete,
		Engine:    result.Engine{Kind: kind},
		Workload:  result.Workload{Name: workload},
		Threads:   threads,
		DurationS: 60,
		TPS:       tps,
		LatencyMS: result.Latency{P95: 1000 * float64(threads) / tps * 1.5},
	}
}

// reps gives one run per TPS figure, at 8 threads, started in that order: the rounds of a
// comparison with repeats.
func reps(kind, workload string, tps ...float64) []*result.Result {
	out := make([]*result.Result, len(tps))
	for i, x := range tps {
		out[i] = run(kind, workload, 8, x, true)
		out[i].StartedAt = time.Date(2026, 11, 27, 0, i, 0, 0, time.UTC)
	}
	return out
}

func TestDecisions(t *testing.T) {
	const rw = "oltp_read_write"
	tests := []struct {
		name     string
		results  []*result.Result
		pick     string // exact Pick
		winner   string // "" on a tie or no winner
		whyParts []string
	}{
		{
			name: "clear winner over three rounds, with its interval",
			results: slices.Concat(
				reps("mariadb", rw, 987, 990, 985),
				reps("postgres", rw, 1234, 1240, 1229),
				reps("mysql", rw, 900, 905, 899),
			),
			pick: "postgres, 1.25× [1.24, 1.26], 3 rounds", winner: "postgres",
			whyParts: []string{"1,234 TPS vs 987 (mariadb)", "p95 9.72 ms vs 12.16 ms"},
		},
		{
			name: "winner is not hard-coded",
			results: slices.Concat(
				reps("postgres", rw, 700, 710, 690),
				reps("mysql", rw, 1500, 1490, 1510),
			),
			pick: "mysql, 2.14× [2.03, 2.26], 3 rounds", winner: "mysql",
			whyParts: []string{"1,500 TPS vs 700 (postgres)"},
		},
		{
			name: "single runs: a lead, never a verdict, however large",
			results: []*result.Result{
				run("postgres", rw, 8, 2000, true),
				run("mariadb", rw, 8, 970, true),
			},
			pick:     "unconfirmed: postgres leads",
			whyParts: []string{"2,000 TPS vs 970 (mariadb)", "a single run measures no noise", "--repeat 3"},
		},
		{
			name: "noisy repeats leave a gap their medians show undecided, never a tie",
			// mysql median 1000, postgres 920: 8% behind, but the rounds disagree.
			results: slices.Concat(
				reps("mysql", rw, 950, 1000, 1050),
				reps("postgres", rw, 980, 920, 860),
			),
			pick:     "undecided: mysql leads",
			whyParts: []string{"1,000 TPS vs 920 (postgres)", "1.09× [0.82, 1.45] (95% interval, 3 rounds) includes 1 and reaches beyond ±5.0%"},
		},
		{
			name: "a tie is an interval shown to lie within 5%",
			results: slices.Concat(
				reps("mysql", rw, 1000, 1010, 990),
				reps("postgres", rw, 990, 1004, 985),
			),
			pick:     "tie: mysql ≈ postgres",
			whyParts: []string{"1,000 TPS vs 990 (postgres): ratio 1.01× [", "lies within ±5.0% (95% interval, 3 rounds)"},
		},
		{
			name: "tight repeats separate a gap beyond 5%",
			results: slices.Concat(
				reps("mysql", rw, 1000, 1005, 995),
				reps("postgres", rw, 925, 929, 921),
			),
			pick: "mysql, 1.08× [1.08, 1.08], 3 rounds", winner: "mysql",
		},
		{
			name: "a difference shown to be under 5% is a tie, not a pick",
			results: slices.Concat(
				reps("mysql", rw, 1000, 1005, 995),
				reps("postgres", rw, 970, 974, 966),
			),
			pick: "tie: mysql ≈ postgres", whyParts: []string{"ratio 1.03× [1.03, 1.03] lies within ±5.0%"},
		},
		{
			name: "incomplete result that would have won never wins",
			results: slices.Concat(
				reps("postgres", rw, 1000, 1001, 999),
				[]*result.Result{run("mysql", rw, 8, 5000, false)},
				reps("mariadb", rw, 800, 801, 799),
			),
			pick: "postgres, 1.25× [1.25, 1.25], 3 rounds", winner: "postgres",
			whyParts: []string{"1,000 TPS vs 800 (mariadb)", "mysql not ranked (incomplete)"},
		},
		{
			name: "incomplete repeat is left out of the median and the interval",
			results: slices.Concat(
				reps("postgres", rw, 1000, 1002, 998),
				reps("mysql", rw, 1100, 1110, 1105),
				[]*result.Result{run("mysql", rw, 8, 100, false)},
			),
			pick: "mysql, 1.10× [1.09, 1.12], 3 rounds", winner: "mysql",
			whyParts: []string{"1,105 TPS vs 1,000 (postgres)"},
		},
		{
			name: "nothing complete",
			results: []*result.Result{
				run("postgres", rw, 8, 1000, false),
				run("mysql", rw, 8, 900, false),
			},
			pick:     "none (no complete result)",
			whyParts: []string{"postgres and mysql not ranked (incomplete)"},
		},
		{
			name:    "one engine",
			results: []*result.Result{run("mariadb", rw, 8, 1000, true)},
			pick:    "mariadb", winner: "mariadb",
			whyParts: []string{"only complete result: 1,000 TPS"},
		},
		{
			name: "decided at the largest thread count all engines ran",
			results: []*result.Result{
				run("postgres", rw, 4, 500, true), run("postgres", rw, 16, 900, true), run("postgres", rw, 64, 3000, true),
				run("mysql", rw, 4, 600, true), run("mysql", rw, 16, 1200, true),
			},
			pick:     "unconfirmed: mysql leads",
			whyParts: []string{"1,200 TPS vs 900 (postgres)"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newModel(&Input{Results: tc.results})
			ds := m.decisions()
			if len(ds) != 1 {
				t.Fatalf("got %d decisions, want 1", len(ds))
			}
			d := ds[0]
			if d.Pick != tc.pick {
				t.Errorf("Pick = %q, want %q (why: %s)", d.Pick, tc.pick, d.Why)
			}
			winner := ""
			if d.Winner != nil {
				winner = d.Winner.Name
			}
			if winner != tc.winner {
				t.Errorf("Winner = %q, want %q", winner, tc.winner)
			}
			for _, p := range tc.whyParts {
				if !strings.Contains(d.Why, p) {
					t.Errorf("Why = %q, want it to contain %q", d.Why, p)
				}
			}
		})
	}
}

func TestUseCaseNames(t *testing.T) {
	for w, want := range map[string]string{
		"oltp_read_write":   "Mixed OLTP (reads + writes)",
		"oltp_read_only":    "Read-heavy",
		"oltp_point_select": "Key-value lookups",
		"oltp_insert":       "Ingest / insert-heavy",
		"oltp_write_only":   "Write-heavy",
		"tpcc_like":         "tpcc_like",
	} {
		if got := useCase(w); got != want {
			t.Errorf("useCase(%q) = %q, want %q", w, got, want)
		}
	}
}

func TestIncompleteMarkedInResults(t *testing.T) {
	in := &Input{Results: []*result.Result{
		run("postgres", "oltp_read_write", 8, 1000, true),
		run("mysql", "oltp_read_write", 8, 5000, false),
	}}
	md, err := Markdown(in)
	if err != nil {
		t.Fatal(err)
	}
	s := string(md)
	for _, want := range []string{"5,000 (incomplete)", "| TPS | 1,000 | 5,000 (incomplete) |", "| **postgres** |"} {
		if !strings.Contains(s, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "**5,000") {
		t.Error("an incomplete result is marked best")
	}
}

// A run that measured too little (here: interrupted in its warm-up, the 149,142 TPS of two
// transactions in 13 µs) is never ranked nor shown as a rate.
func TestTooLittleIsNotRanked(t *testing.T) {
	no := false
	short := run("mysql", "oltp_read_write", 8, 149142, true)
	short.TPS, short.Meaningful, short.NotMeaningful = 0, &no, "stopped during the warm-up"
	in := &Input{Results: []*result.Result{run("postgres", "oltp_read_write", 8, 1000, true), short}}
	md, err := Markdown(in)
	if err != nil {
		t.Fatal(err)
	}
	s := string(md)
	for _, want := range []string{"too little to rank: stopped during the warm-up", "| **postgres** |"} {
		if !strings.Contains(s, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "149,142") || strings.Contains(s, "**mysql**") {
		t.Errorf("a run too short to mean anything is shown or ranked:\n%s", s)
	}
}

// Two releases of one engine: the upgrade row says what changed, beyond the noise or within it.
func TestUpgradeRows(t *testing.T) {
	// Three rounds of each release, 1% apart around tps.
	mk := func(kind, release string, tps float64) *group {
		return &group{V: &variant{Kind: kind, Engine: kind + "@" + release, Name: kind + "@" + release}, TPS: tps,
			Samples: []float64{tps, tps * 1.01, tps * 0.99}, Lat: result.Latency{P95: 10}}
	}
	for _, c := range []struct {
		name     string
		cands    []*group
		picks    []string
		useCases []string
	}{
		{"faster", []*group{mk("postgres", "15", 1000), mk("postgres", "18", 1200), mk("mariadb", "11.8", 900)},
			[]string{"+20.0% TPS (faster), 1.20× [1.20, 1.20], 3 rounds"}, []string{"Upgrade postgres@15 → postgres@18"}},
		{"within 5%", []*group{mk("mariadb", "10.11", 1000), mk("mariadb", "11.8", 990)},
			[]string{"no change"}, []string{"Upgrade mariadb@10.11 → mariadb@11.8"}},
		{"too noisy to say", []*group{mk("mariadb", "10.11", 1000), {V: &variant{Kind: "mariadb", Engine: "mariadb@11.8", Name: "mariadb@11.8"},
			TPS: 980, Samples: []float64{1020, 980, 940}}},
			[]string{"undecided: −2.0% TPS"}, []string{"Upgrade mariadb@10.11 → mariadb@11.8"}},
		{"three releases, two steps", []*group{mk("postgres", "15", 1000), mk("postgres", "17", 800), mk("postgres", "18", 1000)},
			[]string{"−20.0% TPS (slower), 0.80× [0.80, 0.80], 3 rounds", "+25.0% TPS (faster), 1.25× [1.25, 1.25], 3 rounds"}, []string{"Upgrade postgres@15 → postgres@17", "Upgrade postgres@17 → postgres@18"}},
		{"single runs are unconfirmed", []*group{{V: &variant{Kind: "postgres", Engine: "postgres@15", Name: "postgres@15"}, TPS: 1000, Samples: []float64{1000}},
			{V: &variant{Kind: "postgres", Engine: "postgres@18", Name: "postgres@18"}, TPS: 1500, Samples: []float64{1500}}},
			[]string{"unconfirmed: +50.0% TPS"}, []string{"Upgrade postgres@15 → postgres@18"}},
		{"one release each", []*group{mk("postgres", "18", 1000), mk("mysql", "9.7", 800)}, nil, nil},
	} {
		ds := upgrades(interval.Fixed, "oltp_read_write", 8, c.cands)
		var picks, ucs []string
		for _, d := range ds {
			picks = append(picks, d.Pick)
			ucs = append(ucs, d.UseCase)
			if d.Winner != nil || !strings.Contains(d.Why, "TPS vs") {
				t.Errorf("%s: upgrade row %+v", c.name, d)
			}
		}
		if strings.Join(picks, "|") != strings.Join(c.picks, "|") || strings.Join(ucs, "|") != strings.Join(c.useCases, "|") {
			t.Errorf("%s: picks %q use cases %q, want %q %q", c.name, picks, ucs, c.picks, c.useCases)
		}
	}
}

// Two releases of one engine make every column name its release, oldest first within a kind,
// and each release its own group; with one release per engine the columns keep the kind alone.
func TestVersionColumns(t *testing.T) {
	const rw = "oltp_read_write"
	at := func(kind, version string, tps float64) *result.Result {
		r := run(kind, rw, 8, tps, true)
		r.Engine.Version = version
		return r
	}
	m := newModel(&Input{Results: []*result.Result{
		at("postgres", "18.1", 1200), at("mysql", "9.7.4", 900), at("postgres", "15.18", 1000), at("mariadb", "11.8.3", 800),
	}})
	var names []string
	for _, v := range m.Variants {
		names = append(names, v.Name)
		if g := m.group(v, rw, 8); g == nil || len(g.Runs) != 1 {
			t.Errorf("%s: group %+v, want one run of its own", v.Name, g)
		}
	}
	if got := strings.Join(names, ","); got != "postgres@15,postgres@18,mysql@9.7,mariadb@11.8" {
		t.Errorf("columns %s", got)
	}
	single := newModel(&Input{Results: []*result.Result{at("postgres", "18.1", 1200), at("mysql", "9.7.4", 900)}})
	if single.Variants[0].Name != "postgres" || single.Variants[1].Name != "mysql" {
		t.Errorf("one release each: columns %s, %s", single.Variants[0].Name, single.Variants[1].Name)
	}
}

// An open-loop run's schedule lag is in the results table, so a reader sees how much of its
// latency was fairbench's own lateness; closed-loop runs have no such row.
func TestScheduleLagShown(t *testing.T) {
	open := run("postgres", "oltp_point_select", 8, 2000, true)
	open.Rate, open.ScheduleLagMS = 2000, &result.Latency{P50: 0.004, P99: 0.052}
	md, err := Markdown(&Input{Results: []*result.Result{open, run("mysql", "oltp_point_select", 8, 2000, true)}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| schedule lag p50 µs | 4 | — |", "| schedule lag p99 µs | 52 | — |"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}
}

// A pick drawn from runs that shared the machine with other work says so beside it.
func TestBusyMachineSaidBesidePick(t *testing.T) {
	const rw = "oltp_read_write"
	busy := run("mysql", rw, 8, 1100, true)
	busy.Machine = &result.MachineLoad{OthersCPUPctMean: 35, OthersCPUPctMax: 48, Busy: true, BusyPct: 10}
	quiet := run("postgres", rw, 8, 1000, true)
	quiet.Machine = &result.MachineLoad{OthersCPUPctMean: 2, BusyPct: 10}
	ds := newModel(&Input{Results: []*result.Result{quiet, busy}}).decisions()
	if len(ds) != 1 || !strings.Contains(ds[0].Why, "measured while other processes used the CPU (mysql 35.0% of the machine)") {
		t.Errorf("decisions %+v: want the busy mysql run named beside the pick", ds)
	}
	ds = newModel(&Input{Results: []*result.Result{quiet, run("mysql", rw, 8, 1100, true)}}).decisions()
	if strings.Contains(ds[0].Why, "other processes") {
		t.Errorf("a quiet comparison was said busy: %s", ds[0].Why)
	}
}

// A compare that ran rounds until decided is judged at the look its rounds reached, and a pick
// its rounds leave open is listed for more, with only the engines in question.
func TestRoundsUntilDecided(t *testing.T) {
	const rw, ro = "oltp_read_write", "oltp_read_only"
	// Eight rounds: postgres leads mariadb on rw by about 12% with noise; mysql is far behind.
	// On ro the two lead engines are equal within 1%.
	results := slices.Concat(
		reps("postgres", rw, 1120, 1010, 1150, 1000, 1190, 1090, 1230, 980),
		reps("mariadb", rw, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000),
		reps("mysql", rw, 500, 510, 490, 505, 495, 500, 502, 498),
		reps("postgres", ro, 2000, 2010, 1990, 2005, 1995, 2000, 2002, 1998),
		reps("mariadb", ro, 2000, 2000, 2000, 2000, 2000, 2000, 2000, 2000),
	)
	seq := &result.Environment{Rounds: &result.Rounds{Rule: "sequential", MinRounds: 5, BudgetS: 600, SpentS: 420, Stopped: "budget"}}
	m := newModel(&Input{Results: results, Environment: seq})
	var rwPick decision
	for _, d := range m.decisions() {
		if d.Workload == rw {
			rwPick = d
		}
	}
	if !strings.HasPrefix(rwPick.Pick, "undecided: postgres leads") || !strings.Contains(rwPick.Why, "look 2 of rounds until decided") ||
		!strings.Contains(rwPick.Why, "8 rounds") {
		t.Errorf("rw under the sequential rule: %q / %q; want undecided at look 2 from 8 rounds", rwPick.Pick, rwPick.Why)
	}
	// The same rounds judged once at 95% decide: the rule is what keeps them open.
	fixed := decide(interval.Fixed, rw, 8, newModel(&Input{Results: results}).headlineGroups(rw))
	if fixed.Winner == nil {
		t.Errorf("the fixed rule should pick from these rounds: %q", fixed.Pick)
	}
	open := OpenPicks(&Input{Results: results, Environment: seq})
	if len(open) != 1 || open[0].Workload != rw || !slices.Equal(open[0].Engines, []string{"postgres", "mariadb"}) || open[0].Threads != 8 {
		t.Errorf("open picks %+v, want rw on postgres and mariadb at 8 threads (mysql is decided slower, ro is a tie)", open)
	}
	if open[0].ToDecide <= 8 || !strings.Contains(rwPick.Why, interval.DecideText(open[0].ToDecide)) {
		t.Errorf("open pick %+v, why %q: want the rounds that would decide it, said in the row", open[0], rwPick.Why)
	}
	if text := m.roundsText(); !strings.Contains(text, "looks after 5, 8, 12, 18") || !strings.Contains(text, "Budget 10m0s, spent 7m0s; stopped by the budget") {
		t.Errorf("rounds text %q", text)
	}
	// A round the budget narrowed says which picks waited.
	m.Env.Rounds.Added = []result.AddedRound{{Round: 6, Workloads: []string{rw}, Engines: []string{"mariadb", "postgres"}, Deferred: []string{"oltp_insert", "oltp_point_select"}}}
	if text, want := m.roundsText(), "round 6: oltp_read_write on mariadb, postgres (the budget held only the picks nearest a decision: oltp_insert and oltp_point_select waited)"; !strings.Contains(text, want) {
		t.Errorf("rounds text %q, want it to hold %q", text, want)
	}
}

// An open pick says how many rounds its interval can use: fewer than compare ran where an engine
// lost one (stolen from, failed), so that compare adds only the rounds to that pick's next look.
func TestOpenPickSaysItsRounds(t *testing.T) {
	const rw = "oltp_read_write"
	seq := &result.Environment{Rounds: &result.Rounds{Rule: "sequential", MinRounds: 5}}
	for _, tc := range []struct {
		lost       int // mariadb's round lost, 0 for none
		wantRounds int
	}{{0, 8}, {6, 7}} {
		pg := numbered(reps("postgres", rw, 1120, 1010, 1150, 1000, 1190, 1090, 1230, 980))
		ma := numbered(reps("mariadb", rw, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000))
		if tc.lost > 0 {
			ma[tc.lost-1].Complete, ma[tc.lost-1].Error = false, "the hypervisor stole 20% of the machine"
		}
		open := OpenPicks(&Input{Results: slices.Concat(pg, ma), Environment: seq})
		if len(open) != 1 || open[0].Rounds != tc.wantRounds {
			t.Errorf("round %d lost: open picks %+v, want one on %s with %d rounds", tc.lost, open, rw, tc.wantRounds)
		}
	}
}

// The leader named and the ratio given come from one estimator: rounds whose median favours one
// engine and whose ratios favour the other name the other.
func TestLeaderAgreesWithRatio(t *testing.T) {
	const ins = "oltp_insert"
	results := slices.Concat(
		reps("postgres", ins, 1010, 1010, 1010, 600, 1010),
		reps("mariadb", ins, 1000, 1000, 1000, 1000, 1000),
	)
	d := decide(interval.Fixed, ins, 8, newModel(&Input{Results: results}).headlineGroups(ins))
	if !strings.Contains(d.Pick, "mariadb leads") {
		t.Errorf("pick %q; the rounds' ratio favours mariadb (postgres's median is higher, its geometric mean lower)", d.Pick)
	}
	if strings.Contains(d.Why, "0.9") && strings.Contains(d.Why, "ratio 0.") {
		t.Errorf("the leader is given a ratio below 1: %q", d.Why)
	}
	// The row shows medians, mariadb's the lower: it says why mariadb leads all the same.
	if !strings.Contains(d.Why, "1,000 TPS vs 1,010 (postgres) (medians; mariadb leads by the rounds' geometric mean") {
		t.Errorf("why %q: want the medians explained beside the leader", d.Why)
	}
}

// A pick says how many of each engine's rounds were measured again for steal, and warns where
// even the last try was stolen from.
func TestStolenWindowsSaidBesidePick(t *testing.T) {
	const ins = "oltp_insert"
	again := run("postgres", ins, 8, 1000, true)
	again.Machine = &result.MachineLoad{StealPctMean: 1, StealLimitPct: 5, SetAside: []result.SetAsideWindow{{StealPctMean: 14, StealPctMax: 20, TPS: 700}}}
	stolen := run("mariadb", ins, 8, 1100, true)
	stolen.Machine = &result.MachineLoad{StealPctMean: 9, StealLimitPct: 5, SetAside: []result.SetAsideWindow{{StealPctMean: 14, TPS: 700}, {StealPctMean: 11, TPS: 800}}}
	ds := newModel(&Input{Results: []*result.Result{again, stolen}}).decisions()
	why := ds[0].Why
	for _, want := range []string{"measured again after a window the hypervisor stole more than 5.0% of the machine from: postgres 1 of 1 rounds, mariadb 1 of 1 rounds",
		"⚠ measured while the hypervisor stole more than 5.0% of the machine, however often measured again (mariadb 1 of 1 rounds)"} {
		if !strings.Contains(why, want) {
			t.Errorf("why %q: want %q", why, want)
		}
	}
	quiet := run("mariadb", ins, 8, 1100, true)
	quiet.Machine = &result.MachineLoad{StealPctMean: 1}
	if why := newModel(&Input{Results: []*result.Result{quiet, run("postgres", ins, 8, 1000, true)}}).decisions()[0].Why; strings.Contains(why, "hypervisor") {
		t.Errorf("no window was stolen from, and the pick says %q", why)
	}
}

// A knob's effect is judged by the comparison's rule, each flipped run against the plain run it
// followed (rounds added for another pick ran the plain runs alone), and an effect still open
// is listed for more rounds of that engine's own and flipped runs.
func TestKnobEffectsUnderTheRule(t *testing.T) {
	const ins, ro = "oltp_insert", "oltp_read_only"
	at := func(rs []*result.Result, minutes ...int) []*result.Result {
		for i, r := range rs {
			r.StartedAt = time.Date(2026, 11, 28, 12, minutes[i], 0, 0, time.UTC)
		}
		return rs
	}
	flip := func(rs []*result.Result) []*result.Result {
		for _, r := range rs {
			r.Flipped, r.FlipExpect = []string{"synchronous-commit"}, 1
		}
		return rs
	}
	results := slices.Concat(
		// insert: five rounds with a flipped run after each, then three rounds for the pick alone.
		at(reps("postgres", ins, 1000, 1100, 900, 1000, 1050, 3000, 3100, 2900), 0, 2, 4, 6, 8, 10, 11, 12),
		at(flip(reps("postgres", ins, 2000, 2200, 1800, 2000, 2100)), 1, 3, 5, 7, 9),
		at(reps("mariadb", ins, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000), 0, 2, 4, 6, 8, 10, 11, 12),
		// read-only: the write knob's effect is wide after five rounds.
		at(reps("postgres", ro, 1000, 1000, 1000, 1000, 1000), 20, 22, 24, 26, 28),
		at(flip(reps("postgres", ro, 1300, 800, 1100, 900, 1000)), 21, 23, 25, 27, 29),
		at(reps("mariadb", ro, 1000, 1000, 1000, 1000, 1000), 20, 22, 24, 26, 28),
	)
	seq := &result.Environment{Rounds: &result.Rounds{Rule: "sequential", MinRounds: 5}}
	m := newModel(&Input{Results: results, Environment: seq})
	eff := m.knobEffect(m.knobBase(knobKey{"synchronous-commit", "postgres", ins, 8}), m.knobRuns()[knobKey{"synchronous-commit", "postgres", ins, 8}])
	// Paired by time the flipped runs double their own rounds; by count the added rounds' 3,000
	// would not enter (five each), and paired by index with the median's rounds they would.
	if !eff.Real || math.Abs(eff.Ratio.Estimate-2) > 0.01 || eff.Ratio.Rounds != 5 || eff.Ratio.Look != 1 {
		t.Errorf("insert's effect %+v: want +100%% from the five pairs at look 1", eff)
	}
	var open []Open
	for _, o := range OpenPicks(&Input{Results: results, Environment: seq}) {
		if o.Knob != "" {
			open = append(open, o)
		}
	}
	if len(open) != 1 || open[0].Workload != ro || open[0].Knob != "synchronous-commit" || !slices.Equal(open[0].Engines, []string{"postgres"}) {
		t.Errorf("open knob effects %+v, want read-only's on postgres", open)
	}
	// It says what would decide it, as an open pick does (compare's log names the budget).
	if open[0].ToDecide <= 5 {
		t.Errorf("open knob effect %+v: want the rounds that would decide it, more than the five it has", open[0])
	}
}

// A resource row names as lowest the engine its ratio favours: ranked by the rounds' geometric
// mean, the ratio's estimator, though the figures shown are medians.
func TestLowestAgreesWithRatio(t *testing.T) {
	a, b := &variant{Name: "a", Index: 0}, &variant{Name: "b", Index: 1}
	m := &model{rule: interval.Fixed}
	// a's median is lower (100 against 105), its rounds' geometric mean higher (one round at 300).
	d, ok := m.lowest("Lowest memory", map[*variant]float64{a: 100, b: 105},
		map[*variant]series{a: {vals: []float64{100, 100, 100, 100, 300}}, b: {vals: []float64{105, 105, 105, 105, 105}}}, "MB", "test")
	if !ok || strings.HasPrefix(d.Pick, "a") || strings.Contains(d.Pick, "a lowest") {
		t.Errorf("pick %q (%s): the rounds' ratio favours b", d.Pick, d.Why)
	}
}

// Two engines' figures are paired by round: a round one engine lost (incomplete, so left out of
// its pick) drops that round from the pair instead of shifting every later round against the
// other engine's.
func TestPairedByRound(t *testing.T) {
	const rw = "oltp_read_write"
	// The machine drifts a lot from round to round; a is 10% faster in every round.
	b := numbered(reps("mariadb", rw, 1000, 2000, 3000, 4000, 5000))
	a := numbered(reps("postgres", rw, 1100, 2200, 3300, 4400, 5500))
	a[1].Complete, a[1].Error = false, "the server froze"
	d := decide(interval.Fixed, rw, 8, newModel(&Input{Results: slices.Concat(a, b)}).headlineGroups(rw))
	if d.Winner == nil || d.Winner.Kind != "postgres" || !strings.Contains(d.Pick, "1.10× [1.10, 1.10], 4 rounds") {
		t.Errorf("pick %q (%s): want postgres 1.10× from the four rounds both ran", d.Pick, d.Why)
	}
}

// A round still stolen from after compare's tries leaves its pick, named, while two or more
// rounds remain; the other engines' rounds stay, paired by number.
func TestStolenRoundsLeftOut(t *testing.T) {
	const ins = "oltp_insert"
	a := numbered(reps("postgres", ins, 1100, 1100, 500, 1100, 1100))
	b := numbered(reps("mariadb", ins, 1000, 1000, 1000, 1000, 1000))
	a[2].Machine = &result.MachineLoad{StealPctMean: 21, StealLimitPct: 5, SetAside: []result.SetAsideWindow{{StealPctMean: 25, TPS: 450}, {StealPctMean: 19, TPS: 520}}}
	d := decide(interval.Fixed, ins, 8, newModel(&Input{Results: slices.Concat(a, b)}).headlineGroups(ins))
	if !strings.Contains(d.Pick, "1.10× [1.10, 1.10], 4 rounds") ||
		!strings.Contains(d.Why, "postgres's round 3 (the hypervisor stole 21.0% of the machine, however often measured again) left out of the pick") {
		t.Errorf("pick %q / %q: want round 3 left out and named, 1.10× from the other four", d.Pick, d.Why)
	}
}

// numbered gives each run its comparison round, from 1, in the order given.
func numbered(rs []*result.Result) []*result.Result {
	for i, r := range rs {
		r.Round = i + 1
	}
	return rs
}
