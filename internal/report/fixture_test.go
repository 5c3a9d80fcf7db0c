package report

import (
	"math"
	"math/rand"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/fairbench/fairbench/internal/result"
)

var fixtureStart = time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)

// encodeHistogram records n latencies around medianMS (log-normal, so the tail is realistic)
// and returns them encoded as results carry them. The seed makes every run reproducible.
func encodeHistogram(t testing.TB, seed int64, n int, medianMS float64) (string, result.Latency) {
	t.Helper()
	h := hdrhistogram.New(1, 60_000_000, 3)
	rng := rand.New(rand.NewSource(seed))
	for i := 0; i < n; i++ {
		us := medianMS * 1000 * math.Exp(0.45*rng.NormFloat64())
		if err := h.RecordValue(int64(math.Max(1, us))); err != nil {
			t.Fatal(err)
		}
	}
	enc, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	ms := func(p float64) float64 { return float64(h.ValueAtPercentile(p)) / 1000 }
	lat := result.Latency{
		Avg: math.Round(h.Mean()) / 1000, P50: ms(50), P90: ms(90), P95: ms(95), P99: ms(99), P999: ms(99.9),
		Max: float64(h.Max()) / 1000,
	}
	return string(enc), lat
}

type runSpec struct {
	kind, version string
	workload      string
	threads       int
	label         string
	tps           float64
	complete      bool
	errors        int64
	retries       int64
	seed          int64
}

func makeResult(t testing.TB, s runSpec) *result.Result {
	t.Helper()
	const duration = 60.0
	qpt := 20.0 // queries per transaction of oltp_read_write
	if s.workload == "oltp_point_select" {
		qpt = 1
	}
	// Latency follows Little's law so the fixture's figures hang together.
	medianMS := float64(s.threads) / s.tps * 1000 * 0.9
	hist, lat := encodeHistogram(t, s.seed, 4000, medianMS)
	txns := int64(s.tps * duration)
	r := &result.Result{
		Schema:       result.SchemaVersion,
		ToolVersion:  "0.1.0-test",
		Complete:     s.complete,
		StartedAt:    fixtureStart.Add(time.Duration(s.seed) * 2 * time.Minute),
		Engine:       result.Engine{Kind: s.kind, Version: s.version, Target: s.kind + "://bench@127.0.0.1/bench"},
		Workload:     result.Workload{Name: s.workload, Options: map[string]string{"tables": "8", "table_size": "100000"}},
		Label:        s.label,
		Threads:      s.threads,
		WarmupS:      10,
		DurationS:    duration,
		Transactions: txns,
		TPS:          s.tps,
		Queries:      result.Queries{Read: int64(float64(txns) * qpt * 0.7), Write: int64(float64(txns) * qpt * 0.2), Other: int64(float64(txns) * qpt * 0.1), Total: int64(float64(txns) * qpt)},
		QPS:          s.tps * qpt,
		Errors:       s.errors,
		Retries:      s.retries,
		LatencyMS:    lat,
		ClientCPUS:   float64(txns) * 0.000012,
		Histogram:    hist,
	}
	if !s.complete {
		r.Error = "server closed the connection unexpectedly"
		r.DurationS = 31
	}
	phase := float64(s.seed)
	for i := 1; i <= 12; i++ {
		w := 1 + 0.04*math.Sin(float64(i)*1.3+phase)
		r.Intervals = append(r.Intervals, result.Interval{
			T: float64(i * 5), Threads: s.threads,
			TPS: math.Round(s.tps*w*10) / 10, QPS: math.Round(s.tps*w*qpt*10) / 10,
			P95MS: math.Round(lat.P95/w*100) / 100, P99MS: math.Round(lat.P99/w*(1+0.1*math.Cos(float64(i)+phase))*100) / 100,
			ServerCPUPct:       math.Round((35+float64(s.threads)*2.5+3*math.Sin(float64(i)+phase))*10) / 10,
			ServerMemMB:        math.Round(900 + 40*float64(i) + 10*phase),
			ServerDiskWriteOps: int64(s.tps) * 5 / 4,
		})
	}
	r.Server = &result.Server{
		Local:          true,
		CPUUserS:       40,
		CPUSystemS:     8,
		CPUPct:         35 + float64(s.threads)*2.5,
		CPUSource:      "cgroup v1 /sys/fs/cgroup/cpuacct/fairbench-x",
		MemorySource:   "cgroup v1 /sys/fs/cgroup/memory/fairbench-x",
		MemIdleMB:      180 + float64(len(s.kind))*10,
		MemLoadMB:      1400 + float64(len(s.kind))*25,
		MemAnonLoadMB:  300 + float64(len(s.kind))*5,
		MemCacheLoadMB: 1100 + float64(len(s.kind))*20,
		DiskReadBytes:  12 << 20,
		DiskWriteBytes: int64(s.tps) << 16,
		DiskReadOps:    3 << 10,
		DiskWriteOps:   int64(s.tps) * 75,
		DiskDevice:     "254:0 vda",
		DiskSource:     "cgroup v1 /sys/fs/cgroup/blkio/fairbench-x (a lower bound: block I/O the server's processes issue; it leaves out the kernel's background writeback)",
		DataSizeBytes:  (210 + int64(len(s.kind))*4) << 20,
		DataDirBytes:   (1400 + int64(len(s.kind))*4) << 20,
		HostPerTxn:     map[string]float64{"cpu_ms": 0.8, "disk_write_bytes": 1092 + float64(len(s.kind))*100, "disk_write_ops": 1.25 - float64(len(s.kind))*0.05},
	}
	switch s.kind {
	case "postgres":
		r.Server.Profile = map[string]string{"shared_buffers": "4GB", "synchronous_commit": "on", "max_connections": "200"}
		r.Server.Settings = map[string]string{"shared_buffers": "524288 (8kB)", "synchronous_commit": "on", "wal_level": "replica"}
		r.Server.PerTxn = map[string]float64{"blks_hit": 85.5, "wal_bytes": 412.25}
	default:
		r.Server.Profile = map[string]string{"innodb_buffer_pool_size": "4G", "innodb_flush_log_at_trx_commit": "1", "max_connections": "200"}
		r.Server.Settings = map[string]string{"innodb_buffer_pool_size": "4294967296", "innodb_flush_log_at_trx_commit": "1", "log_bin": "OFF"}
		r.Server.PerTxn = map[string]float64{"innodb_buffer_pool_read_requests": 120.75, "innodb_log_writes": 1.5}
	}
	return r
}

