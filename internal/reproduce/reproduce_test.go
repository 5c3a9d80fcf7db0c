package reproduce

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/interval"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/study"
	"github.com/fairbench/fairbench/internal/suite"
)

func fake(engine, workload string, tps, qps float64) *result.Result {
	return &result.Result{Complete: true, Engine: result.Engine{Kind: engine, Version: engine + " 99"}, Workload: result.Workload{Name: workload},
		TPS: tps, QPS: qps, DurationS: 10, Server: &result.Server{MemIdleMB: 100, MemLoadMB: 500}}
}

// published shoot-out shape: PostgreSQL wins read-write by far over MySQL; MariaDB wins read-only.
func shootoutResults(rwMySQL float64) Measured {
	fair := []*result.Result{
		fake("postgres", "oltp_read_write", 1000, 20000), fake("mysql", "oltp_read_write", rwMySQL, 20*rwMySQL), fake("mariadb", "oltp_read_write", 980, 19600),
		fake("postgres", "oltp_read_only", 1000, 16000), fake("mysql", "oltp_read_only", 950, 15200), fake("mariadb", "oltp_read_only", 1200, 19200),
		fake("postgres", "oltp_point_select", 40000, 40000), fake("mysql", "oltp_point_select", 30000, 30000), fake("mariadb", "oltp_point_select", 35000, 35000),
		fake("postgres", "oltp_insert", 3000, 3000), fake("mysql", "oltp_insert", 1000, 1000), fake("mariadb", "oltp_insert", 3300, 3300),
	}
	// Three rounds of the knob runs, each flipped run after its round's fair MySQL, the machine
	// 1% faster or slower from round to round.
	// The fair runs' sessions sampled on CPU, in the log flush and idle; durable commit off takes
	// the flush away.
	fair[1].Waits = sampledWaits(20, 10, 70)
	var knobs []*result.Result
	defer func() { // in the order they ran: each flipped run after its round's plain one
		for i, r := range knobs {
			r.StartedAt = time.Date(2026, 11, 28, 12, i, 0, 0, time.UTC)
		}
	}()
	for _, drift := range []float64{1, 1.01, 0.99} {
		knobs = append(knobs, fake("mysql", "oltp_read_write", rwMySQL*drift, 20*rwMySQL*drift))
		for i, k := range shootoutKnobs {
			r := fake("mysql", "oltp_read_write", rwMySQL*(0.5+0.2*float64(i))*drift, 0)
			r.Flipped = []string{k}
			if k == "synchronous-commit" {
				r.Waits = sampledWaits(20, 1, 79)
			}
			knobs = append(knobs, r)
		}
	}
	defaults := []*result.Result{fake("postgres", "oltp_read_write", 800, 16000), fake("mysql", "oltp_read_write", 160, 3200), fake("mariadb", "oltp_read_write", 700, 14000)}
	return Measured{Runs: map[string][]*result.Result{"fair": fair, "as-published": {fake("mysql", "oltp_read_write", 200, 4000)},
		"defaults": defaults, "knobs": knobs}, Cores: 2}
}

// sampledWaits is a run's wait samples: so many on CPU, in the log flush and idle.
func sampledWaits(cpu, flush, client int) *result.Waits {
	return &result.Waits{EveryMS: 100, Rounds: (cpu + flush + client) / 10, Sessions: cpu + flush + client,
		Categories: []result.WaitCount{{Category: "cpu", Count: cpu}, {Category: "log_flush", Count: flush}, {Category: "client", Count: client}}}
}

func rowOf(t *testing.T, rows []Row, figure string) Row {
	t.Helper()
	for _, r := range rows {
		if r.Figure == figure {
			return r
		}
	}
	t.Fatalf("no row %q", figure)
	return Row{}
}

