package reproduce

import (
	"fmt"
	"time"

	"github.com/fairbench/fairbench/internal/study"
)

// The NVMe bandwidth and MVCC study: sysbench read-write and TPC-H Q18 on PostgreSQL and MariaDB
// with the data on a device whose bandwidth is capped, from 125 MiB/s to the device's maximum.
func init() {
	register(&Study{
		Name:    "bandwidth",
		Title:   "NVMe bandwidth and MVCC (workshop paper re-running NVMeVirt's database evaluation)",
		Key:     "nvme_bandwidth_mvcc",
		Engines: []string{"postgres", "mariadb"},
		ScaleRule: "small keeps the data a few times the buffer pool (64 MB pool, 4 tables), OLTP read-write at 12 threads " +
			"and Q18 at every step, and caps at 25M and uncapped for 20 s each with TPC-H at scale factor 0.1; full caps at " +
			"125M, 250M, 500M, 1000M and uncapped for 60 s each, TPC-H at scale factor 1",
		Runs:   bandwidthRuns,
		Judge:  judgeBandwidth,
		Charts: bandwidthCharts,
	})
}

func bandwidthRuns(sc Scale) []Run {
	b := &BandwidthRun{Limits: []string{"25M", "max"}, Threads: 12, Tables: 4, Time: 20 * time.Second, TPCHScale: 0.1}
	switch sc {
	case Full:
		b = &BandwidthRun{Limits: []string{"125M", "250M", "500M", "1000M", "max"}, Threads: 12, Tables: 10, Time: time.Minute, TPCHScale: 1}
	case tiny:
		b = &BandwidthRun{Limits: []string{"25M", "max"}, Threads: 2, Tables: 1, TableSize: 10000, Time: 2 * time.Second, TPCHScale: 0.01, DeviceBytes: 1 << 30}
	}
	return []Run{{Name: "fair", Bandwidth: b}}
}

func judgeBandwidth(pub Published, got Measured) []Row {
	doc := got.Bandwidth["fair"]
	pg, ma := bandwidthEngine(doc, "postgres"), bandwidthEngine(doc, "mariadb")
	var rows []Row
	for _, at := range []struct{ key, label string }{{"125", "lowest cap"}, {"max", "uncapped"}} {
		pgStep, maStep := stepAt(pg, at.key == "max"), stepAt(ma, at.key == "max")
		where := capName(pgStep, at.label)
		// OLTP: MariaDB over PostgreSQL.
		pubTPS, _ := pub.Float("results.oltp_mariadb_over_postgres_tps." + at.key)
		ok := pgStep != nil && maStep != nil && pgStep.TPS > 0 && maStep.TPS > 0
		ratio := 0.0
		if ok {
			ratio = maStep.TPS / pgStep.TPS
		}
		rows = append(rows, judgeRatio("OLTP read-write TPS, mariadb / postgres, "+where, "fair", pubTPS, ratio, ok, bandwidthWhy(doc, ok, oltpReads(pgStep, maStep))))
		// Q18: PostgreSQL's speed-up over MariaDB = MariaDB's seconds / PostgreSQL's.
		pubQ, _ := pub.Float("results.q18_postgres_speedup_over_mariadb." + at.key)
		pq, mq := q18Seconds(pgStep), q18Seconds(maStep)
		okQ := pq > 0 && mq > 0
		ratioQ := 0.0
		if okQ {
			ratioQ = mq / pq
		}
		rows = append(rows, judgeRatio("TPC-H Q18 seconds, mariadb / postgres, "+where, "fair", pubQ, ratioQ, okQ, bandwidthWhy(doc, okQ, q18Reads(pgStep, maStep))))
	}
	return append(rows, pagesRow(pg, ma))
}

