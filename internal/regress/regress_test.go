package regress

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/fairbench/fairbench/internal/histogram"
	"github.com/fairbench/fairbench/internal/result"
)

// run makes a complete result whose intervals scatter around tps (±2%) and p99.
func run(engine string, tps, p99 float64, intervals int, seed uint64) *result.Result {
	rng := rand.New(rand.NewPCG(seed, 1))
	h := histogram.New()
	r := &result.Result{Complete: true, Engine: result.Engine{Kind: engine}, Workload: result.Workload{Name: "oltp_read_write"},
		Threads: 4, DurationS: float64(intervals)}
	for i := 0; i < intervals; i++ {
		iv := result.Interval{T: float64(i + 1), TPS: tps * (1 + 0.04*(rng.Float64()-0.5)), P99MS: p99 * (1 + 0.04*(rng.Float64()-0.5))}
		r.Intervals = append(r.Intervals, iv)
		r.Transactions += int64(iv.TPS)
		h.Record(int64(p99 * 1000 / 2))
	}
	r.TPS = float64(r.Transactions) / r.DurationS
	r.LatencyMS = h.Latency()
	r.LatencyMS.P99 = p99
	r.Histogram, _ = h.Encode()
	return r
}

func TestDiffVerdicts(t *testing.T) {
	tests := []struct {
		name    string
		a, b    []*result.Result
		verdict string
		unit    string
	}{
		{"same engine, same speed", []*result.Result{run("postgres", 1000, 5, 20, 1)}, []*result.Result{run("postgres", 1000, 5, 20, 2)}, NoChange, "intervals"},
		{"30% fewer transactions", []*result.Result{run("postgres", 1000, 5, 20, 1)}, []*result.Result{run("postgres", 700, 5, 20, 2)}, Slower, "intervals"},
		{"20% more transactions", []*result.Result{run("mariadb", 1000, 5, 20, 1)}, []*result.Result{run("mariadb", 1200, 5, 20, 2)}, Faster, "intervals"},
		{"repeats are the samples", []*result.Result{run("mysql", 1000, 5, 5, 1), run("mysql", 1010, 5, 5, 2), run("mysql", 990, 5, 5, 3), run("mysql", 1000, 5, 5, 4)},
			[]*result.Result{run("mysql", 500, 5, 5, 5), run("mysql", 505, 5, 5, 6), run("mysql", 495, 5, 5, 7), run("mysql", 500, 5, 5, 8)}, Slower, "repeats"},
		{"three repeats pool their intervals", []*result.Result{run("mysql", 1000, 5, 5, 1), run("mysql", 1010, 5, 5, 2), run("mysql", 990, 5, 5, 3)},
			[]*result.Result{run("mysql", 500, 5, 5, 5), run("mysql", 505, 5, 5, 6), run("mysql", 495, 5, 5, 7)}, Slower, "intervals"},
		{"two intervals cannot decide", []*result.Result{run("postgres", 1000, 5, 2, 1)}, []*result.Result{run("postgres", 500, 5, 2, 2)}, NoChange, "intervals"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rows := Diff(tc.a, tc.b, Options{})
			if len(rows) != 1 {
				t.Fatalf("%d rows, want 1", len(rows))
			}
			if rows[0].Verdict != tc.verdict || rows[0].Unit != tc.unit {
				t.Errorf("verdict %q over %s (p=%.3g, change %.3f), want %q over %s", rows[0].Verdict, rows[0].Unit, rows[0].P, rows[0].Change, tc.verdict, tc.unit)
			}
		})
	}
}

func TestOpenLoopJudgesLatency(t *testing.T) {
	a, b := run("postgres", 1000, 5, 20, 1), run("postgres", 1000, 9, 20, 2)
	a.Rate, b.Rate = 1000, 1000
	rows := Diff([]*result.Result{a}, []*result.Result{b}, Options{})
	if rows[0].Metric != "p99_ms" || rows[0].Verdict != Slower {
		t.Fatalf("open loop judged %s → %s, want p99_ms → slower", rows[0].Metric, rows[0].Verdict)
	}
}

// Closed loop: throughput decides, and p99 is tested beside it on the same samples.
func TestClosedLoopTestsP99Too(t *testing.T) {
	rows := Diff([]*result.Result{run("postgres", 1000, 5, 20, 1)}, []*result.Result{run("postgres", 1000, 9, 20, 2)}, Options{})
	r := rows[0]
	if r.Metric != "tps" || r.Verdict != NoChange || r.P99 == nil || r.P99.Verdict != Slower || r.P99.Change < 0.7 {
		t.Fatalf("judged %s → %s, p99 %+v: want tps → no change, p99 → slower by about 80%%", r.Metric, r.Verdict, r.P99)
	}
	var b strings.Builder
	if err := Markdown(&b, rows, Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "ms (+79.5%)") || !strings.Contains(b.String(), ": slower |") {
		t.Errorf("p99's test missing from:\n%s", b.String())
	}
}