func TestShootoutAgreesAndDisagrees(t *testing.T) {
	pub, err := LoadPublished("sysbench_shootout_2026")
	if err != nil {
		t.Fatal(err)
	}
	s, _ := Lookup("shootout")
	// MySQL at 0.2x PostgreSQL's read-write: the published winner, so the row agrees.
	if r := rowOf(t, s.Judge(pub, shootoutResults(200)), "read-write TPS, mysql / postgres"); r.Verdict != Agrees {
		t.Errorf("read-write mysql/postgres: %s (%s), want agrees", r.Verdict, r.Why)
	}
	// MySQL ahead of PostgreSQL: the published ranking is reversed, and the row must say so,
	// with the version difference as evidence.
	rows := s.Judge(pub, shootoutResults(1500))
	r := rowOf(t, rows, "read-write TPS, mysql / postgres")
	if r.Verdict != Disagrees || !strings.Contains(r.Why, "mysql 99 here, 8.4.8 published") {
		t.Errorf("read-write mysql/postgres: %s (%s), want disagrees with the version as evidence", r.Verdict, r.Why)
	}
	if p := rowOf(t, rows, "pick for mixed read-write"); p.Verdict != Disagrees || p.Measured != "mysql" {
		t.Errorf("pick: %+v, want mysql, disagreeing with the published postgres", p)
	}
	if b := rowOf(t, rows, "read-write TPS, mysql (binary log on) / postgres"); !strings.Contains(b.Why, "binary log alone moves MySQL from 1500 to 200 TPS") {
		t.Errorf("as-published row does not say what the binary log did: %s", b.Why)
	}
	if d := rowOf(t, rows, "read-write TPS, mysql / postgres, both as packaged (--profile defaults)"); d.Verdict != Agrees || d.Measured != "0.20x" {
		t.Errorf("defaults row: %+v, want 0.20x agreeing with 0.15x", d)
	}
}

// The gap section explains MySQL's read-write figure knob by knob: each knob's effect against the
// fair MySQL run beside it, applied to the fair ratio, and the knob that costs the most named.
func TestShootoutGapExplained(t *testing.T) {
	pub, _ := LoadPublished("sysbench_shootout_2026")
	secs := explainShootoutGap(pub, shootoutResults(600))
	if len(secs) != 1 || len(secs[0].Tables) != 1 {
		t.Fatalf("sections: %+v", secs)
	}
	rows := secs[0].Tables[0].Rows
	// published, fair, as published, defaults, then one row per knob.
	if len(rows) != 4+len(shootoutKnobs) {
		t.Fatalf("%d rows: %v", len(rows), rows)
	}
	want := [][]string{
		{"published (MySQL 8.4.8, sysbench 1.0.20)", "0.15x", "100%"},
		{"fair profile", "0.60x", "0%"},
		{"as published: binary log on", "0.20x", "80%"},
		{"both as packaged (--profile defaults)", "0.20x", "80%"},
		{"binlog flipped", "0.30x", "50%"}, // 600 → 300 TPS: -50%, so 0.60x becomes 0.30x
	}
	for i, w := range want {
		if r := rows[i]; r[0].Text != w[0] || r[3].Text != w[1] || r[4].Text != w[2] {
			t.Errorf("row %d: %v, want %v", i, r, w)
		}
	}
	if !strings.Contains(secs[0].Paras[0], "binlog costs MySQL the most (-50.0% [-50.0%, -50.0%])") {
		t.Errorf("summary: %s", secs[0].Paras[0])
	}
}

func TestRatioRules(t *testing.T) {
	tests := []struct {
		pub, got float64
		want     string
	}{
		{0.15, 0.3, Agrees}, {0.15, 1.2, Disagrees}, {1.23, 1.03, Disagrees}, {0.97, 1.04, Agrees}, {1.8, 1.1, Agrees},
		{0.96, 0.949, Agrees}, {1.04, 1.09, Agrees}, {1.04, 1.12, Disagrees}, {0.9, 1.1, Disagrees},
	}
	for _, tc := range tests {
		if r := judgeRatio("x", "fair", tc.pub, tc.got, true, ""); r.Verdict != tc.want {
			t.Errorf("published %.2f, measured %.2f: %s, want %s", tc.pub, tc.got, r.Verdict, tc.want)
		}
	}
	if r := judgeRatio("x", "fair", 0.5, 0, false, "no data"); r.Verdict != NotComparable {
		t.Errorf("missing measurement: %s, want not comparable", r.Verdict)
	}
}

