package reproduce

import (
	"fmt"
	"strings"

	"github.com/fairbench/fairbench/internal/result"
)

// The sysbench shoot-out (March 2026): 10 tables x 100,000 rows, 16 threads, 60 s per workload,
// sysbench 1.0.20's defaults (so --rand-type special), 2 GB buffer pool on every engine; MySQL 8.4
// most likely with its default binary log (sync_binlog=1), MariaDB without.
func init() {
	register(&Study{
		Name: "shootout",
		// Three rounds give every ratio and knob effect an interval (Student's t, 2 degrees of
		// freedom); at --scale small that is about 20-25 minutes here.
		Repeat:  3,
		Title:   "sysbench shoot-out (March 2026): which one is faster for your workload?",
		Key:     "sysbench_shootout_2026",
		Engines: []string{"postgres", "mysql", "mariadb"},
		ScaleRule: "small keeps the data (10 x 100,000 rows fits any machine), the 16 threads and the special " +
			"distribution, and shrinks 60 s per workload to 8 s after a 2 s warm-up; both run 3 rounds, the engine order rotated",
		Runs:    shootoutRuns,
		Judge:   judgeShootout,
		Explain: explainShootoutGap,
	})
}

var shootoutWorkloads = []struct {
	name, label, figure string
	qps                 bool
}{
	{"oltp_read_write", "read-write", "tps", false},
	{"oltp_read_only", "read-only", "tps", false},
	{"oltp_point_select", "point select", "qps", true},
	{"oltp_insert", "insert", "tps", false},
}

// shootoutKnobs are the settings that could make MySQL's read-write figure what the study
// published: each flipped alone on MySQL, beside a fair MySQL run of the same round.
var shootoutKnobs = []string{"binlog", "doublewrite", "flush-method", "synchronous-commit", "buffer-pool"}

// shootoutSuite is the study's method at a scale, over the given workloads.
func shootoutSuite(sc Scale, workloads ...string) string {
	time, warmup, threads, tables, size := "8s", "2s", 16, 10, 100000
	switch sc {
	case Full:
		time, warmup = "60s", "10s"
	case tiny:
		time, warmup, threads, tables, size = "2s", "1s", 4, 2, 2000
	}
	steps := ""
	for _, w := range workloads {
		steps += "  - workload: " + w + "\n"
	}
	return fmt.Sprintf(`name: shootout-%s
description: The sysbench shoot-out as published - 10 x 100,000 rows, 16 threads, sysbench 1.0.20's special distribution.
threads: %d
time: %s
warmup: %s
rand_type: special
options:
  tables: "%d"
  table-size: "%d"
steps:
%s`, sc, threads, time, warmup, tables, size, steps)
}

func shootoutRuns(sc Scale) []Run {
	var all []string
	for _, w := range shootoutWorkloads {
		all = append(all, w.name)
	}
	s, rw := shootoutSuite(sc, all...), shootoutSuite(sc, "oltp_read_write")
	knobs, pool := shootoutKnobs, int64(2<<30)
	if sc == tiny {
		knobs, pool = knobs[:1], 256<<20
	}
	return []Run{
		{Name: "fair", Suite: s, BufferPoolBytes: pool},
		// MySQL 8.4 writes its binary log and syncs it on every commit by default; the study says
		// nothing of it, and MariaDB 10.11 has it off by default. Run MySQL as it most likely ran.
		{Name: "as-published", Engines: []string{"mysql"}, Suite: s, Binlog: true, BufferPoolBytes: pool,
			AsPublished: "MySQL with its default binary log (sync_binlog=1); MariaDB and PostgreSQL as in the fair run"},
		// Each engine as its package ships it, on the headline workload: what a reader who installs
		// and runs sysbench without tuning sees.
		{Name: "defaults", Suite: rw, Profile: "defaults",
			Purpose: "each engine's package defaults (compare --profile defaults), read-write only: MySQL's binary log on, 128 MiB buffer pools"},
		// The knobs one at a time on MySQL's read-write figure, each run right after a fair one so
		// that the machine's drift moves both alike.
		{Name: "knobs", Engines: []string{"mysql"}, Suite: rw, BufferPoolBytes: pool, Explain: knobs,
			Purpose: "MySQL's read-write run again with one knob flipped from the fair profile (compare --explain " + strings.Join(knobs, ",") + ")"},
	}
}

