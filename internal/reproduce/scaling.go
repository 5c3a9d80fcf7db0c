package reproduce

import (
	"fmt"
	"math"
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
			"rows a table to 10,000 and each point to 5 s after a 1 s warm-up; full is 1,000,000 rows and 60 s a point",
		Runs:  scalingRuns,
		Judge: judgeScaling,
	})
}

var scalingThreads = []int{1, 2, 4, 8, 16, 32, 64, 128, 256, 512}

// xeonHWThreads is the x86 machine's hardware threads: a Xeon Gold 6348 has 28 cores, 56 threads.
const xeonHWThreads = 56

// KneeShare is the share of its best throughput at which a curve counts as flat.
const KneeShare = 0.90

func scalingSuite(sc Scale) string {
	rows, time, warmup := "10000", "5s", "1s"
	if sc == Full {
		rows, time, warmup = "1000000", "60s", "10s"
	}
	var ts []string
	for _, t := range scalingThreads {
		ts = append(ts, fmt.Sprint(t))
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
  - workload: oltp_90_10
  - workload: oltp_point_select
`, sc, strings.Join(ts, ", "), time, warmup, rows)
}

func scalingRuns(sc Scale) []Run {
	return []Run{{Name: "fair", Suite: scalingSuite(sc), MaxConnections: 600}}
}

func judgeScaling(pub Published, got Measured) []Row {
	var rows []Row
	for _, w := range []struct{ key, workload, label string }{
		{"oltp_90_10_tps", "oltp_90_10", "OLTP 90:10"}, {"point_select_tps", "oltp_point_select", "point select"},
	} {
		threads, _ := pub.Floats(w.key + ".threads")
		xeon, _ := pub.Floats(w.key + ".xeon")
		curve := measuredCurve(got.Runs["fair"], "mariadb", w.workload)
		rows = append(rows, twoThreadRow(w.label, threads, xeon, curve), bendRow(w.label, threads, xeon, curve, got.Cores))
	}
	return rows
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