// rampSpec is a ramp run: steps of {threads, TPS, p99 ms}, the saturation step's index and why
// the ramp stopped.
type rampSpec struct {
	kind     string
	workload string
	steps    [][3]float64
	sat      int
	stopped  string
	complete bool
	seed     int64
}

// Settings every fixture ramp shares: 4 threads added every 10 s up to 24, p99 SLO 50 ms.
const (
	rampAdd    = 4
	rampEveryS = 10
	rampMax    = 24
	rampSLOMS  = 50
)

// makeRampResult builds a ramp result as the runner writes it: Threads is the last step's,
// Label "ramp", one interval per step, and figures over the whole run.
func makeRampResult(t testing.TB, s rampSpec) *result.Result {
	t.Helper()
	last := s.steps[len(s.steps)-1]
	sum := 0.0
	for _, st := range s.steps {
		sum += st[1]
	}
	r := makeResult(t, runSpec{
		kind: s.kind, version: map[string]string{"postgres": pgVersion, "mysql": mysqlVersion, "mariadb": mariadbVersion}[s.kind],
		workload: s.workload, threads: int(last[0]), label: "ramp", tps: math.Round(sum / float64(len(s.steps))),
		complete: s.complete, seed: s.seed,
	})
	rp := &result.Ramp{Add: rampAdd, EveryS: rampEveryS, Max: rampMax, SLOMS: rampSLOMS, StoppedBecause: s.stopped}
	r.Intervals = nil
	for i, st := range s.steps {
		step := result.RampStep{Threads: int(st[0]), TPS: st[1], P95MS: math.Round(st[2]*0.78*100) / 100, P99MS: st[2]}
		rp.Steps = append(rp.Steps, step)
		r.Intervals = append(r.Intervals, result.Interval{
			T: float64((i + 1) * rampEveryS), Threads: step.Threads, TPS: step.TPS, QPS: step.TPS * 20,
			P95MS: step.P95MS, P99MS: step.P99MS,
		})
	}
	rp.SaturationThreads = rp.Steps[s.sat].Threads
	rp.SaturationTPS = rp.Steps[s.sat].TPS
	r.Ramp = rp
	if s.complete {
		r.DurationS = float64(len(s.steps) * rampEveryS)
	}
	r.Transactions = int64(r.TPS * r.DurationS)
	return r
}

