package study

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/throttle"
)

func TestDefaultTableSize(t *testing.T) {
	for _, tc := range []struct {
		pool   int64
		tables int
		want   int
	}{
		{64 << 20, 4, 202000},
		{32 << 20, 1, 403000},
		{64 << 20, 0, 806000}, // treated as one table
	} {
		if got := DefaultTableSize(tc.pool, tc.tables); got != tc.want {
			t.Errorf("DefaultTableSize(%d, %d) = %d, want %d", tc.pool, tc.tables, got, tc.want)
		}
	}
}

// selectPhase and updatePhase build measured phases for the fixtures.
func selectPhase(name string, pages4K float64) Phase {
	return Phase{Name: name, Label: phaseLabels[name], Kind: "select", Seconds: 20, Queries: 100000, TPS: 5000,
		PagesRequestedPerQuery4K: pages4K, PagesRequestedPerQuery: pages4K / 2, PagesReadPerQuery4K: pages4K / 4}
}

func updatePhase(hot float64) Phase {
	return Phase{Name: PhaseUpdate, Label: phaseLabels[PhaseUpdate], Kind: "update", Seconds: 20, Queries: 40000, TPS: 2000,
		PagesRequestedPerQuery4K: 12, WALBytesPerQuery: 300, DataBytesWrittenPerQuery: 900, BytesWrittenPerQuery: 1200,
		TableBytesBefore: 100 << 20, TableBytesAfter: 120 << 20, IndexBytesBefore: 20 << 20, IndexBytesAfter: 22 << 20,
		Updates: ptr(int64(40000)), HOTUpdates: ptr(int64(hot * 40000)), HOTRatio: ptr(hot), DeadTuplesAfter: ptr(int64(35000)),
		AutovacuumRuns: ptr(int64(0))}
}

func pgScenario(name string, fresh, afterUpdate, afterVacuum float64) Scenario {
	vac := Phase{Name: PhaseVacuum, Label: "VACUUM", Kind: "vacuum", Seconds: 1.5, DeadTuplesBefore: ptr(int64(35000)), DeadTuplesAfter: ptr(int64(0)),
		TableBytesAfter: 120 << 20, IndexBytesAfter: 22 << 20}
	return Scenario{Name: name, Phases: []Phase{selectPhase(PhaseFresh, fresh), updatePhase(0.6), selectPhase(PhaseSelectAfterUpdate, afterUpdate),
		vac, selectPhase(PhaseSelectAfterVacuum, afterVacuum)}}
}

func fixtureMVCC(afterVacuum float64) *MVCC {
	up := updatePhase(0)
	up.HOTRatio, up.Updates, up.HOTUpdates = nil, nil, nil
	up.HistoryListStart, up.HistoryListMax, up.HistoryListEnd = ptr(int64(3)), ptr(int64(51234)), ptr(int64(40000))
	after := selectPhase(PhaseSelectAfterUpdate, 8.2)
	after.HistoryListEnd = ptr(int64(12))
	return &MVCC{Study: "mvcc", Complete: true, StartedAt: time.Unix(0, 0).UTC(), FinishedAt: time.Unix(600, 0).UTC(),
		Config: Config{Engines: []string{"postgres", "mariadb"}, StepSeconds: 20, Threads: 4, Tables: 4, TableSize: 202000, BufferPoolBytes: 64 << 20},
		Engines: []MVCCEngine{
			{EngineInfo: EngineInfo{Kind: "postgres", Version: "15.18", PageSize: 8192},
				Scenarios: []Scenario{pgScenario(ScenarioAutovacuumOff, 4.0, 4.1, afterVacuum), pgScenario(ScenarioAutovacuumOn, 4.0, 3.0, 2.9)}},
			{EngineInfo: EngineInfo{Kind: "mariadb", Version: "10.11.19", PageSize: 16384},
				Scenarios: []Scenario{{Name: ScenarioPurge, Phases: []Phase{selectPhase(PhaseFresh, 8.1), up, after}}}},
		}}
}

