package reproduce

import (
	"fmt"
	"sort"

	"github.com/fairbench/fairbench/internal/document"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/study"
)

// The studies' charts, drawn from the results files and published.yaml only. Published curves
// are dashed, measured ones solid; every chart says in its title what it divides by.

// byOwnMax divides a curve by its own highest point: where it bends survives a change of
// machine, its height does not.
func byOwnMax(ys []float64) []float64 {
	top := 0.0
	for _, y := range ys {
		top = max(top, y)
	}
	out := make([]float64, len(ys))
	for i, y := range ys {
		if top > 0 {
			out[i] = y / top
		}
	}
	return out
}

// publishedSeries is a published curve over the thread counts it has figures for.
func publishedSeries(pub Published, name, threadsPath, valuesPath, color string) document.Series {
	threads, _ := pub.Floats(threadsPath)
	vals, ok := pub.Floats(valuesPath)
	s := document.Series{Name: name, Dashed: true, Color: color}
	var ys []float64
	for i := range vals {
		if ok[i] && i < len(threads) {
			s.X = append(s.X, threads[i])
			ys = append(ys, vals[i])
		}
	}
	s.Y = byOwnMax(ys)
	return s
}

// measuredSeries is a measured TPS-by-threads curve, divided by its own highest point.
func measuredSeries(name, color string, curve map[int]float64) document.Series {
	var ts []int
	for t := range curve {
		ts = append(ts, t)
	}
	sort.Ints(ts)
	s := document.Series{Name: name, Color: color}
	var ys []float64
	for _, t := range ts {
		s.X = append(s.X, float64(t))
		ys = append(ys, curve[t])
	}
	s.Y = byOwnMax(ys)
	return s
}

// scalingCharts: TPS by threads, as the white paper drew its tables, and point selects by
// threads per core count; every curve divided by its own highest point.
func scalingCharts(pub Published, got Measured) []document.LineChart {
	var charts []document.LineChart
	for _, w := range []struct{ key, workload, label string }{
		{"oltp_90_10_tps", "oltp_90_10", "OLTP 90:10"}, {"point_select_tps", "oltp_point_select", "point select"},
	} {
		c := document.LineChart{Dots: true, Title: w.label + " TPS by client threads, each curve / its own highest point", XName: "client threads",
			YName: "TPS / the curve's highest", LogX: true}
		c.Series = append(c.Series,
			publishedSeries(pub, "x86, published", w.key+".threads", w.key+".xeon", "#7f7f7f"),
			publishedSeries(pub, "Power10, published", w.key+".threads", w.key+".power10", "#9467bd"))
		if curve := measuredCurve(fairUnconfined(got.Runs["fair"]), "mariadb", w.workload); len(curve) > 0 {
			c.Series = append(c.Series, measuredSeries(fmt.Sprintf("here (%d CPUs)", got.Cores), document.EngineColor("mariadb"), curve))
		}
		charts = append(charts, c)
	}
	c := document.LineChart{Dots: true, Title: "point select TPS by client threads per core count, each curve / its own highest point", XName: "client threads",
		YName: "TPS / the curve's highest", LogX: true}
	for i, cores := range []int{2, 4, 6, 8} {
		c.Series = append(c.Series, publishedSeries(pub, fmt.Sprintf("%d cores, pub.", cores),
			"point_select_by_cores.threads", fmt.Sprintf("point_select_by_cores.cores_%d", cores), document.Palette[6+i]))
	}
	for i, n := range coreCounts(got.Runs["cores"]) {
		curve := measuredCurve(withCPUs(got.Runs["cores"], n), "mariadb", "oltp_point_select")
		c.Series = append(c.Series, measuredSeries(fmt.Sprintf("%d CPU here", n), document.Palette[(1+2*i)%len(document.Palette)], curve))
	}
	return append(charts, c)
}

// fairUnconfined drops results of a server confined to some CPUs.
func fairUnconfined(rs []*result.Result) []*result.Result {
	return withCPUs(rs, 0)
}

// withCPUs keeps the results of a server confined to n CPUs (0: not confined).
func withCPUs(rs []*result.Result, n int) []*result.Result {
	var out []*result.Result
	for _, r := range rs {
		if cpus(r) == n {
			out = append(out, r)
		}
	}
	return out
}

