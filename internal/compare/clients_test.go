package compare

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/engine/discovery"
	"github.com/fairbench/fairbench/internal/histogram"
	"github.com/fairbench/fairbench/internal/netsim"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/runspec"
	"github.com/fairbench/fairbench/internal/suite"
	"github.com/fairbench/fairbench/internal/testserver"
)

const pointSelectSuite = `
name: point
description: point selects on a small table
threads: 3
time: 4s
warmup: 1s
options: {tables: "1", table-size: "2000"}
steps:
  - workload: oltp_point_select
`

// hostOptions is a PostgreSQL comparison whose clients run on simulated hosts, from a
// fairbench binary built for the test (the test binary is not one).
func hostOptions(t *testing.T) *Options {
	if os.Geteuid() != 0 {
		t.Skip("simulated client hosts need root")
	}
	if _, err := discovery.Find(discovery.Postgres, ""); err != nil {
		t.Skipf("postgres not installed: %v", err)
	}
	o := options(t, []string{discovery.Postgres})
	s, err := suite.Parse([]byte(pointSelectSuite), "point.yaml")
	if err != nil {
		t.Fatal(err)
	}
	o.Suite = s
	o.ClientBinary = buildFairbench(t)
	return o
}

func buildFairbench(t *testing.T) string {
	bin := filepath.Join(t.TempDir(), "fairbench")
	out, err := exec.Command("go", "build", "-o", bin, "../../cmd/fairbench").CombinedOutput()
	if err != nil {
		t.Fatalf("building fairbench: %v: %s", err, out)
	}
	return bin
}