func findEffect(effs []Effect, design, scenario string) *Effect {
	for i := range effs {
		if effs[i].Design == design && (scenario == "" || effs[i].Scenario == scenario) {
			return &effs[i]
		}
	}
	return nil
}

func TestMVCCEffects(t *testing.T) {
	for _, tc := range []struct {
		name        string
		afterVacuum float64
		want        string
	}{
		{"vacuum helped", 1.2, "VACUUM cut PostgreSQL's pages per SELECT from 4.10 to 1.20 (-71%, autovacuum off)"},
		{"vacuum helped a little", 4.05, "VACUUM lowered PostgreSQL's pages per SELECT only slightly, from 4.10 to 4.05 (-1%, autovacuum off)"},
		{"vacuum did not help", 4.2, "VACUUM did not lower PostgreSQL's pages per SELECT: 4.10 before, 4.20 after (autovacuum off)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			effs := MVCCEffects(fixtureMVCC(tc.afterVacuum))
			v := findEffect(effs, DesignPGVacuum, ScenarioAutovacuumOff)
			if v == nil || !strings.HasPrefix(v.Statement, tc.want) {
				t.Fatalf("vacuum effect %+v, want it to start %q", v, tc.want)
			}
			if *v.Before != 4.1 || *v.After != tc.afterVacuum {
				t.Errorf("vacuum effect figures %v → %v", *v.Before, *v.After)
			}
		})
	}
	effs := MVCCEffects(fixtureMVCC(1.2))
	for _, w := range []struct{ design, scenario, contains string }{
		{DesignPGNewVersion, ScenarioAutovacuumOff, "UPDATEs left PostgreSQL's pages per SELECT about where they were: 4.00 fresh, 4.10 after"},
		{DesignPGNewVersion, ScenarioAutovacuumOn, "UPDATEs cut PostgreSQL's pages per SELECT from 4.00 to 3.00"},
		{DesignPGHOT, ScenarioAutovacuumOff, "60% of PostgreSQL's UPDATEs were HOT (24000 of 40000)"},
		{DesignPGGrowth, ScenarioAutovacuumOff, "grew from 120 to 142 MiB (+18%)"},
		{DesignPGWrites, ScenarioAutovacuumOff, "wrote 1.17 KiB (300 B WAL + 900 B of data pages)"},
		{DesignPGAutovacuum, "", "autovacuum ran 0 times"},
		{DesignInnoDBUpdate, ScenarioPurge, "UPDATEs left MariaDB (InnoDB)'s pages per SELECT about where they were: 8.10 fresh, 8.20 after"},
		{DesignInnoDBPurge, ScenarioPurge, "peaked at 51234 during the updates and was 40000 when they ended; 12 at the end of the next select phase"},
		{DesignCompare, "", "PostgreSQL (autovacuum off) requested 4.10 4 KB pages per SELECT and MariaDB (InnoDB) 8.20 (0.50×)"},
	} {
		e := findEffect(effs, w.design, w.scenario)
		if e == nil || !strings.Contains(e.Statement, w.contains) {
			t.Errorf("%s (%s): got %+v, want it to contain %q", w.design, w.scenario, e, w.contains)
		}
	}
}

func TestRenderMVCC(t *testing.T) {
	doc := fixtureMVCC(1.2)
	doc.Effects = MVCCEffects(doc)
	md, html, err := RenderMVCC(doc)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Measured effect of each design choice", "VACUUM cut PostgreSQL's pages per SELECT from 4.10 to 1.20",
		"| PostgreSQL, autovacuum off | 4.00 (2.00) / 1.00 (0) | 4.10 (2.05) / 1.02 (0) | 1.20 (0.60) / 0.30 (0) |", "SELECT after VACUUM"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	if n := strings.Count(string(html), "<svg"); n != 3 {
		t.Errorf("report.html has %d charts, want 3 (SELECT requested, SELECT read, UPDATE)", n)
	}
	if strings.Contains(string(html), "<script") || strings.Contains(string(html), "http://") && !strings.Contains(string(html), "xmlns") {
		t.Error("report.html is not self-contained")
	}
	doc.Complete, doc.Error = false, "mariadb: boom"
	md, _, _ = RenderMVCC(doc)
	if !strings.Contains(string(md), "Incomplete: mariadb: boom") {
		t.Error("an incomplete study is not marked")
	}
}