// Reproduce runs each of the study's runs through the executor it is given and writes the
// report; fed results that agree and results that disagree, the report says which, row by row.
func TestReproduceWritesReport(t *testing.T) {
	tests := []struct {
		name    string
		mysqlRW float64
		row     string
		tally   string
	}{
		{"agrees", 200, "| read-write TPS, mysql / postgres | fair | 0.15x | 0.20x | agrees |", "19 rows compared: 15 agree, 4 disagree"},
		// MySQL ahead of PostgreSQL on read-write: the published ranking reversed, and the
		// report must call it a disagreement, with the versions as evidence.
		{"disagrees", 1500, "| read-write TPS, mysql / postgres | fair | 0.15x | 1.50x | disagrees | published (below 1), measured (above 1); mysql mysql 99 here, 8.4.8 published", "19 rows compared: 13 agree, 6 disagree"},
	}
	s, _ := Lookup("shootout")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			exec := func(_ context.Context, run Run, engines []string, out string) error {
				for i, r := range shootoutResults(tc.mysqlRW).Runs[run.Name] {
					name := fmt.Sprintf("%s-%s-%d.json", r.Engine.Kind, r.Workload.Name, i)
					if err := result.Write(filepath.Join(out, "results", name), r); err != nil {
						return err
					}
				}
				return nil
			}
			rows, err := Reproduce(context.Background(), s, Options{Scale: Small, OutDir: dir, Cores: 2, Execute: exec})
			if err != nil {
				t.Fatal(err)
			}
			if got := Count(rows).String(); !strings.HasPrefix(got, tc.tally) {
				t.Errorf("tally %q, want %q", got, tc.tally)
			}
			md, err := os.ReadFile(filepath.Join(dir, "report.md"))
			if err != nil || !strings.Contains(string(md), tc.row) {
				t.Errorf("report.md lacks %q:\n%s", tc.row, md)
			}
		})
	}
}