// fixtureRamps are ramps of oltp_read_write: postgres stopped at the thread limit, mysql when
// p99 passed the SLO, mariadb when throughput stopped rising.
func fixtureRamps() []rampSpec {
	const rw = "oltp_read_write"
	return []rampSpec{
		{kind: "mysql", workload: rw, complete: true, stopped: "p99 above SLO", sat: 3, steps: [][3]float64{
			{4, 760, 8.2}, {8, 1430, 10.5}, {12, 1960, 16.8}, {16, 2380, 31.2}, {20, 2450, 58.6},
		}},
		{kind: "postgres", workload: rw, complete: true, stopped: "max threads", sat: 5, steps: [][3]float64{
			{4, 820, 7.1}, {8, 1580, 8.4}, {12, 2210, 10.2}, {16, 2690, 13.5}, {20, 2980, 18.9}, {24, 3120, 26.4},
		}},
		{kind: "mariadb", workload: rw, complete: true, stopped: "throughput stopped rising", sat: 4, steps: [][3]float64{
			{4, 790, 7.6}, {8, 1510, 9.1}, {12, 2120, 12.4}, {16, 2610, 17.9}, {20, 2640, 27.5}, {24, 2590, 41.3},
		}},
	}
}

const (
	pgVersion      = "PostgreSQL 16.4 (Debian 16.4-1.pgdg120+1) on x86_64-pc-linux-gnu, compiled by gcc (Debian 12.2.0-14) 12.2.0, 64-bit"
	mysqlVersion   = "8.0.39"
	mariadbVersion = "11.4.3-MariaDB-ubu2404"
)

// fixture is a small comparison with everything a report can show: three engines, two
// workloads, a thread sweep (labelled by step), repeats, an incomplete repeat, server metrics,
// and a ramp per engine to its saturation point.
// Results are deliberately out of report order to prove the report orders them.
func fixture(t testing.TB) *Input {
	t.Helper()
	var specs []runSpec
	seed := int64(1)
	add := func(s runSpec) {
		s.seed = seed
		seed++
		if s.version == "" {
			s.version = map[string]string{"postgres": pgVersion, "mysql": mysqlVersion, "mariadb": mariadbVersion}[s.kind]
		}
		specs = append(specs, s)
	}
	sweep := map[string][3]float64{
		"mariadb":  {310, 1120, 2105},
		"postgres": {330, 1210, 2450},
		"mysql":    {295, 1050, 1980},
	}
	for _, kind := range []string{"mariadb", "postgres", "mysql"} {
		for i, th := range []int{1, 4, 16} {
			s := runSpec{kind: kind, workload: "oltp_read_write", threads: th, label: "t" + itoa(th), tps: sweep[kind][i], complete: true}
			if kind == "mysql" && th == 16 {
				s.errors, s.retries = 1, 12
			}
			add(s)
		}
	}
	repeats := map[string][]float64{
		"postgres": {41000, 42500, 40200},
		"mysql":    {36000, 36500, 20000},
		"mariadb":  {40100, 43000, 41800},
	}
	for _, kind := range []string{"mysql", "mariadb", "postgres"} {
		for i, tps := range repeats[kind] {
			add(runSpec{kind: kind, workload: "oltp_point_select", threads: 16, tps: tps, complete: !(kind == "mysql" && i == 2)})
		}
	}
	in := &Input{Environment: &result.Environment{
		Hostname:    "bench-01",
		CPUModel:    "AMD EPYC 7543 32-Core Processor",
		Cores:       16,
		MemoryBytes: 64 << 30,
		Kernel:      "6.8.0-45-generic",
		OS:          "Ubuntu 24.04.1 LTS",
		Filesystem:  "ext4 (noatime)",
		GoVersion:   "go1.26.8",
		ToolVersion: "0.1.0-test",
		Engines:     map[string]string{"postgres": "16.4", "mysql": "8.0.39", "mariadb": "11.4.3"},
		Command:     "fairbench compare --engines postgres,mysql,mariadb --workloads oltp_read_write,oltp_point_select --threads 1,4,16 --repeat 3 --time 60s",
		Fairness:    map[string]string{"buffer pool": "4 GiB", "durability": "fsync on commit", "binary log / WAL archiving": "off", "max connections": "200"},
		Notes:       []string{"Binary log off on MySQL and MariaDB, WAL archiving off on PostgreSQL."},
	}}
	for _, s := range specs {
		r := makeResult(t, s)
		if s.workload == "oltp_point_select" {
			r.Waits = fixtureWaits(s.kind)
			r.Statements = fixtureStatements(s.kind, r)
			if s.kind == "postgres" && r.Server != nil {
				// PostgreSQL's own active time: the statements' plus their parse, plan and commit.
				if r.Server.Counters == nil {
					r.Server.Counters = map[string]int64{}
				}
				r.Server.Counters["active_us"] = int64(r.Statements.TotalMS * 1000 * 1.4)
			}
			r.ClientStatements = fixtureClientStatements(s.kind, r)
		}
		in.Results = append(in.Results, r)
	}
	for _, rs := range fixtureRamps() {
		rs.seed = seed
		seed++
		in.Results = append(in.Results, makeRampResult(t, rs))
	}
	for _, ts := range fixtureTPCH() {
		ts.seed = seed
		seed++
		in.Results = append(in.Results, makeTPCHResult(ts))
	}
	return in
}