func bwStep(limit string, tps float64) Step {
	bps, _ := throttle.ParseRate(limit)
	s := Step{Limit: limit, LimitBps: bps, TPS: tps, ProofOK: true}
	if bps == 0 {
		s.Probe = &throttle.ProbeResult{WriteBps: 900e6, ReadBps: 1200e6}
	}
	return s
}

func bwEngine(kind string, tps ...float64) BandwidthEngine {
	e := BandwidthEngine{EngineInfo: EngineInfo{Kind: kind, PageSize: 8192}}
	for i, l := range []string{"25M", "125M", "500M", "max"} {
		if i < len(tps) {
			e.Steps = append(e.Steps, bwStep(l, tps[i]))
		}
	}
	return e
}

func TestCrossovers(t *testing.T) {
	for _, tc := range []struct {
		name   string
		a, b   []float64
		want   string
		atLo   float64 // MB/s bounds of the crossing
		atHi   float64
		noneAt bool
	}{
		{"cross", []float64{100, 300, 500, 600}, []float64{150, 310, 450, 550},
			"MariaDB (InnoDB) is faster below about", 26, 525, false},
		{"no cross", []float64{100, 200, 300, 400}, []float64{50, 100, 150, 200},
			"no crossover: PostgreSQL is faster than MariaDB (InnoDB) at every limit measured (2.00× to 2.00×)", 0, 0, true},
		{"tie", []float64{100, 200}, []float64{100, 150}, "tie at 25M", 26, 27, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := &Bandwidth{Engines: []BandwidthEngine{bwEngine("postgres", tc.a...), bwEngine("mariadb", tc.b...)}}
			cs := Crossovers(doc)
			if len(cs) != 1 || !strings.Contains(cs[0].Statement, tc.want) {
				t.Fatalf("got %+v, want %q", cs, tc.want)
			}
			if tc.noneAt != (cs[0].AtBps == 0) {
				t.Fatalf("crossing at %v", cs[0].AtBps)
			}
			if !tc.noneAt && (cs[0].AtBps/1e6 < tc.atLo || cs[0].AtBps/1e6 > tc.atHi) {
				t.Errorf("crossing at %.1f MB/s, want %v..%v", cs[0].AtBps/1e6, tc.atLo, tc.atHi)
			}
		})
	}
	// The crossing lies between the two steps where the lead changes hands.
	doc := &Bandwidth{Engines: []BandwidthEngine{bwEngine("postgres", 100, 300, 500, 600), bwEngine("mariadb", 150, 310, 450, 550)}}
	c := Crossovers(doc)[0]
	if !strings.Contains(c.Statement, "between 125M and 500M") || c.AtBps < 125<<20 || c.AtBps > 500<<20 {
		t.Errorf("got %+v", c)
	}
}

func TestKnee(t *testing.T) {
	for _, tc := range []struct {
		tps  []float64
		want string
	}{
		{[]float64{100, 300, 500, 520}, "500M"},
		{[]float64{500, 505, 510, 520}, "25M"},
		{[]float64{100, 200, 300, 600}, "max"},
	} {
		if got := knee(bwEngine("postgres", tc.tps...).Steps); got != tc.want {
			t.Errorf("knee(%v) = %q, want %q", tc.tps, got, tc.want)
		}
	}
}

