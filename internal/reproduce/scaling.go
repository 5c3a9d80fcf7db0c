package reproduce

import (
	"fmt"
	"math"
	"runtime"
	"sort"
	"strings"

	"github.com/fairbench/fairbench/internal/result"
)

// The thread- and core-scaling white paper (MariaDB on IBM Power10 against a Xeon): sysbench
// OLTP 90:10 and point selects on 16 tables of 1,000,000 rows from 1 to 512 client threads.
// A reproduction on another machine compares where its own curve bends, in client threads per
// hardware thread, with where the paper's x86 curve bent.
func init() {
	register(&Study{
		Name:    "scaling",
		Title:   "MariaDB thread scaling on IBM Power10 and x86 (vendor white paper)",
		Key:     "power10_scaling",
		Engines: []string{"mariadb"},
		ScaleRule: "small keeps the 16 tables, both workloads and every thread count from 1 to 512, and shrinks 1,000,000 " +
			"rows a table to 10,000 and each point to 5 s after a 1 s warm-up; full is 1,000,000 rows and 60 s a point. Both rerun " +
			"point selects with the server confined to 1, 2, 4 ... of this machine's CPUs (up to the paper's 8), the client on the rest",
		Runs:   scalingRuns,
		Judge:  judgeScaling,
		Charts: scalingCharts,
	})
}

var scalingThreads = []int{1, 2, 4, 8, 16, 32, 64, 128, 256, 512}

// xeonHWThreads is the x86 machine's hardware threads: a Xeon Gold 6348 has 28 cores, 56 threads.
const xeonHWThreads = 56

// KneeShare is the share of its best throughput at which a curve counts as flat.
const KneeShare = 0.90

func scalingSuite(sc Scale, workloads ...string) string {
	rows, time, warmup, threads := "10000", "5s", "1s", scalingThreads
	switch sc {
	case Full:
		rows, time, warmup = "1000000", "60s", "10s"
	case tiny:
		rows, time, warmup, threads = "500", "1s", "0s", []int{1, 2, 4}
	}
	var ts []string
	for _, t := range threads {
		ts = append(ts, fmt.Sprint(t))
	}
	steps := ""
	for _, w := range workloads {
		steps += "  - workload: " + w + "\n"
	}
	return fmt.Sprintf(`name: scaling-%s
description: The Power10 white paper's thread scaling - OLTP 90:10 and point selects on 16 tables, 1 to 512 threads.
threads: [%s]
time: %s
warmup: %s
options:
  tables: "16"
  table-size: "%s"
steps:
%s`, sc, strings.Join(ts, ", "), time, warmup, rows, steps)
}

// scalingCores are the CPU counts the core-scaling run confines the server to: doubling from 1
// up to this machine's CPUs and the paper's 8 (the paper ran 2, 4, 6 and 8 cores).
func scalingCores(sc Scale) []int {
	var out []int
	for n := 1; n <= min(runtime.NumCPU(), 8); n *= 2 {
		out = append(out, n)
	}
	if sc == tiny && len(out) > 2 {
		out = out[:2]
	}
	return out
}

func scalingRuns(sc Scale) []Run {
	return []Run{
		{Name: "fair", Suite: scalingSuite(sc, "oltp_90_10", "oltp_point_select"), MaxConnections: 600},
		// The paper's Table 4: point selects by threads with the server on 2 to 8 cores; here the
		// server is confined to 1, 2 ... of this machine's CPUs, the client kept on the rest.
		{Name: "cores", Suite: scalingSuite(sc, "oltp_point_select"), MaxConnections: 600, ServerCPUs: scalingCores(sc)},
	}
}

func judgeScaling(pub Published, got Measured) []Row {
	var rows []Row
	for _, w := range []struct{ key, workload, label string }{
		{"oltp_90_10_tps", "oltp_90_10", "OLTP 90:10"}, {"point_select_tps", "oltp_point_select", "point select"},
	} {
		threads, _ := pub.Floats(w.key + ".threads")
		xeon, _ := pub.Floats(w.key + ".xeon")
		curve := measuredCurve(fairUnconfined(got.Runs["fair"]), "mariadb", w.workload)
		rows = append(rows, twoThreadRow(w.label, threads, xeon, curve), bendRow(w.label, threads, xeon, curve, got.Cores))
	}
	return append(rows, coreBendRow(pub, got))
}