func TestNotComparable(t *testing.T) {
	inc := run("postgres", 1000, 5, 20, 2)
	inc.Complete, inc.Error = false, "interrupted"
	tests := []struct {
		name string
		a, b []*result.Result
		why  string
	}{
		{"only in A", []*result.Result{run("postgres", 1, 1, 5, 1)}, nil, "only in A"},
		{"only in B", nil, []*result.Result{run("mariadb", 1, 1, 5, 1)}, "only in B"},
		{"incomplete", []*result.Result{run("postgres", 1000, 5, 20, 1)}, []*result.Result{inc}, "incomplete"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rows := Diff(tc.a, tc.b, Options{})
			if rows[0].Verdict != NotComparable || !strings.Contains(rows[0].Why, tc.why) {
				t.Errorf("got %q (%s), want not comparable: %s", rows[0].Verdict, rows[0].Why, tc.why)
			}
		})
	}
}

func TestFailIf(t *testing.T) {
	f, err := ParseFailIf("slower-than=5%")
	if err != nil || f.SlowerThan != 0.05 {
		t.Fatalf("ParseFailIf = %v, %v", f, err)
	}
	rows := []Row{{Verdict: Slower, Change: -0.30}, {Verdict: Slower, Change: -0.03}, {Verdict: Faster, Change: 0.5}, {Verdict: NoChange, Change: -0.2}}
	if bad := f.Failing(rows); len(bad) != 1 || bad[0].Change != -0.30 {
		t.Errorf("Failing = %+v, want the 30%% slower row only", bad)
	}
	for _, in := range []string{"", "slower=5%", "slower-than=x", "slower-than=-1%", "slower-than=NaN", "faster-than=5%"} {
		if _, err := ParseFailIf(in); err == nil {
			t.Errorf("ParseFailIf(%q) accepted", in)
		}
	}
}

func TestMarkdown(t *testing.T) {
	rows := Diff([]*result.Result{run("postgres", 1000, 5, 20, 1)}, []*result.Result{run("postgres", 700, 5, 20, 2), run("mysql", 1, 1, 3, 3)}, Options{})
	var b strings.Builder
	if err := Markdown(&b, rows, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Mann-Whitney U", "| postgres oltp_read_write threads=4 | tps of intervals |", "slower", "not comparable: only in B"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("missing %q in:\n%s", want, b.String())
		}
	}
}

// A run measured while others used the machine is named beside the verdict, whatever it is.
func TestBusyRunsAreNamed(t *testing.T) {
	b := []*result.Result{run("postgres", 700, 5, 20, 2), run("postgres", 700, 5, 20, 3)}
	b[1].Machine = &result.MachineLoad{OthersCPUPctMean: 40, Busy: true, BusyPct: 10}
	rows := Diff([]*result.Result{run("postgres", 1000, 5, 20, 1)}, b, Options{})
	if len(rows) != 1 || rows[0].Busy != "1 of 2 runs in B" {
		t.Fatalf("rows %+v, want one naming 1 of 2 runs in B busy", rows)
	}
	var out strings.Builder
	if err := Markdown(&out, rows, Options{}); err != nil {
		t.Fatal(err)
	}
	if want := "slower; busy machine (1 of 2 runs in B): weak evidence"; !strings.Contains(out.String(), want) {
		t.Errorf("missing %q in:\n%s", want, out.String())
	}
	quiet := Diff([]*result.Result{run("postgres", 1000, 5, 20, 1)}, b[:1], Options{})
	if quiet[0].Busy != "" {
		t.Errorf("quiet runs marked busy: %q", quiet[0].Busy)
	}
}

// A read statement whose plan differs between the sides is named beside the verdict.
func TestPlanChangesAreNamed(t *testing.T) {
	withPlans := func(r *result.Result, search string) *result.Result {
		r.Dataset = &result.Dataset{Answers: []result.Answer{
			{Transaction: "get", Statement: 1, Plan: "item: index lookup (item_pkey)"},
			{Transaction: "search", Statement: 1, Plan: search}}}
		return r
	}
	a := withPlans(run("postgres", 1000, 5, 20, 1), "item: index lookup (item_name)")
	b := withPlans(run("postgres", 600, 5, 20, 2), "item: full scan")
	rows := Diff([]*result.Result{a}, []*result.Result{b}, Options{})
	if len(rows) != 1 || strings.Join(rows[0].PlansChanged, ",") != "search #1" {
		t.Fatalf("rows %+v, want search #1's plan named as changed", rows)
	}
	var out strings.Builder
	if err := Markdown(&out, rows, Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "slower; plan changed: search #1") {
		t.Errorf("missing the plan change in:\n%s", out.String())
	}
}