func TestDeviceRates(t *testing.T) {
	base := time.Unix(100, 0)
	at := func(ms int) time.Time { return base.Add(time.Duration(ms) * time.Millisecond) }
	for _, tc := range []struct {
		name                 string
		samples              []throttle.IOStats
		rAvg, wAvg, rPk, wPk float64
	}{
		{"too few samples", []throttle.IOStats{{At: at(0)}}, 0, 0, 0, 0},
		{"shorter than the window: peaks are the averages",
			[]throttle.IOStats{{At: at(0)}, {At: at(2000), ReadBytes: 20e6, WriteBytes: 10e6}}, 10e6, 5e6, 10e6, 5e6},
		{
			// One second of 40 MB among 20 MB seconds: the busiest five seconds hold it at 24 MB/s.
			"a burst is spread over the window",
			[]throttle.IOStats{{At: at(0)}, {At: at(1000), ReadBytes: 20e6}, {At: at(2000), ReadBytes: 60e6},
				{At: at(3000), ReadBytes: 80e6}, {At: at(4000), ReadBytes: 100e6}, {At: at(5000), ReadBytes: 120e6},
				{At: at(6000), ReadBytes: 140e6}, {At: at(7000), ReadBytes: 160e6}},
			160e6 / 7, 0, 24e6, 0,
		},
		{
			// A late sample makes a longer window; its rate is per real second, not per sample.
			"uneven samples",
			[]throttle.IOStats{{At: at(0)}, {At: at(2500), WriteBytes: 50e6}, {At: at(5000), WriteBytes: 100e6},
				{At: at(10000), WriteBytes: 100e6}},
			0, 10e6, 0, 20e6,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := &deviceRates{}
			for _, s := range tc.samples {
				d.add(s)
			}
			r, w, rp, wp := d.rates()
			for _, c := range []struct {
				name      string
				got, want float64
			}{{"read avg", r, tc.rAvg}, {"write avg", w, tc.wAvg}, {"read peak", rp, tc.rPk}, {"write peak", wp, tc.wPk}} {
				if math.Abs(c.got-c.want) > 1 {
					t.Errorf("%s %.0f, want %.0f", c.name, c.got, c.want)
				}
			}
		})
	}
}

func TestSampleDevice(t *testing.T) {
	var n int64
	d := sampleDevice(func() (throttle.IOStats, error) {
		n += 1e6
		return throttle.IOStats{At: time.Now(), ReadBytes: n}, nil
	}, 10*time.Millisecond)
	time.Sleep(55 * time.Millisecond)
	d.finish()
	if len(d.samples) < 4 {
		t.Errorf("%d samples in 55 ms at one per 10 ms (with the first and the last)", len(d.samples))
	}
}

func TestRenderBandwidth(t *testing.T) {
	doc := &Bandwidth{Study: "bandwidth", Complete: true, Mechanism: throttle.CgroupV1, TPCHQ18: q18Status(0.1),
		Config:  Config{Limits: []string{"25M", "125M", "500M", "max"}, BufferPoolBytes: 64 << 20, StepSeconds: 20},
		Engines: []BandwidthEngine{bwEngine("postgres", 100, 300, 500, 600), bwEngine("mariadb", 150, 310, 450, 550)}}
	doc.Engines[0].Steps[0].WithinCap = ptr(true)
	for i, secs := range []float64{9.5, 4.25, 2, 1.5} {
		doc.Engines[0].Steps[i].Extra = map[string]ExtraResult{"tpch_q18": {Seconds: secs, DeviceReadBps: 26.1e6}}
	}
	doc.Engines[1].Steps[0].Extra = map[string]ExtraResult{"tpch_q18": {Error: "Q18 timeout: canceled after 10m"}}
	doc.Crossovers = Crossovers(doc)
	doc.Notes = bandwidthNotes(doc)
	md, html, err := RenderBandwidth(doc)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| 25M | 100 (0) | 150 (0) |", "## Crossover", "TPC-H at scale factor 0.1 is loaded", "root blkio cgroup", "- Server memory: not capped",
		"| 25M | 9.50 (26.1) | failed: Q18 timeout: canceled after 10m |", "| max | 1.50 (26.1) | – |"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	if n := strings.Count(string(html), "<svg"); n != 3 {
		t.Errorf("report.html has %d charts, want 3 (throughput, pages, Q18)", n)
	}
	doc.Config.ServerMemoryBytes = 320 << 20
	if md, _, _ := RenderBandwidth(doc); !strings.Contains(string(md), "- Server memory: 320 MiB per server, its page cache included") {
		t.Errorf("report.md does not state the server memory cap")
	}
}