func cpus(r *result.Result) int {
	if r.Server == nil {
		return 0
	}
	return r.Server.CPUs
}

// coreCounts lists the CPU counts a run confined its servers to, fewest first.
func coreCounts(rs []*result.Result) []int {
	seen := map[int]bool{}
	var out []int
	for _, r := range rs {
		if n := cpus(r); n > 0 && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	sort.Ints(out)
	return out
}

// ingestCharts: QPS and p99 over the ramp, clients on the x axis, each engine's saturation
// point ringed. QPS is divided by PostgreSQL's highest, the study's own comparison; the
// published levels (PostgreSQL's top, MySQL's top, where MySQL fell behind) are dashed lines
// over the same range. The study gave no p99 figures, so that chart is measured only, in ms.
func ingestCharts(pub Published, got Measured) []document.LineChart {
	var charts []document.LineChart
	for _, w := range []struct{ workload, label, maxKey, bendKey string }{
		{"events_ingest", "ingest", "ingest_max_qps", "ingest_mysql_falls_behind_at_qps"},
		{"events_join", "join", "join_max_qps", "join_mysql_degrades_at_qps"},
	} {
		pg := got.Find("fair", "postgres", w.workload)
		ref := peakQPS(pg)
		qps := document.LineChart{Dots: true, Title: w.label + " QPS by clients, / PostgreSQL's highest QPS", XName: "clients", YName: "QPS / PostgreSQL's highest",
			MarkerName: "saturation point"}
		lat := document.LineChart{Dots: true, Title: w.label + " p99 latency by clients (measured; the study gave no figure)", XName: "clients", YName: "p99 ms",
			MarkerName: "saturation point"}
		lastX := 0.0
		for _, e := range []string{"postgres", "mysql"} {
			r := got.Find("fair", e, w.workload)
			if r == nil || r.Ramp == nil || len(r.Ramp.Steps) == 0 || ref == 0 {
				continue
			}
			q := document.Series{Name: e, Color: document.EngineColor(e)}
			p := document.Series{Name: e, Color: document.EngineColor(e)}
			for _, st := range r.Ramp.Steps {
				x := float64(st.Threads)
				q.X, q.Y = append(q.X, x), append(q.Y, st.TPS/ref) // one statement a transaction: TPS is QPS
				p.X, p.Y = append(p.X, x), append(p.Y, st.P99MS)
				lastX = max(lastX, x)
			}
			qps.Series, lat.Series = append(qps.Series, q), append(lat.Series, p)
			if r.Ramp.SaturationThreads > 0 {
				qps.Markers = append(qps.Markers, document.Marker{X: float64(r.Ramp.SaturationThreads), Y: r.Ramp.SaturationTPS / ref, Color: document.EngineColor(e)})
				lat.Markers = append(lat.Markers, document.Marker{X: float64(r.Ramp.SaturationThreads), Y: p99At(r.Ramp, r.Ramp.SaturationThreads), Color: document.EngineColor(e)})
			}
		}
		if len(qps.Series) == 0 {
			continue
		}
		pubPG, _ := pub.Float("results." + w.maxKey + ".postgres")
		pubMy, _ := pub.Float("results." + w.maxKey + ".mysql")
		bend, _ := pub.Float("results." + w.bendKey)
		for _, lvl := range []struct {
			name, color string
			v           float64
		}{
			{"postgres top, pub.", document.EngineColor("postgres"), pubPG},
			{"mysql top, pub.", document.EngineColor("mysql"), pubMy},
			{"mysql bends, pub.", "#7f7f7f", bend},
		} {
			if pubPG > 0 && lvl.v > 0 {
				qps.Series = append(qps.Series, document.Series{Name: lvl.name, Dashed: true, Color: lvl.color, X: []float64{0, lastX}, Y: []float64{lvl.v / pubPG, lvl.v / pubPG}})
			}
		}
		charts = append(charts, qps, lat)
	}
	return charts
}

func p99At(r *result.Ramp, threads int) float64 {
	for _, st := range r.Steps {
		if st.Threads == threads {
			return st.P99MS
		}
	}
	return 0
}

// bandwidthCharts: OLTP throughput by bandwidth cap, MariaDB / PostgreSQL, the cap given as a
// share of the device's own maximum so that the paper's NVMe SSD and this machine's loop device
// share an axis; the paper's device reached about 660 MiB/s (published.yaml).
func bandwidthCharts(pub Published, got Measured) []document.LineChart {
	doc := got.Bandwidth["fair"]
	pg, ma := bandwidthEngine(doc, "postgres"), bandwidthEngine(doc, "mariadb")
	if pg == nil || ma == nil {
		return nil
	}
	c := document.LineChart{Dots: true, Title: "OLTP read-write TPS by bandwidth cap, MariaDB / PostgreSQL", XName: "cap, % of the device's maximum",
		YName: "MariaDB TPS / PostgreSQL TPS"}
	devMax, _ := pub.Float("device.max_mib_s")
	lowCap, _ := pub.Float("results.oltp_mariadb_over_postgres_tps.125")
	atMax, _ := pub.Float("results.oltp_mariadb_over_postgres_tps.max")
	if devMax > 0 {
		c.Series = append(c.Series, document.Series{Name: "published (NVMe)", Dashed: true, Color: "#7f7f7f",
			X: []float64{100 * 125 / devMax, 100}, Y: []float64{lowCap, atMax}})
	}
	measured := document.Series{Name: "here (loop device)", Color: document.EngineColor("mariadb")}
	top := deviceMax(stepAt(pg, true))
	for _, p := range pg.Steps {
		m := stepNamed(ma, p.Limit)
		if m == nil || p.TPS == 0 || top == 0 {
			continue
		}
		x := 100.0
		if p.LimitBps > 0 {
			x = min(100, 100*float64(p.LimitBps)/top)
		}
		measured.X, measured.Y = append(measured.X, x), append(measured.Y, m.TPS/p.TPS)
	}
	c.Series = append(c.Series, measured)
	c.Series = append(c.Series, document.Series{Name: "a tie", Dashed: true, Color: "#bcbd22", X: []float64{0, 100}, Y: []float64{1, 1}})
	return []document.LineChart{c}
}

// deviceMax is what the uncapped step's direct-I/O probe got from the device, bytes per second.
func deviceMax(s *study.Step) float64 {
	if s == nil || s.Probe == nil {
		return 0
	}
	return min(s.Probe.ReadBps, s.Probe.WriteBps)
}

func stepNamed(e *study.BandwidthEngine, limit string) *study.Step {
	for i := range e.Steps {
		if e.Steps[i].Limit == limit {
			return &e.Steps[i]
		}
	}
	return nil
}

// paymentsCharts: transfers per second over the run, each engine divided by PostgreSQL's
// average, with the published ratios as dashed levels (the article drew throughput over its
// two hours).
func paymentsCharts(pub Published, got Measured) []document.LineChart {
	pg := got.Find("fair", "postgres", "payments")
	if pg == nil || pg.TPS == 0 {
		return nil
	}
	c := document.LineChart{Dots: true, Title: "transfers per second over the run, / PostgreSQL's average", XName: "seconds", YName: "transfers/s / PostgreSQL's average"}
	lastX := 0.0
	for _, e := range []string{"postgres", "mariadb", "mysql"} {
		r := got.Find("fair", e, "payments")
		if r == nil {
			continue
		}
		s := document.Series{Name: e, Color: document.EngineColor(e)}
		for _, iv := range r.Intervals {
			s.X, s.Y = append(s.X, iv.T), append(s.Y, iv.TPS/pg.TPS)
			lastX = max(lastX, iv.T)
		}
		c.Series = append(c.Series, s)
	}
	overMa, _ := pub.Float("results.ratio.postgres_over_mariadb")
	overMy, _ := pub.Float("results.ratio.postgres_over_mysql")
	for _, lvl := range []struct {
		e string
		v float64
	}{{"postgres", 1}, {"mariadb", 1 / overMa}, {"mysql", 1 / overMy}} {
		if document.Finite(lvl.v) && lvl.v > 0 {
			c.Series = append(c.Series, document.Series{Name: lvl.e + ", pub.", Dashed: true, Color: document.EngineColor(lvl.e), X: []float64{0, lastX}, Y: []float64{lvl.v, lvl.v}})
		}
	}
	return []document.LineChart{c}
}