// tpchSpec is a TPC-H power test at SF 1: seconds per query Q1..Q22 (index 0 is Q1) and the
// queries that did not answer correctly, by number.
type tpchSpec struct {
	kind    string
	seconds []float64
	failed  map[int]string // query -> wrong | timeout | error
	checked string
	seed    int64
}

// makeTPCHResult builds a power test's result as the tpch workload writes it: a failed query
// has Seconds 0 and its status, and the geometric mean covers the ok queries only.
func makeTPCHResult(s tpchSpec) *result.Result {
	tp := &result.TPCH{Mode: "power", ScaleFactor: 1, AnswersChecked: s.checked,
		LoadSeconds: map[string]float64{"lineitem": 61.5, "orders": 14.25, "total": 97.5 + float64(len(s.kind))*3}}
	sum, n, total := 0.0, 0, 0.0
	for i, sec := range s.seconds {
		q := result.TPCHQuery{Query: i + 1, Seconds: sec, Rows: int64(4 + i*3), Status: "ok"}
		if st, bad := s.failed[i+1]; bad {
			q.Seconds, q.Rows, q.Status = 0, 0, st
			q.Detail = map[string]string{
				"wrong":   "row 3 differs from the official answer: revenue 4129.73 vs 4129.74",
				"timeout": "cancelled after 300 s",
				"error":   "out of memory",
			}[st]
		} else {
			sum += math.Log(sec)
			n++
		}
		total += sec
		q.Plan = fixturePlans[s.kind][i+1]
		tp.Queries = append(tp.Queries, q)
	}
	tp.GeoMeanS = math.Round(math.Exp(sum/float64(n))*1000) / 1000
	version := map[string]string{"postgres": pgVersion, "mysql": mysqlVersion, "mariadb": mariadbVersion}[s.kind]
	return &result.Result{
		Schema:      result.SchemaVersion,
		ToolVersion: "0.1.0-test",
		Complete:    true,
		StartedAt:   fixtureStart.Add(time.Duration(s.seed) * 2 * time.Minute),
		Engine:      result.Engine{Kind: s.kind, Version: version, Target: s.kind + "://bench@127.0.0.1/bench"},
		Workload:    result.Workload{Name: "tpch", Options: map[string]string{"scale": "1", "mode": "power"}},
		Threads:     1,
		DurationS:   math.Round(total*10) / 10,
		TPCH:        tp,
	}
}

// fixturePlans are a few queries' plans as dialect.PlanSummary writes them, by engine and query.
var fixturePlans = map[string]map[int]string{
	"postgres": {6: "lineitem: full scan", 18: "lineitem: full scan; orders: full scan; lineitem: index lookup (lineitem_pkey); customer: full scan"},
	"mysql":    {6: "lineitem: full scan", 18: "customer: full scan; orders: index lookup (tpch_o_custkey); lineitem: index lookup (PRIMARY)"},
	"mariadb":  {18: "customer: full scan; orders: index lookup (tpch_o_custkey); <subquery2>: index lookup (distinct_key); lineitem: index lookup (PRIMARY)"},
}