func judgeShootout(pub Published, got Measured) []Row {
	var rows []Row
	for _, w := range shootoutWorkloads {
		rows = append(rows, shootoutRatios(pub, got, w.name, w.label, w.figure, w.qps)...)
	}
	rows = append(rows, shootoutAsPublished(pub, got)...)
	rows = append(rows, shootoutDefaults(pub, got))
	rows = append(rows, shootoutMemory(pub, got)...)
	rows = append(rows, shootoutDecisions(pub, got)...)
	return rows
}

// figureOf is a result's TPS, or its QPS for the point-select row the study gave as QPS.
func figureOf(r *result.Result, qps bool) float64 {
	if qps {
		return r.QPS
	}
	return r.TPS
}

// shootoutRatios compares each engine with PostgreSQL, the study's first column, for one workload.
func shootoutRatios(pub Published, got Measured, workload, label, figure string, qps bool) []Row {
	var rows []Row
	ref := got.All("fair", "postgres", workload)
	pubRef, _ := pub.Float("results." + workload + ".postgres." + figure)
	for _, e := range []string{"mysql", "mariadb"} {
		pubE, ok := pub.Float("results." + workload + "." + e + "." + figure)
		if !ok || pubRef == 0 {
			continue
		}
		rs := got.All("fair", e, workload)
		g := ratioOf(got.Rule("fair"), rs, ref, func(r *result.Result) float64 { return figureOf(r, qps) }, true)
		why := evidence(pub, got.Cores, first(rs), first(ref))
		if !g.OK {
			why = "the fair run has no complete " + label + " result for " + e + " and postgres"
		}
		rows = append(rows, judgeGot(fmt.Sprintf("%s %s, %s / postgres", label, figureName(figure), e), "fair", pubE/pubRef, g, why))
	}
	return rows
}

// first is the first of a run's results, nil when there are none.
func first(rs []*result.Result) *result.Result {
	if len(rs) == 0 {
		return nil
	}
	return rs[0]
}

func figureName(f string) string {
	if f == "qps" {
		return "QPS"
	}
	return "TPS"
}

// shootoutAsPublished sets MySQL's read-write figure with its binary log beside the published
// one and says how much of the gap the binary log explains.
func shootoutAsPublished(pub Published, got Measured) []Row {
	pubMy, _ := pub.Float("results.oltp_read_write.mysql.tps")
	pubPg, _ := pub.Float("results.oltp_read_write.postgres.tps")
	ref := got.All("fair", "postgres", "oltp_read_write")
	fair := got.All("fair", "mysql", "oltp_read_write")
	bin := got.All("as-published", "mysql", "oltp_read_write")
	if pubPg == 0 {
		return nil
	}
	tps := func(r *result.Result) float64 { return r.TPS }
	// Two comparisons, run one after the other: their rounds are not paired.
	g := ratioOf(got.Rule("as-published", "fair"), bin, ref, tps, false)
	why := "needs the fair PostgreSQL and the as-published MySQL read-write results"
	var binlogAlone string
	if g.OK {
		why = evidence(pub, got.Cores, first(bin), first(ref))
		if alone := ratioOf(got.Rule("as-published", "fair"), bin, fair, tps, false); alone.OK {
			binlogAlone = fmt.Sprintf("the binary log alone moves MySQL from %.0f to %.0f TPS (%.2fx)",
				medianOf(result.Figures(fair, tps)), medianOf(result.Figures(bin, tps)), alone.Ratio)
			why = joinWhy(binlogAlone, why)
		}
	}
	row := judgeGot("read-write TPS, mysql (binary log on) / postgres", "as-published", pubMy/pubPg, g, why)
	if row.Verdict == Agrees && binlogAlone != "" {
		row.Why = joinWhy(row.Why, binlogAlone)
	}
	return []Row{row}
}