// coreBendRow: on Power10 the point-select curve bends later the more cores the server has
// (64 threads on 2 cores, still rising at 512 on 8). Here the same comparison between the fewest
// and the most CPUs the server was confined to.
func coreBendRow(pub Published, got Measured) Row {
	threads, _ := pub.Floats("point_select_by_cores.threads")
	pubBend := func(cores int) int {
		vals, ok := pub.Floats(fmt.Sprintf("point_select_by_cores.cores_%d", cores))
		c, ts := map[int]float64{}, []int{}
		for i, v := range vals {
			if ok[i] {
				c[int(threads[i])] = v
				ts = append(ts, int(threads[i]))
			}
		}
		return bend(ts, c)
	}
	row := Row{Figure: "point select: threads where TPS stops rising, fewest cores against most", Run: "cores",
		Published: fmt.Sprintf("2 cores: %s; 8 cores: %s", bendText(pubBend(2)), bendText(pubBend(8)))}
	ns := coreCounts(got.Runs["cores"])
	if len(ns) < 2 {
		row.Verdict, row.Measured, row.Why = NotComparable, "not measured", "needs the server confined to two or more CPU counts (root, a cpuset controller, 2 or more CPUs)"
		return row
	}
	lo, hi := ns[0], ns[len(ns)-1]
	curve := func(n int) (map[int]float64, []int) {
		c := measuredCurve(withCPUs(got.Runs["cores"], n), "mariadb", "oltp_point_select")
		var ts []int
		for t := range c {
			ts = append(ts, t)
		}
		return c, ts
	}
	cl, tl := curve(lo)
	ch, th := curve(hi)
	bl, bh := bend(tl, cl), bend(th, ch)
	row.Measured = fmt.Sprintf("%d CPU(s): %s; %d CPUs: %s", lo, bendText(bl), hi, bendText(bh))
	switch {
	case len(tl) < 3 || len(th) < 3:
		row.Verdict, row.Why = NotComparable, "needs three or more thread counts per CPU count"
	case bl > 0 && (bh == 0 || bh > bl):
		row.Verdict, row.Why = Agrees, "the curve bends later with more cores, as on Power10"
	default:
		row.Verdict = Disagrees
		row.Why = fmt.Sprintf("with %d CPUs the curve bends no later than with %d; the client shares this machine's CPUs (on the CPUs the server does not have), the paper's ran on a separate partition", hi, lo)
	}
	return row
}

func bendText(b int) string {
	if b == 0 {
		return "still rising at the last point"
	}
	return fmt.Sprintf("%d threads", b)
}

// measuredCurve is TPS by threads for one engine and workload.
func measuredCurve(rs []*result.Result, engine, workload string) map[int]float64 {
	c := map[int]float64{}
	for _, r := range rs {
		if r.Engine.Kind == engine && r.Workload.Name == workload && r.Complete && r.TPS > 0 {
			c[r.Threads] = r.TPS
		}
	}
	return c
}

// twoThreadRow: a second client nearly doubles throughput while there are idle CPUs.
func twoThreadRow(label string, threads, pubTPS []float64, curve map[int]float64) Row {
	pub := pubTPS[1] / pubTPS[0]
	ok := curve[1] > 0 && curve[2] > 0
	ratio := 0.0
	if ok {
		ratio = curve[2] / curve[1]
	}
	why := "needs the 1- and 2-thread points"
	if ok {
		why = "the client shares this machine's CPUs with the server; the paper's ran on a separate partition"
	}
	return judgeRatio(label+" TPS, 2 threads / 1 thread (x86)", "fair", pub, ratio, ok, why)
}

// bend is the fewest threads that reach KneeShare of the curve's best throughput: where adding
// clients stops paying. 0 when that is the last point, the curve still rising. (The bandwidth
// study's knee is the same rule over caps.) Taking the first point near the best, rather than
// the last gain, keeps one noisy point late in the curve from moving the bend.
func bend(threads []int, tps map[int]float64) int {
	sort.Ints(threads)
	best := 0.0
	for _, t := range threads {
		best = max(best, tps[t])
	}
	last := 0
	for _, t := range threads {
		if _, ok := tps[t]; ok {
			last = t
		}
	}
	for _, t := range threads {
		if v, ok := tps[t]; ok && v >= KneeShare*best {
			if t == last {
				return 0
			}
			return t
		}
	}
	return 0
}

// bendRow compares where the curves flatten, in client threads per hardware thread: the paper's
// x86 machine against this one. They agree within two doublings.
func bendRow(label string, threads, pubTPS []float64, curve map[int]float64, cores int) Row {
	pubCurve := map[int]float64{}
	var ts []int
	for i, t := range threads {
		pubCurve[int(t)] = pubTPS[i]
		ts = append(ts, int(t))
	}
	pubBend := bend(ts, pubCurve)
	var got []int
	for t := range curve {
		got = append(got, t)
	}
	row := Row{Figure: label + ": threads where TPS stops rising, per hardware thread", Run: "fair",
		Published: fmt.Sprintf("%d threads on %d (%.2f)", pubBend, xeonHWThreads, float64(pubBend)/xeonHWThreads)}
	if len(got) < 3 || cores == 0 {
		row.Verdict, row.Measured, row.Why = NotComparable, "not measured", "needs three or more thread counts"
		return row
	}
	b := bend(got, curve)
	if b == 0 {
		row.Verdict, row.Measured = NotComparable, "still rising at the last point"
		row.Why = "the curve did not flatten within the threads run here"
		return row
	}
	pubPer, gotPer := float64(pubBend)/xeonHWThreads, float64(b)/float64(cores)
	row.Measured = fmt.Sprintf("%d threads on %d (%.2f)", b, cores, gotPer)
	if math.Abs(math.Log2(gotPer/pubPer)) <= 2 {
		row.Verdict, row.Why = Agrees, "within two doublings of the x86 curve's bend"
	} else {
		row.Verdict = Disagrees
		row.Why = fmt.Sprintf("%.1f doublings apart; the client shares this machine's CPUs with the server, the paper's ran on a separate partition", math.Abs(math.Log2(gotPer/pubPer)))
	}
	return row
}