func bandwidthWhy(doc *study.Bandwidth, ok bool, measured string) string {
	switch {
	case doc == nil:
		return "the bandwidth study did not run (it needs root, loop devices and a blkio or io cgroup controller)"
	case !ok:
		return "the step has no figure: " + doc.Error
	}
	memory := "no memory cap, so the OS page cache could hold it all (study bandwidth --server-memory caps it)"
	if m := doc.Config.ServerMemoryBytes; m > 0 {
		memory = fmt.Sprintf("each server's memory capped at %d MiB, page cache included", m>>20)
	}
	why := fmt.Sprintf("data %d tables, 3x the %d MiB buffer pool here, %s; about 60 GiB on 16 GiB in the study",
		doc.Config.Tables, doc.Config.BufferPoolBytes>>20, memory)
	if measured != "" {
		why = measured + "; " + why
	}
	return why
}

// oltpReads says what share of the pages each engine read from storage reached the device under
// OLTP: PostgreSQL's reads go through the OS page cache, InnoDB's (O_DIRECT) do not, so where
// PostgreSQL's share is small its reads were served from memory the study did not have.
func oltpReads(pg, ma *study.Step) string {
	share := func(s *study.Step) string {
		if s == nil || s.PagesReadPerSec4K <= 0 {
			return "?"
		}
		return fmt.Sprintf("%.0f%%", 100*min(s.DeviceReadBps/(s.PagesReadPerSec4K*4096), 1))
	}
	if pg == nil || ma == nil {
		return ""
	}
	return fmt.Sprintf("of the pages read from storage, the device served %s of postgres's (the rest came from the OS page cache) and %s of mariadb's", share(pg), share(ma))
}

// q18Reads gives the device's read rate while Q18 ran on each engine (from a cold page cache).
func q18Reads(pg, ma *study.Step) string {
	if pg == nil || ma == nil || pg.Extra["tpch_q18"].DeviceReadBps <= 0 || ma.Extra["tpch_q18"].DeviceReadBps <= 0 {
		return ""
	}
	return fmt.Sprintf("the device read %.1f MB/s during postgres's Q18 and %.1f MB/s during mariadb's",
		pg.Extra["tpch_q18"].DeviceReadBps/1e6, ma.Extra["tpch_q18"].DeviceReadBps/1e6)
}

func bandwidthEngine(doc *study.Bandwidth, kind string) *study.BandwidthEngine {
	if doc == nil {
		return nil
	}
	for i := range doc.Engines {
		if doc.Engines[i].Kind == kind {
			return &doc.Engines[i]
		}
	}
	return nil
}

// stepAt is the engine's uncapped step, or its lowest cap.
func stepAt(e *study.BandwidthEngine, uncapped bool) *study.Step {
	if e == nil {
		return nil
	}
	var pick *study.Step
	for i := range e.Steps {
		s := &e.Steps[i]
		switch {
		case uncapped && s.LimitBps == 0:
			return s
		case !uncapped && s.LimitBps > 0 && (pick == nil || s.LimitBps < pick.LimitBps):
			pick = s
		}
	}
	return pick
}

func capName(s *study.Step, label string) string {
	if s == nil || s.LimitBps == 0 {
		return label
	}
	return label + " (" + s.Limit + " here, 125 MiB/s published)"
}

func q18Seconds(s *study.Step) float64 {
	if s == nil {
		return 0
	}
	return s.Extra["tpch_q18"].Seconds
}

// pagesRow: the study found PostgreSQL requesting more 4 KB pages per second than MariaDB under
// OLTP, even at lower TPS; fairbench reads the engines' own buffer counters at the uncapped step.
func pagesRow(pg, ma *study.BandwidthEngine) Row {
	row := Row{Figure: "4 KB pages requested per second under OLTP, postgres / mariadb, uncapped", Run: "fair", Published: "above 1 (no figure)"}
	p, m := stepAt(pg, true), stepAt(ma, true)
	if p == nil || m == nil || m.PagesRequestedPerSec4K == 0 {
		row.Verdict, row.Measured, row.Why = NotComparable, "not measured", "the uncapped step has no page counts"
		return row
	}
	ratio := p.PagesRequestedPerSec4K / m.PagesRequestedPerSec4K
	row.Measured = fmt.Sprintf("%.2fx", ratio)
	if ratio > 1 {
		row.Verdict, row.Why = Agrees, "PostgreSQL requests more pages here too"
	} else {
		row.Verdict, row.Why = Disagrees, "MariaDB requests as many or more pages here"
	}
	return row
}