// TPC-H runs are judged by their geometric mean over repeats (lower is better), shown and not
// judged with one run a side, and a query whose plan changed is named with its times.
func TestTPCHRunsAreJudgedByTheirGeometricMean(t *testing.T) {
	tpch := func(geomean, q18 float64, plan string) *result.Result {
		return &result.Result{Engine: result.Engine{Kind: "mariadb"}, Workload: result.Workload{Name: "tpch"}, Threads: 1, Complete: true, Transactions: 22,
			TPCH: &result.TPCH{Mode: "power", GeoMeanS: geomean, Queries: []result.TPCHQuery{
				{Query: 1, Seconds: 1, Status: "ok", Plan: "lineitem: full scan"},
				{Query: 18, Seconds: q18, Status: "ok", Plan: plan}}}}
	}
	before := "customer: full scan; orders: index lookup (tpch_o_custkey)"
	after := "orders: full scan; customer: index lookup (PRIMARY)"
	for _, tc := range []struct {
		name    string
		a, b    []*result.Result
		verdict string
		plans   string
	}{
		{"one run a side", []*result.Result{tpch(1, 5, before)}, []*result.Result{tpch(2, 78, after)}, NotComparable, "Q18 (5.00 → 78.00 s)"},
		{"four runs a side, slower", []*result.Result{tpch(1, 5, before), tpch(1.01, 5, before), tpch(0.99, 5, before), tpch(1.02, 5, before)},
			[]*result.Result{tpch(2, 78, before), tpch(2.1, 78, before), tpch(1.9, 78, before), tpch(2.05, 78, before)}, Slower, ""},
		{"four runs a side, faster", []*result.Result{tpch(2, 5, before), tpch(2.1, 5, before), tpch(1.9, 5, before), tpch(2.05, 5, before)},
			[]*result.Result{tpch(1, 5, before), tpch(1.01, 5, before), tpch(0.99, 5, before), tpch(1.02, 5, before)}, Faster, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows := Diff(tc.a, tc.b, Options{})
			if len(rows) != 1 {
				t.Fatalf("%d rows, want 1: %+v", len(rows), rows)
			}
			r := rows[0]
			if r.Metric != "geomean_s" || r.Verdict != tc.verdict || strings.Join(r.PlansChanged, ",") != tc.plans {
				t.Errorf("judged %s: %s (%s), plans changed %q; want %s, %q", r.Metric, r.Verdict, r.Why, r.PlansChanged, tc.verdict, tc.plans)
			}
			if r.Verdict == NotComparable && (r.A != 1 || r.B != 2 || !strings.Contains(r.Why, "4 runs a side")) {
				t.Errorf("one run a side: A %v, B %v, why %q; want the medians shown and the runs needed", r.A, r.B, r.Why)
			}
		})
	}
}

// --fail-if is user input: whatever it says, the parser gives one error line or a threshold a
// gate can use (finite, not negative).
func FuzzParseFailIf(f *testing.F) {
	for _, s := range []string{"slower-than=5%", "slower-than=0.05", "slower-than = 5 %", "slower-than=1e309", "slower-than=-0", "faster-than=5%", "=", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		g, err := ParseFailIf(s)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("ParseFailIf(%q): error of more than one line: %q", s, err)
			}
			return
		}
		if math.IsNaN(g.SlowerThan) || math.IsInf(g.SlowerThan, 0) || g.SlowerThan < 0 {
			t.Errorf("ParseFailIf(%q) = %v, want a finite threshold of 0 or more", s, g.SlowerThan)
		}
	})
}

// search is a capacity search's result: its last probe's rate differs from search to search, its
// capacity is what diff judges.
func search(engine string, perS float64, seed uint64, reached string) *result.Result {
	r := run(engine, perS, 8, 5, seed)
	r.Rate = perS * (1 + 0.01*float64(seed))
	r.Capacity = &result.Capacity{SLO: "p99<=20ms", PerS: perS, Reached: reached}
	return r
}

// Capacity searches pair by their objective, whatever rates their probes ran at, and are judged
// by the capacity each found; a search that found none is no sample, and is counted aside.
func TestDiffCapacity(t *testing.T) {
	var a, b []*result.Result
	for i := range uint64(4) {
		a = append(a, search("postgres", 1000+float64(i)*10, i, "confirm"))
		b = append(b, search("postgres", 1250+float64(i)*10, i+10, "confirm"))
	}
	rows := Diff(a, b, Options{})
	if len(rows) != 1 || rows[0].Metric != "capacity_per_s" || rows[0].Verdict != Faster || rows[0].Key.Rate != 0 {
		t.Fatalf("rows %+v: want one row, capacity judged, faster", rows)
	}
	if !strings.Contains(rows[0].Key.String(), "capacity at p99 ≤ 20ms") {
		t.Errorf("step named %q", rows[0].Key.String())
	}
	b[3] = search("postgres", 300, 99, "no rate")
	b[3].Capacity.PerS = 0
	rows = Diff(a, b, Options{})
	if rows[0].Verdict != NotComparable || !strings.Contains(rows[0].Why, "1 search in B found no capacity") {
		t.Errorf("a search without a capacity: %+v", rows[0])
	}
}