func TestBandwidthJudge(t *testing.T) {
	pub, err := LoadPublished("nvme_bandwidth_mvcc")
	if err != nil {
		t.Fatal(err)
	}
	steps := func(tpsCap, tpsMax, q18Cap, q18Max, pages float64) []study.Step {
		return []study.Step{
			{Limit: "25M", LimitBps: 25 << 20, TPS: tpsCap, Extra: map[string]study.ExtraResult{"tpch_q18": {Seconds: q18Cap}}},
			{Limit: "max", TPS: tpsMax, PagesRequestedPerSec4K: pages, Extra: map[string]study.ExtraResult{"tpch_q18": {Seconds: q18Max}}},
		}
	}
	doc := &study.Bandwidth{Config: study.Config{Tables: 4, BufferPoolBytes: 64 << 20}, Engines: []study.BandwidthEngine{
		{EngineInfo: study.EngineInfo{Kind: "postgres"}, Steps: steps(187, 423, 5.48, 1.27, 900)},
		{EngineInfo: study.EngineInfo{Kind: "mariadb"}, Steps: steps(69.6, 209, 4.92, 3.09, 300)},
	}}
	// The uncapped steps' reads as measured on 2026-11-28 without a memory cap: PostgreSQL read
	// 65,011 4 KB pages a second from storage while its device read 11.0 MB/s; InnoDB 46,113 at 189.
	pgMax, maMax := &doc.Engines[0].Steps[1], &doc.Engines[1].Steps[1]
	pgMax.PagesReadPerSec4K, pgMax.DeviceReadBps = 65011, 11.0e6
	maMax.PagesReadPerSec4K, maMax.DeviceReadBps = 46113, 189e6
	rows := judgeBandwidth(pub, Measured{Bandwidth: map[string]*study.Bandwidth{"fair": doc}})
	want := map[string]string{
		"OLTP read-write TPS, mariadb / postgres, lowest cap (25M here, 125 MiB/s published)": Disagrees, // 0.37x against 1.80x
		"TPC-H Q18 seconds, mariadb / postgres, uncapped":                                     Agrees,    // 2.43x against 5.30x
		"TPC-H Q18 seconds, mariadb / postgres, lowest cap (25M here, 125 MiB/s published)":   Disagrees, // 0.90x against 13.18x
		"4 KB pages requested per second under OLTP, postgres / mariadb, uncapped":            Agrees,
	}
	for fig, v := range want {
		if r := rowOf(t, rows, fig); r.Verdict != v {
			t.Errorf("%s: %s (%s %s), want %s", fig, r.Verdict, r.Measured, r.Why, v)
		}
	}
	// The why is measured: how much of each engine's reads the device served, and the memory.
	why := rowOf(t, rows, "OLTP read-write TPS, mariadb / postgres, uncapped").Why
	for _, want := range []string{"the device served 4% of postgres's", "100% of mariadb's", "3x the 64 MiB buffer pool here, no memory cap"} {
		if !strings.Contains(why, want) {
			t.Errorf("uncapped OLTP row's why %q lacks %q", why, want)
		}
	}
	doc.Config.ServerMemoryBytes = 320 << 20
	rows = judgeBandwidth(pub, Measured{Bandwidth: map[string]*study.Bandwidth{"fair": doc}})
	if why := rowOf(t, rows, "OLTP read-write TPS, mariadb / postgres, uncapped").Why; !strings.Contains(why, "each server's memory capped at 320 MiB") {
		t.Errorf("capped memory's why %q does not say so", why)
	}
	if r := judgeBandwidth(pub, Measured{})[0]; r.Verdict != NotComparable || !strings.Contains(r.Why, "did not run") {
		t.Errorf("no document: %+v", r)
	}
}

func TestBendOfThePublishedCurves(t *testing.T) {
	pub, err := LoadPublished("power10_scaling")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path string
		want int
	}{
		{"oltp_90_10_tps.xeon", 64}, {"oltp_90_10_tps.power10", 0}, {"point_select_tps.xeon", 64},
	}
	for _, tc := range tests {
		threads, _ := pub.Floats(strings.SplitN(tc.path, ".", 2)[0] + ".threads")
		vals, _ := pub.Floats(tc.path)
		c := map[int]float64{}
		var ts []int
		for i, th := range threads {
			c[int(th)] = vals[i]
			ts = append(ts, int(th))
		}
		if got := bend(ts, c); got != tc.want {
			t.Errorf("%s bends at %d, want %d", tc.path, got, tc.want)
		}
	}
}

func TestScalingAndPaymentsJudges(t *testing.T) {
	var rs []*result.Result
	for _, th := range scalingThreads {
		tps := math.Min(float64(th), 4) * 1000 // doubles to 4 threads on a 2-core machine, then flat
		r := fake("mariadb", "oltp_90_10", tps, tps*12)
		r.Threads = th
		rs = append(rs, r)
	}
	pub, _ := LoadPublished("power10_scaling")
	rows := judgeScaling(pub, Measured{Runs: map[string][]*result.Result{"fair": rs}, Cores: 2})
	if r := rowOf(t, rows, "OLTP 90:10: threads where TPS stops rising, per hardware thread"); r.Verdict != Agrees || r.Measured != "4 threads on 2 (2.00)" {
		t.Errorf("bend row: %+v", r)
	}
	if r := rowOf(t, rows, "point select: threads where TPS stops rising, per hardware thread"); r.Verdict != NotComparable {
		t.Errorf("point select with no results: %+v", r)
	}
	ppub, _ := LoadPublished("payments_reserva")
	got := Measured{Runs: map[string][]*result.Result{
		"fair":         {fake("postgres", "payments", 900, 0), fake("mariadb", "payments", 1000, 0), fake("mysql", "payments", 300, 0)},
		"as-published": {fake("postgres", "payments", 850, 0)},
	}, Cores: 2}
	prows := judgePayments(ppub, got)
	if r := rowOf(t, prows, "transfers/s, postgres / mariadb"); r.Verdict != Disagrees || r.Measured != "0.90x" {
		t.Errorf("postgres/mariadb: %+v", r)
	}
	if r := rowOf(t, prows, "transfers/s, mariadb / mysql"); r.Verdict != Agrees {
		t.Errorf("mariadb/mysql: %+v", r)
	}
	if r := rowOf(t, prows, "transfers/s, postgres (as-published) / mysql"); r.Measured != "2.83x" {
		t.Errorf("as published: %+v", r)
	}
}

