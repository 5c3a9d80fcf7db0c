package reproduce

import (
	"bytes"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/study"
	"github.com/fairbench/fairbench/internal/throttle"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// goldenMeasured is a fixed set of results for each study, shaped as its runs leave them.
func goldenMeasured() map[string]Measured {
	start := time.Date(2026, 11, 24, 4, 0, 0, 0, time.UTC)
	shoot := shootoutResults(600)
	for _, rs := range shoot.Runs {
		for i, r := range rs { // in the order they ran, from start
			r.StartedAt = start.Add(time.Duration(i) * time.Second)
		}
	}
	var fair, cores []*result.Result
	for _, th := range scalingThreads {
		for _, w := range []string{"oltp_90_10", "oltp_point_select"} {
			r := fake("mariadb", w, 1000*math.Min(float64(th), 8)*(1-0.0005*float64(th)), 0)
			r.Threads, r.StartedAt = th, start
			fair = append(fair, r)
		}
		for _, n := range []int{1, 2} {
			r := fake("mariadb", "oltp_point_select", 5000*math.Min(float64(th), float64(4*n)), 0)
			r.Threads, r.Server.CPUs = th, n
			cores = append(cores, r)
		}
	}
	ramp := func(engine, w string, top float64) *result.Result {
		r := fake(engine, w, 0, 0)
		r.StartedAt = start
		r.Ramp = &result.Ramp{Stages: true, Max: 120, DelayMaxMS: 40}
		for c := 2; c <= 120; c += 2 {
			tps := math.Min(float64(c)*50, top)
			r.Ramp.Steps = append(r.Ramp.Steps, result.RampStep{Threads: c, TPS: tps, P99MS: 2 + math.Max(0, float64(c)*50-top)/100})
			r.Intervals = append(r.Intervals, result.Interval{T: float64(c), QPS: tps, TPS: tps})
			if tps < top {
				r.Ramp.SaturationThreads, r.Ramp.SaturationTPS = c+2, math.Min(float64(c+2)*50, top)
			}
		}
		return r
	}
	pay := func(engine string, tps float64) *result.Result {
		r := fake(engine, "payments", tps, 0)
		r.StartedAt = start
		for i := 1; i <= 5; i++ {
			r.Intervals = append(r.Intervals, result.Interval{T: float64(i), TPS: tps * (1 + 0.02*float64(i%2))})
		}
		return r
	}
	steps := func(tpsCap, tpsMax float64) []study.Step {
		return []study.Step{
			{Limit: "25M", LimitBps: 25 << 20, TPS: tpsCap, Extra: map[string]study.ExtraResult{"tpch_q18": {Seconds: 5}}},
			{Limit: "max", TPS: tpsMax, PagesRequestedPerSec4K: 500, PagesReadPerSec4K: 100, DeviceReadBps: 204800,
				Probe: &throttle.ProbeResult{ReadBps: 1 << 30, WriteBps: 800 << 20},
				Extra: map[string]study.ExtraResult{"tpch_q18": {Seconds: 2, DeviceReadBps: 50e6}}},
		}
	}
	bw := &study.Bandwidth{StartedAt: start, Config: study.Config{Tables: 4, BufferPoolBytes: 64 << 20}, Engines: []study.BandwidthEngine{
		{EngineInfo: study.EngineInfo{Kind: "postgres"}, Steps: steps(187, 423)},
		{EngineInfo: study.EngineInfo{Kind: "mariadb"}, Steps: steps(69.6, 209)},
	}}
	return map[string]Measured{
		"shootout": shoot,
		"scaling":  {Runs: map[string][]*result.Result{"fair": fair, "cores": cores}, Cores: 2},
		"ingest": {Runs: map[string][]*result.Result{"fair": {ramp("postgres", "events_ingest", 4000), ramp("mysql", "events_ingest", 2500),
			ramp("postgres", "events_join", 5000), ramp("mysql", "events_join", 3000)}}, Cores: 2},
		"payments": {Runs: map[string][]*result.Result{"fair": {pay("postgres", 900), pay("mariadb", 1000), pay("mysql", 300)},
			"as-published": {pay("postgres", 850)}}, Cores: 2},
		"bandwidth": {Bandwidth: map[string]*study.Bandwidth{"fair": bw}, Cores: 2},
	}
}

// Each study's report, Markdown and HTML with its charts, rendered from fixed results, is
// byte-for-byte the golden file (go test ./internal/reproduce -update rewrites them).
func TestGoldenReports(t *testing.T) {
	for name, got := range goldenMeasured() {
		t.Run(name, func(t *testing.T) {
			s, err := Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			pub, _ := LoadPublished(s.Key)
			dir := t.TempDir()
			if err := writeReport(dir, s, Small, s.Judge(pub, got), got, pub); err != nil {
				t.Fatal(err)
			}
			for _, f := range []string{"report.md", "report.html"} {
				b, err := os.ReadFile(filepath.Join(dir, f))
				if err != nil {
					t.Fatal(err)
				}
				checkGolden(t, name+"."+f+".golden", b)
			}
			html, _ := os.ReadFile(filepath.Join(dir, "report.html"))
			if s.Charts != nil && strings.Count(string(html), "<svg") < len(s.Charts(pub, got)) {
				t.Errorf("report.html has fewer charts than the study draws")
			}
		})
	}
}

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/reproduce -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		wl, gl := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
		for i := range min(len(wl), len(gl)) {
			if wl[i] != gl[i] {
				t.Fatalf("%s differs from the rendering at line %d (run go test ./internal/reproduce -update after checking the change):\n- %.300s\n+ %.300s", path, i+1, wl[i], gl[i])
			}
		}
		t.Fatalf("%s differs from the rendering in length", path)
	}
}