// TestRenderQ18NotLoaded: when TPC-H could not be loaded on any engine, the report says so at
// every step rather than leaving only the paragraph that says Q18 was meant to run.
func TestRenderQ18NotLoaded(t *testing.T) {
	doc := &Bandwidth{Study: "bandwidth", Complete: true, Mechanism: throttle.CgroupV1, TPCHQ18: q18Status(0.1),
		Config:  Config{Limits: []string{"25M", "125M"}, BufferPoolBytes: 64 << 20, StepSeconds: 20},
		Engines: []BandwidthEngine{bwEngine("postgres", 100, 300)}}
	for i := range doc.Engines[0].Steps {
		doc.Engines[0].Steps[i].Extra = map[string]ExtraResult{q18Name: {Error: "not loaded: tpchgen-cli not found"}}
	}
	md, html, err := RenderBandwidth(doc)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(md), "failed: not loaded: tpchgen-cli not found"); n != 2 {
		t.Errorf("report.md names the failure %d times, want once per step (2)", n)
	}
	if strings.Contains(string(html), "TPC-H Q18 time by bandwidth cap") {
		t.Error("a Q18 chart with no times in it")
	}
}

// A phase whose window has no engine counters (read too late on a loaded machine, so not given)
// says so, and no effect is drawn from it: read as zero pages, it once made "VACUUM cut
// PostgreSQL's pages per SELECT from 6.04 to 0 (-100%)".
func TestPhaseWithoutCounters(t *testing.T) {
	res := &result.Result{DurationS: 10, Queries: result.Queries{Read: 76500}}
	late := "its counters over the window: the server answered their first read 412ms after the window opened"
	p := &Phase{Kind: "select"}
	fillPhase(p, &measured{res: res, srv: &result.Server{NotAvailable: []string{late}}}, 8192)
	if p.Error == "" || !strings.Contains(p.Error, late) || p.PagesRequestedPerQuery4K != 0 || measuredQ(p) {
		t.Errorf("phase %+v: want it marked without counters, and kept out of the effects", p)
	}
	with := &Phase{Kind: "select"}
	fillPhase(with, &measured{res: res, srv: &result.Server{Counters: map[string]int64{result.CounterBufferHits: 765000, result.CounterBufferReads: 0}}}, 8192)
	if with.Error != "" || with.PagesRequestedPerQuery4K != 20 || !measuredQ(with) {
		t.Errorf("phase %+v: want 10 pages (20 4K pages) per query", with)
	}
}

// A select phase without page counters is measured once more where its tables are in a steady
// state; after updates, or for a phase that changed the tables, it stands as it is.
func TestMeasureAgain(t *testing.T) {
	late := "no page counters over the window: its counters over the window: the server answered their first read 412ms after the window opened"
	for _, c := range []struct {
		name    string
		phase   Phase
		attempt int
		want    bool
	}{
		{"fresh tables, no counters", Phase{Name: PhaseFresh, Kind: "select", Queries: 1000, Error: late}, 1, true},
		{"after VACUUM, no counters", Phase{Name: PhaseSelectAfterVacuum, Kind: "select", Queries: 1000, Error: late}, 1, true},
		{"the second try stands", Phase{Name: PhaseFresh, Kind: "select", Queries: 1000, Error: late}, 2, false},
		{"after updates: the first pass tidied the tables", Phase{Name: PhaseSelectAfterUpdate, Kind: "select", Queries: 1000, Error: late}, 1, false},
		{"an update phase changed the tables", Phase{Name: PhaseUpdate, Kind: "update", Queries: 1000, Error: late}, 1, false},
		{"counters came", Phase{Name: PhaseFresh, Kind: "select", Queries: 1000}, 1, false},
		{"nothing ran", Phase{Name: PhaseFresh, Kind: "select", Error: late}, 1, false},
	} {
		if got := measureAgain(&c.phase, c.attempt); got != c.want {
			t.Errorf("%s: measure again %v, want %v", c.name, got, c.want)
		}
	}
}