func TestIngestJudge(t *testing.T) {
	pub, _ := LoadPublished("ingest_join_ramp")
	ramp := func(engine, w string, qps []float64, satTPS float64) *result.Result {
		r := fake(engine, w, 0, 0)
		for i, q := range qps {
			r.Intervals = append(r.Intervals, result.Interval{T: float64(i + 1), QPS: q, TPS: q})
		}
		r.Ramp = &result.Ramp{SaturationTPS: satTPS, SaturationThreads: 40, Steps: []result.RampStep{{Threads: 20, TPS: satTPS / 2, P99MS: 3}, {Threads: 40, TPS: satTPS, P99MS: 12.4}}}
		return r
	}
	got := Measured{Runs: map[string][]*result.Result{"fair": {
		ramp("postgres", "events_ingest", []float64{1000, 4000, 6000}, 6000), ramp("mysql", "events_ingest", []float64{900, 2500, 2600}, 2500),
		ramp("postgres", "events_join", []float64{2000, 3000}, 3000), ramp("mysql", "events_join", []float64{2000, 3500}, 3500),
	}}, Cores: 2}
	rows := judgeIngest(pub, got)
	want := map[string]string{
		"ingest highest QPS, postgres / mysql":                     Agrees,    // 2.31x against 1.9x
		"join highest QPS, postgres / mysql":                       Disagrees, // 0.86x against 1.6x
		"ingest: QPS where MySQL saturates / PostgreSQL's highest": Agrees,    // 0.42 against 0.29
		"join: QPS where MySQL saturates / PostgreSQL's highest":   Disagrees, // 1.17 against 0.56
	}
	for fig, v := range want {
		if r := rowOf(t, rows, fig); r.Verdict != v {
			t.Errorf("%s: %s (%s), want %s", fig, r.Verdict, r.Measured, v)
		}
	}
	// The saturation point in capacity's terms: what was carried, and the p99 there.
	if r := rowOf(t, rows, "ingest: QPS where MySQL saturates / PostgreSQL's highest"); !strings.Contains(r.Why, "2500 QPS carried with p99 12.4 ms there, its capacity at p99 ≤ 13 ms on this ramp") {
		t.Errorf("saturation not said in capacity terms: %s", r.Why)
	}
}

// Every study's runs, at both scales, are suites fairbench accepts as a user's file.
func TestStudySuitesParse(t *testing.T) {
	for _, s := range List() {
		for _, sc := range []Scale{Small, Full} {
			for _, run := range s.Runs(sc) {
				if run.Bandwidth != nil {
					continue // the bandwidth study runs no suite
				}
				st, err := suite.Parse([]byte(run.Suite), s.Name+" "+run.Name)
				if err == nil {
					_, err = st.Resolve()
				}
				if err != nil {
					t.Errorf("%s %s %s: %v", s.Name, sc, run.Name, err)
				}
			}
		}
	}
}

// Every buffer pool a study asks for is one every engine's profile takes (whole MiB, InnoDB's chunks).
func TestStudyBufferPoolsAreWholeMiB(t *testing.T) {
	for _, s := range List() {
		for _, run := range s.Runs(Small) {
			if b := run.BufferPoolBytes; b%(1<<20) != 0 {
				t.Errorf("%s %s: buffer pool %d bytes is not whole MiB", s.Name, run.Name, b)
			}
		}
	}
}