// fixtureTPCH is a power test at SF 1 on three engines: postgres has the lowest geometric
// mean of the engines that answered everything; mariadb would be faster still but has one wrong
// answer (Q9) and one timeout (Q18), so it must never be picked.
func fixtureTPCH() []tpchSpec {
	base := []float64{4.21, 0.38, 1.12, 0.74, 1.05, 0.61, 1.33, 0.92, 2.48, 1.16, 0.29, 0.88, 1.71, 0.55, 0.97, 0.63, 0.12, 3.85, 0.07, 0.81, 2.14, 0.42}
	scale := func(fs ...float64) []float64 {
		out := make([]float64, len(base))
		for i, b := range base {
			out[i] = math.Round(b*fs[i%len(fs)]*1000) / 1000
		}
		return out
	}
	return []tpchSpec{
		{kind: "mysql", checked: "official SF1 answers", seconds: scale(1.9, 1.2, 0.8, 2.6, 1.4, 1.1, 3.2)},
		{kind: "postgres", checked: "official SF1 answers", seconds: scale(1, 1, 1, 1, 1, 1.3, 0.9)},
		{kind: "mariadb", checked: "official SF1 answers", seconds: scale(0.7, 0.9, 0.8, 0.85, 1.1, 0.6, 0.9),
			failed: map[int]string{9: "wrong", 18: "timeout"}},
	}
}

func itoa(n int) string { return fmtInt(int64(n)) }

// fixtureWaits is a point-select step's wait sampling on each engine: 16 sessions over 120
// rounds, mostly idle between statements.
func fixtureWaits(kind string) *result.Waits {
	counts := map[string][]result.WaitEvent{
		"postgres": {{Category: "client", Event: "idle", Count: 1210}, {Category: "cpu", Event: "active (no wait event)", Count: 610},
			{Category: "network", Event: "Client:ClientWrite", Count: 100}},
		"mysql": {{Category: "client", Event: "Sleep", Count: 1105}, {Category: "cpu", Event: "state: executing", Count: 700},
			{Category: "latch", Event: "wait/synch/mutex/innodb/trx_sys_mutex", Count: 115}},
		"mariadb": {{Category: "client", Event: "Sleep", Count: 1300}, {Category: "cpu", Event: "Execute", Count: 590},
			{Category: "network", Event: "state: Writing to net", Count: 30}},
	}[kind]
	w := &result.Waits{EveryMS: 25, Rounds: 120, Sessions: 1920, Events: counts, SamplerMS: 240}
	cats := map[string]int{}
	for _, e := range counts {
		cats[e.Category] += e.Count
	}
	for _, c := range []string{"cpu", "latch", "client", "network"} {
		if cats[c] > 0 {
			w.Categories = append(w.Categories, result.WaitCount{Category: c, Count: cats[c]})
		}
	}
	return w
}

// fixtureClientStatements is the point select timed by its clients as a workload file's statement
// is, with a multi-statement transaction's COMMIT beside it, and on MySQL a few failures.
func fixtureClientStatements(kind string, r *result.Result) []result.ClientStatement {
	calls := int64(r.TPS * r.DurationS)
	mean := map[string]float64{"postgres": 0.081, "mysql": 0.109, "mariadb": 0.094}[kind]
	commit := map[string]float64{"postgres": 0.412, "mysql": 1.25, "mariadb": 0.97}[kind]
	out := []result.ClientStatement{
		{Label: "lookup #1: SELECT c FROM sbtest1 WHERE id = :id", Executions: calls, TotalMS: mean * float64(calls), MeanMS: mean, MaxMS: 12.5},
		{Label: "lookup: COMMIT", Executions: calls, TotalMS: commit * float64(calls), MeanMS: commit, MaxMS: 30},
	}
	if kind == "mysql" {
		out[1].Failed = 3
	}
	return out
}

// fixtureStatements is a point-select step's server account: the point select itself, and the
// wait sampler's own query, which the server counts too.
func fixtureStatements(kind string, r *result.Result) *result.Statements {
	text := map[string]string{"postgres": "SELECT c FROM sbtest1 WHERE id=$1", "mysql": "SELECT `c` FROM `sbtest1` WHERE `id` = ?",
		"mariadb": "SELECT `c` FROM `sbtest1` WHERE `id` = ?"}[kind]
	calls := int64(r.TPS * r.DurationS)
	mean := map[string]float64{"postgres": 0.011, "mysql": 0.019, "mariadb": 0.014}[kind]
	st := &result.Statements{Source: "pg_stat_statements", Top: []result.StatementAccount{
		{Text: text, Calls: calls, Rows: calls, TotalMS: mean * float64(calls), MeanMS: mean},
		{Text: "SELECT pid, state FROM pg_stat_activity WHERE pid IN (...)", Calls: 120, Rows: 1920, TotalMS: 36, MeanMS: 0.3},
	}}
	for _, a := range st.Top {
		st.Calls += a.Calls
		st.TotalMS += a.TotalMS
	}
	return st
}