func joinWhy(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

// shootoutMemory compares memory footprints, idle and under load, with PostgreSQL's.
func shootoutMemory(pub Published, got Measured) []Row {
	var rows []Row
	for _, phase := range []string{"idle", "load"} {
		pubPg, _ := pub.Float("results.memory_mb.postgres." + phase)
		mem := func(r *result.Result) float64 { mb, _ := memoryMB(r, phase); return mb }
		ref := got.All("fair", "postgres", "oltp_read_write")
		for _, e := range []string{"mysql", "mariadb"} {
			pubE, _ := pub.Float("results.memory_mb." + e + "." + phase)
			g := ratioOf(got.Rule("fair"), got.All("fair", e, "oltp_read_write"), ref, mem, true)
			why := "measured here: " + memoryMethod(phase) + "; the study does not say how it measured"
			if !g.OK || g.Ratio == 0 {
				g.OK, why = false, "memory not measured (the server was not started by fairbench here)"
			}
			rows = append(rows, judgeGot(fmt.Sprintf("memory %s, %s / postgres", phase, e), "fair", pubE/pubPg, g, why))
		}
	}
	return rows
}

func memoryMethod(phase string) string {
	if phase == "idle" {
		return "the memory the kernel charges the server's cgroup after start, before any load (anonymous and page cache, shared memory included)"
	}
	return "the most the kernel charged the server's cgroup at an interval's end under load"
}

// memoryMB is the server's memory footprint in MiB as the kernel charges its cgroup; results
// without one (a server fairbench did not start) have none, never an RSS sum, which counts
// shared buffers once per process.
func memoryMB(r *result.Result, phase string) (float64, bool) {
	if r == nil || r.Server == nil {
		return 0, false
	}
	if phase == "idle" {
		return r.Server.MemIdleMB, r.Server.MemIdleMB > 0
	}
	return r.Server.MemLoadMB, r.Server.MemLoadMB > 0
}

// shootoutDecisions compares the study's decision table with the picks of fairbench's figures.
func shootoutDecisions(pub Published, got Measured) []Row {
	engines := []string{"postgres", "mysql", "mariadb"}
	runs := func(workload string) map[string][]*result.Result {
		out := map[string][]*result.Result{}
		for _, e := range engines {
			if rs := got.All("fair", e, workload); len(rs) > 0 {
				out[e] = rs
			}
		}
		return out
	}
	pick := func(workload string, qps bool) string {
		return bestOf(got.Rule("fair"), runs(workload), func(r *result.Result) float64 { return figureOf(r, qps) })
	}
	// Less memory is better: judged on its inverse, so "higher is better" holds throughout.
	lessMemory := func(r *result.Result) float64 {
		if mb, ok := memoryMB(r, "load"); ok {
			return 1 / mb
		}
		return 0
	}
	mem := bestOf(got.Rule("fair"), runs("oltp_read_write"), lessMemory)
	decisions := []struct{ key, label, got string }{
		{"mixed_read_write", "mixed read-write", pick("oltp_read_write", false)},
		{"read_heavy", "read-heavy", pick("oltp_read_only", false)},
		{"bulk_insert", "bulk insert", pick("oltp_insert", false)},
		{"point_lookups", "point lookups", pick("oltp_point_select", true)},
		{"lowest_memory", "lowest memory", mem},
	}
	var rows []Row
	for _, d := range decisions {
		p := pub.String("decisions." + d.key)
		rows = append(rows, judgePick("pick for "+d.label, "fair", p, d.got, "the ratio rows above give the figures behind it"))
	}
	return rows
}