// A ramp whose clients, with their waits, could not ask more than both engines served has not
// saturated either: its peaks say nothing about the engines.
func TestIngestClientBoundIsNotComparable(t *testing.T) {
	pub, _ := LoadPublished("ingest_join_ramp")
	ramp := func(engine string, peak float64) *result.Result {
		r := fake(engine, "events_ingest", 0, 0)
		r.Intervals = []result.Interval{{T: 1, QPS: peak}}
		r.Ramp = &result.Ramp{Stages: true, Max: 120, DelayMaxMS: 40, SaturationTPS: peak / 2}
		return r
	}
	got := Measured{Runs: map[string][]*result.Result{"fair": {ramp("postgres", 5000), ramp("mysql", 5100)}}}
	for _, r := range judgeIngest(pub, got)[:2] {
		if r.Verdict != NotComparable || !strings.Contains(r.Why, "6000 QPS at most") {
			t.Errorf("%s: %s (%s)", r.Figure, r.Verdict, r.Why)
		}
	}
}

// The user's choice narrows a run's engines by kind; KIND@RELEASE runs that release in its place.
func TestPickNarrowsByKind(t *testing.T) {
	for _, tc := range []struct {
		name             string
		run, study, user []string
		want             string
	}{
		{"study's engines", nil, []string{"postgres", "mysql"}, nil, "postgres,mysql"},
		{"run's own engines", []string{"mysql"}, []string{"postgres", "mysql"}, nil, "mysql"},
		{"bare kinds", nil, []string{"postgres", "mysql", "mariadb"}, []string{"mariadb", "postgres"}, "postgres,mariadb"},
		{"a release", nil, []string{"postgres", "mysql"}, []string{"postgres@17", "mysql"}, "postgres@17,mysql"},
		{"a release outside the run", []string{"mysql"}, []string{"postgres", "mysql"}, []string{"postgres@17"}, ""},
		{"a prefix is not a kind", nil, []string{"postgres"}, []string{"postgres-ha"}, ""},
	} {
		if got := strings.Join(pick(tc.run, tc.study, tc.user), ","); got != tc.want {
			t.Errorf("%s: pick = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// With repeats a row is judged by the measured ratio's interval: its side when it excludes 1, a
// tie when it includes it, and too noisy to judge when it includes 1 and the published lead too.
func TestJudgeWithIntervals(t *testing.T) {
	runs := mysqlRounds
	ref := runs(1000, 1010, 990)
	tps := func(r *result.Result) float64 { return r.TPS }
	for _, c := range []struct {
		name    string
		pub     float64
		got     []*result.Result
		verdict string
		why     string
	}{
		{"a clear lead on the published side", 0.5, runs(500, 510, 492), Agrees, "the 95% interval below 1"},
		{"a clear lead on the other side", 0.5, runs(1500, 1490, 1520), Disagrees, "measured above 1"},
		{"a tie shown against a published tie", 1.02, runs(1005, 1008, 992), Agrees, "same winner"},
		{"a tie shown against a published lead", 0.5, runs(1001, 1009, 991), Disagrees, "published (below 1), measured within 5% of 1"},
		{"a wide interval against a published tie", 1.02, runs(1100, 900, 1000), Undecided, "includes 1 and reaches beyond 5%"},
		{"a wide interval that excludes the published lead", 2.5, runs(1400, 900, 1100), Disagrees, "includes 1 and excludes 2.50x"},
		{"a wide interval against a published lead", 1.3, runs(1400, 900, 1100), Undecided, "includes 1 and reaches beyond 5%"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := judgeGot("x", "fair", c.pub, ratioOf(interval.Fixed, c.got, ref, tps, true), "")
			if r.Verdict != c.verdict || !strings.Contains(r.Why, c.why) || !strings.Contains(r.Measured, "[") {
				t.Errorf("%s: %s (%s), want %s with %q", r.Measured, r.Verdict, r.Why, c.verdict, c.why)
			}
		})
	}
}

// A comparison that ran rounds until decided is judged by its rule: the same rounds that a
// fixed 95% interval decides stay open at the sequential plan's first look, and the row says
// which level judged it; a ratio across two comparisons takes the stricter plan.
func TestJudgeUnderTheSequentialRule(t *testing.T) {
	runs := mysqlRounds
	got := Measured{Rules: map[string]interval.Rule{"fair": interval.Sequential(3), "knobs": interval.Sequential(5), "defaults": interval.Fixed}}
	if r := got.Rule("fair"); !r.IsSequential() || r.MinRounds != 3 {
		t.Errorf("fair's rule %+v", r)
	}
	if r := got.Rule("defaults", "knobs", "fair"); r.MinRounds != 3 {
		t.Errorf("across runs: %+v, want the plan with the earliest first look", r)
	}
	if got.Rule("defaults").IsSequential() || got.Rule("missing").IsSequential() {
		t.Error("a fixed or unknown run judged sequentially")
	}
	ref := runs(1000, 1000, 1000)
	lead := runs(932, 900, 869) // a 10% lead, its logs ±0.035: inside the fixed t quantile, not the first look's
	tps := func(r *result.Result) float64 { return r.TPS }
	fixed := judgeGot("x", "fair", 0.9, ratioOf(interval.Fixed, lead, ref, tps, true), "")
	seq := judgeGot("x", "fair", 0.9, ratioOf(got.Rule("fair"), lead, ref, tps, true), "")
	if fixed.Verdict != Agrees || !strings.Contains(fixed.Why, "the 95% interval below 1") {
		t.Errorf("fixed: %s (%s)", fixed.Verdict, fixed.Why)
	}
	if seq.Verdict != Undecided || !strings.Contains(seq.Why, "97.5% interval (look 1 of rounds until decided)") {
		t.Errorf("sequential: %s (%s)", seq.Verdict, seq.Why)
	}
	// A 10% lead whose rounds spread ±3.5% is decided a look or two later, and the row says so.
	n := ratioOf(got.Rule("fair"), lead, ref, tps, true).ToDecide
	if n <= 3 || n > 8 || !strings.Contains(seq.Why, fmt.Sprintf("about %d rounds in all would decide", n)) {
		t.Errorf("sequential: %d rounds to decide, why %q", n, seq.Why)
	}
}

// An undecided measured pick says about how many rounds would decide it, or that none would.
func TestUndecidedPickSaysWhatWouldDecide(t *testing.T) {
	tps := func(r *result.Result) float64 { return r.TPS }
	for _, c := range []struct {
		name string
		a, b []float64
		want string
	}{
		{"a lead the rounds leave open", []float64{1100, 1000, 1180}, []float64{1000, 1010, 990}, "about "},
		{"two engines nearer than the noise", []float64{839, 1025, 1252}, []float64{1000, 1000, 1000}, "not even 200 rounds would decide"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := bestOf(interval.Fixed, map[string][]*result.Result{"a": mysqlRounds(c.a...), "b": mysqlRounds(c.b...)}, tps)
			if !strings.HasPrefix(got, undecidedPick+" (a leads b; ") || !strings.Contains(got, c.want) {
				t.Errorf("pick %q, want it undecided with %q", got, c.want)
			}
			if row := judgePick("x", "fair", "a", got, ""); row.Verdict != Undecided {
				t.Errorf("judged %s (%s)", row.Verdict, row.Why)
			}
		})
	}
}

// mysqlRounds is one fake MySQL read-write run per TPS figure: a comparison's rounds.
func mysqlRounds(tps ...float64) []*result.Result {
	out := make([]*result.Result, len(tps))
	for i, x := range tps {
		out[i] = fake("mysql", "oltp_read_write", x, 0)
	}
	return out
}