// noHostsLeft: no namespace, veth or bridge, and no client process, whatever happened.
func noHostsLeft(t *testing.T, o *Options) {
	t.Helper()
	nothingLeftBehind(t, o)
	if left, err := netsim.LeftoversWhenIdle(); err != nil || len(left) > 0 {
		t.Errorf("left behind: %v %v", left, err)
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/exe")
	for _, p := range procs {
		if exe, _ := os.Readlink(p); exe == o.ClientBinary {
			t.Errorf("a client host's fairbench still runs: %s", p)
		}
	}
}

func onlyResult(t *testing.T, o *Options) *result.Result {
	t.Helper()
	results, err := result.ReadDir(filepath.Join(o.OutDir, "results"))
	if err != nil || len(results) != 1 {
		t.Fatalf("want one result, got %d (%v)", len(results), err)
	}
	return results[0]
}

// --network rtt=5ms: the round trip is real, so each of a point select's round trips adds it
// to the average latency: at least 80% of it, and at most 150%. A relay's timers fire late on a
// busy machine, never early, so the excess is one-sided (6.03 ms for 5 once, with a compile
// running beside CI); a delay applied twice per round trip (10 ms) still fails.
func TestNetworkDelayRaisesLatency(t *testing.T) {
	testserver.Integration(t)
	// Where the kernel has no netem the delay is fairbench's relay, held on timers: on a machine
	// loaded far past its CPUs they fire milliseconds late, and the test would measure the load.
	if load := testserver.LoadAverage(t); load > 4*float64(runtime.NumCPU()) {
		t.Skipf("load average %.0f on %d CPUs: too busy to hold a 5 ms delay to 20%%", load, runtime.NumCPU())
	}
	base := hostOptions(t)
	base.Suite.Run.Threads = []int{1}
	base.ClientBinary = ""
	runClean(t, base)
	near := onlyResult(t, base)

	far := hostOptions(t)
	far.Suite.Run.Threads = []int{1}
	far.Network = &netsim.Spec{RTT: 5 * time.Millisecond}
	if err := Run(context.Background(), far); err != nil {
		t.Fatal(err)
	}
	noHostsLeft(t, far)
	r := onlyResult(t, far)
	if r.Network == nil || r.Network.RTTMS != 5 || r.Network.Mechanism == "none" || r.Wire == nil {
		t.Fatalf("network %+v, wire %+v", r.Network, r.Wire)
	}
	want := r.Wire.RoundTripsPerTxn * 5
	added := r.LatencyMS.Avg - near.LatencyMS.Avg
	t.Logf("avg latency %.3f ms near, %.3f ms at rtt=5ms (%s), %.2f round trips/txn: %.3f ms added, %.3f expected",
		near.LatencyMS.Avg, r.LatencyMS.Avg, r.Network.Mechanism, r.Wire.RoundTripsPerTxn, added, want)
	if added < 0.8*want || added > 1.5*want {
		t.Errorf("the delay added %.3f ms to the average latency, want %.3f (-20%%, +50%%)", added, want)
	}
	report, _ := os.ReadFile(filepath.Join(far.OutDir, "report.md"))
	if !strings.Contains(string(report), "## Network distance") || !strings.Contains(string(report), "explained by round trips") {
		t.Error("the report has no network distance section")
	}
}

// Three client hosts in three namespaces against one server: the merge is exact.
func TestThreeClientHostsMergeExactly(t *testing.T) {
	testserver.Integration(t)
	o := hostOptions(t)
	o.Clients = 3
	o.shardDir = t.TempDir()
	if err := Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	noHostsLeft(t, o)
	m := onlyResult(t, o)
	shardFiles, _ := filepath.Glob(filepath.Join(o.shardDir, "*", "shard-*.json"))
	if len(shardFiles) != 3 || len(m.Shards) != 3 || m.Threads != 3 {
		t.Fatalf("%d shard files, %d shard rows, %d threads: want 3 each", len(shardFiles), len(m.Shards), m.Threads)
	}
	pooled := histogram.New()
	var sum int64
	var windows []result.Window
	for _, f := range shardFiles {
		s, err := result.Read(f)
		if err != nil {
			t.Fatal(err)
		}
		sum += s.Transactions
		h, err := histogram.Decode(s.Histogram)
		if err != nil {
			t.Fatal(err)
		}
		pooled.Merge(h)
		windows = append(windows, *s.Measured)
		t.Logf("%s: %d transactions, p99 %.3f ms, window %s to %s", filepath.Base(f), s.Transactions, s.LatencyMS.P99,
			s.Measured.From.Format("15:04:05.000"), s.Measured.To.Format("15:04:05.000"))
	}
	if m.Transactions != sum || sum == 0 {
		t.Errorf("merged transactions %d, shards' sum %d", m.Transactions, sum)
	}
	if p := pooled.PercentileMS(99); m.LatencyMS.P99 != p {
		t.Errorf("merged p99 %v ms, pooled p99 %v ms", m.LatencyMS.P99, p)
	}
	startSkew, endSkew, overlap := windowSkew(windows)
	t.Logf("merged %d transactions (shards' sum %d), p99 %.3f ms (pooled %.3f ms); windows began %s apart, ended %s apart, overlap %s",
		m.Transactions, sum, m.LatencyMS.P99, pooled.PercentileMS(99), startSkew, endSkew, overlap)
	if startSkew > 100*time.Millisecond || endSkew > 100*time.Millisecond {
		t.Errorf("the shards' windows began %v and ended %v apart, want both within 100 ms", startSkew, endSkew)
	}
	for _, s := range m.Shards {
		if !strings.HasPrefix(s.Shard.Host, "fbns") {
			t.Errorf("shard %d's host %q does not name its namespace", s.Shard.Index, s.Shard.Host)
		}
	}
	report, _ := os.ReadFile(filepath.Join(o.OutDir, "report.md"))
	if !strings.Contains(string(report), "## Client shards") || !strings.Contains(string(report), "3 of 3") {
		t.Error("the report has no per-shard rows")
	}
}

// windowSkew is how far apart the windows began and ended, and how long all of them overlap.
func windowSkew(ws []result.Window) (startSkew, endSkew, overlap time.Duration) {
	firstFrom, lastFrom, firstTo, lastTo := ws[0].From, ws[0].From, ws[0].To, ws[0].To
	for _, w := range ws[1:] {
		firstFrom, lastFrom = minTime(firstFrom, w.From), maxTime(lastFrom, w.From)
		firstTo, lastTo = minTime(firstTo, w.To), maxTime(lastTo, w.To)
	}
	return lastFrom.Sub(firstFrom), lastTo.Sub(firstTo), firstTo.Sub(lastFrom)
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// Ctrl-C while the client hosts run: they stop, the partial result is kept, and no
// namespace, veth, bridge, process or server is left.
func TestClientHostsInterrupted(t *testing.T) {
	testserver.Integration(t)
	o := hostOptions(t)
	o.Clients = 2
	o.Network = &netsim.Spec{RTT: time.Millisecond}
	o.Suite.Run.Time = runspec.Ptr(30 * time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Interrupt well into the measured window (the shards measure from 3 s past the warm-up).
	o.Log = &onLine{match: "threads", do: func() { time.AfterFunc(9*time.Second, cancel) }}
	if err := Run(ctx, o); err == nil {
		t.Fatal("want an error from the interrupted run")
	}
	noHostsLeft(t, o)
	r := onlyResult(t, o)
	if r.Complete || r.Transactions == 0 || len(r.Shards) != 2 {
		t.Errorf("want the shards' partial result merged and marked incomplete: complete %v, %d transactions, %d shards",
			r.Complete, r.Transactions, len(r.Shards))
	}
}
