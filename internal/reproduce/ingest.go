package reproduce

import (
	"fmt"
	"math"

	"github.com/fairbench/fairbench/internal/result"
)

// The ingest and join study (video benchmark): PostgreSQL against MySQL, one client added per
// stage up to 1,000, each request after a random 0-40 ms wait, clients sharing a pool of 80
// connections; test 1 inserts events, test 2 joins a random event to its customer.
func init() {
	register(&Study{
		Name:    "ingest",
		Title:   "ingest and join, ramped to saturation (video benchmark, PostgreSQL 17 vs MySQL 9.0)",
		Key:     "ingest_join_ramp",
		Engines: []string{"postgres", "mysql"},
		ScaleRule: "small keeps the schema (10 customers, 10 actions), the 0-40 ms wait before each request and the " +
			"pool of 80 connections, and shrinks 1,000 clients added one per 30 s stage to 120 clients added two per " +
			"2 s stage, and about 65 million events to 1 million; full adds one client every 30 s up to 1,000 over 65 million events",
		Runs:   ingestRuns,
		Judge:  judgeIngest,
		Charts: ingestCharts,
	})
}

func ingestSuite(sc Scale) string {
	stages, events := "{add: 2, every: 2s, max: 120, delay: 0-40ms, pool: 80}", "1000000"
	switch sc {
	case Full:
		stages, events = "{add: 1, every: 30s, max: 1000, delay: 0-40ms, pool: 80}", "65000000"
	case tiny:
		stages, events = "{add: 2, every: 1s, max: 6, delay: 0-40ms, pool: 80}", "2000"
	}
	return fmt.Sprintf(`name: ingest-%s
description: The ingest/join study as published - clients added stage by stage, a random 0-40 ms wait before each request, a pool of 80 connections.
warmup: 0s
options:
  customers: "10"
  events: "%s"
steps:
  - workload: events_ingest
    stages: %s
  - workload: events_join
    stages: %s
`, sc, events, stages, stages)
}

func ingestRuns(sc Scale) []Run {
	return []Run{{Name: "fair", Suite: ingestSuite(sc), MaxConnections: 200}}
}

func judgeIngest(pub Published, got Measured) []Row {
	var rows []Row
	for _, w := range []struct{ workload, key, label string }{
		{"events_ingest", "ingest_max_qps", "ingest"}, {"events_join", "join_max_qps", "join"},
	} {
		pg, my := got.Find("fair", "postgres", w.workload), got.Find("fair", "mysql", w.workload)
		pubPG, _ := pub.Float("results." + w.key + ".postgres")
		pubMy, _ := pub.Float("results." + w.key + ".mysql")
		peakPG, peakMy := peakQPS(pg), peakQPS(my)
		ok := peakPG > 0 && peakMy > 0
		ratio, why := 0.0, "needs both engines' "+w.label+" ramps"
		if ok {
			ratio, why = peakPG/peakMy, evidence(pub, got.Cores, pg, my)
		}
		row := judgeRatio(w.label+" highest QPS, postgres / mysql", "fair", pubPG/pubMy, ratio, ok, why)
		if ok && clientBound(pg) && clientBound(my) {
			row.Verdict = NotComparable
			row.Why = fmt.Sprintf("both engines served about all the ramp's clients could ask (%.0f QPS at most, with their waits): neither saturated, so the peaks compare the client, not the engines; run --scale full", offeredMax(pg))
		}
		rows = append(rows, row)
		rows = append(rows, saturationRow(pub, got, w.label, w.workload))
	}
	return rows
}

// offeredMax is the most a stage ramp's clients can ask per second: each waits its random delay
// (on average the middle of the range) before every request, so even an instant server sees at
// most clients / mean delay.
func offeredMax(r *result.Result) float64 {
	if r == nil || r.Ramp == nil || !r.Ramp.Stages {
		return 0
	}
	mean := (r.Ramp.DelayMinMS + r.Ramp.DelayMaxMS) / 2 / 1000
	if mean <= 0 {
		return 0
	}
	return float64(r.Ramp.Max) / mean
}

// clientBound says a ramp's peak came within a fifth of what its clients could ask at all.
func clientBound(r *result.Result) bool {
	m := offeredMax(r)
	return m > 0 && peakQPS(r) >= 0.8*m
}

// peakQPS is the most queries per second any interval of a ramp reached.
func peakQPS(r *result.Result) float64 {
	if r == nil {
		return 0
	}
	best := 0.0
	for _, iv := range r.Intervals {
		best = max(best, iv.QPS)
	}
	return best
}

// saturationRow compares where MySQL's curve bent with PostgreSQL's highest throughput: the
// study saw MySQL fall behind at about 5,500 QPS of ingest (18,000 of join) while PostgreSQL
// went on to about 19,000 (32,000).
func saturationRow(pub Published, got Measured, label, workload string) Row {
	key := map[string]string{"ingest": "results.ingest_mysql_falls_behind_at_qps", "join": "results.join_mysql_degrades_at_qps"}[label]
	maxKey := map[string]string{"ingest": "results.ingest_max_qps.postgres", "join": "results.join_max_qps.postgres"}[label]
	pubBend, _ := pub.Float(key)
	pubPG, _ := pub.Float(maxKey)
	pg, my := got.Find("fair", "postgres", workload), got.Find("fair", "mysql", workload)
	ok := my != nil && my.Ramp != nil && my.Ramp.SaturationTPS > 0 && peakQPS(pg) > 0
	ratio, why := 0.0, "needs MySQL's saturation point and PostgreSQL's ramp"
	if ok {
		// events_* run one statement per transaction: TPS is QPS.
		ratio, why = my.Ramp.SaturationTPS/peakQPS(pg), fmt.Sprintf("MySQL saturated at %d clients%s", my.Ramp.SaturationThreads, capacityTerms(my.Ramp))
	}
	row := judgeRatio(label+": QPS where MySQL saturates / PostgreSQL's highest", "fair", pubBend/pubPG, ratio, ok, why)
	if ok && row.Verdict == Agrees {
		row.Why += "; " + why // where MySQL saturated, in capacity's terms, whatever the verdict
	}
	if ok && clientBound(pg) {
		row.Verdict = NotComparable
		row.Why = fmt.Sprintf("PostgreSQL served about all the ramp's clients could ask (%.0f QPS at most): its highest is the client's, not the engine's; run --scale full", offeredMax(pg))
	}
	return row
}

// capacityTerms says a ramp's saturation point as capacity is said (docs/capacity.md): the
// arrivals the clients' waits made and the server carried, and the p99 there, from the
// scheduled start as the ramp measures it; "" where the ramp recorded no step at that point.
func capacityTerms(r *result.Ramp) string {
	for _, st := range r.Steps {
		if st.Threads == r.SaturationThreads && st.P99MS > 0 {
			return fmt.Sprintf(": %.0f QPS carried with p99 %.1f ms there, its capacity at p99 ≤ %.0f ms on this ramp", r.SaturationTPS, st.P99MS, math.Ceil(st.P99MS))
		}
	}
	return ""
}
