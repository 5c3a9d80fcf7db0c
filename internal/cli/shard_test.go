package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/histogram"
	"github.com/fairbench/fairbench/internal/merge"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/testserver"
)

// startShards runs n shards of one run as separate processes (this test binary re-executed as
// the command line) and returns their results once all have ended.
func startShards(t *testing.T, n int, base []string) []*result.Result {
	t.Helper()
	dir := t.TempDir()
	// Time for every shard to start, parse the data set's record and connect its clients: 4 s
	// here when quiet, but a CI machine at load 30 took 5 s once.
	startAt := time.Now().Add(12 * time.Second).UTC().Format(time.RFC3339Nano)
	type proc struct {
		cmd *exec.Cmd
		out bytes.Buffer
	}
	var ps []*proc
	for i := 1; i <= n; i++ {
		args := append([]string{"run", "--shard", fmt.Sprintf("%d/%d", i, n), "--start-at", startAt,
			"--out", filepath.Join(dir, fmt.Sprintf("shard%d.json", i))}, base...)
		p := &proc{cmd: exec.Command(os.Args[0], "-test.run=^$")}
		p.cmd.Env = append(os.Environ(), "FAIRBENCH_TEST_CLI_ARGS="+strings.Join(args, "\x1f"))
		p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.out
		if err := p.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	var rs []*result.Result
	for i, p := range ps {
		if err := p.cmd.Wait(); err != nil {
			t.Fatalf("shard %d: %v\n%s", i+1, err, p.out.String())
		}
		r, err := result.Read(filepath.Join(dir, fmt.Sprintf("shard%d.json", i+1)))
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	return rs
}

func prepared(t *testing.T, kind string) []string {
	t.Helper()
	tg := testserver.Database(t, kind)
	base := []string{"--target", withPassword(tg, tg.Password), "--workload", "oltp_point_select", "--tables", "2", "--table-size", "2000"}
	if code, out, errOut := run(append([]string{"prepare"}, base...)...); code != 0 {
		t.Fatalf("prepare: exit %d\n%s%s", code, out, errOut)
	}
	return base
}

// Three shards measure the same window, and their merge is exact: transactions add up and the
// merged p99 is the p99 of every latency pooled.
func TestShardsMergeExactly(t *testing.T) {
	base := append(prepared(t, "postgres"), "--threads", "6", "--time", "3s", "--warmup", "1s")
	rs := startShards(t, 3, base)
	var shards []merge.Shard
	var sum int64
	pooled := histogram.New()
	for i, r := range rs {
		if r.Shard == nil || r.Shard.Index != i+1 || r.Shard.Count != 3 || r.Threads != 2 || r.Measured == nil {
			t.Fatalf("shard %d: shard %+v, threads %d, window %+v", i+1, r.Shard, r.Threads, r.Measured)
		}
		sum += r.Transactions
		h, err := histogram.Decode(r.Histogram)
		if err != nil {
			t.Fatal(err)
		}
		pooled.Merge(h)
		shards = append(shards, merge.Shard{Name: fmt.Sprint(i + 1), Result: r})
		if skew := r.Measured.From.Sub(rs[0].Measured.From); skew.Abs() > 100*time.Millisecond {
			t.Errorf("shard %d began measuring %s after shard 1, want within 100 ms", i+1, skew)
		}
	}
	m, err := merge.Merge(shards)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("merged %d transactions (shards' sum %d) on %d threads, p99 %.3f ms (pooled %.3f ms)", m.Transactions, sum, m.Threads, m.LatencyMS.P99, pooled.Latency().P99)
	if m.Transactions != sum || m.Threads != 6 || m.LatencyMS != pooled.Latency() {
		t.Errorf("merged %d transactions on %d threads, p99 %.3f; want %d on 6, p99 %.3f", m.Transactions, m.Threads, m.LatencyMS.P99, sum, pooled.Latency().P99)
	}
}

// Open loop across shards: each draws a third of the rate, and together they measure the total.
func TestShardsOpenLoopRate(t *testing.T) {
	base := append(prepared(t, "postgres"), "--threads", "6", "--rate", "3000", "--time", "4s", "--warmup", "1s")
	rs := startShards(t, 3, base)
	var shards []merge.Shard
	for i, r := range rs {
		if r.Rate != 1000 {
			t.Errorf("shard %d ran at %v/s, want 1000", i+1, r.Rate)
		}
		shards = append(shards, merge.Shard{Name: fmt.Sprint(i + 1), Result: r})
	}
	m, err := merge.Merge(shards)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("3 shards at 1,000/s each: merged %d transactions, %.1f TPS", m.Transactions, m.TPS)
	if m.ScheduleLagMS == nil {
		t.Fatal("the merged open loop has no schedule lag")
	}
	// An open loop serves a late arrival late instead of dropping it (no coordinated omission),
	// so a machine that stalls near the window's end leaves up to 3,000/s × the longest lag of
	// arrivals unserved inside the 4 s window: the lower bound allows that and no more, the upper
	// bound none. A wrong split (each shard at 3,000/s, or at 333/s) misses both by far.
	unserved := 3000 * m.ScheduleLagMS.Max / 1000 / 4
	if m.TPS > 3000*1.03 || m.TPS < 3000*0.97-unserved {
		t.Errorf("merged %.0f TPS, want 3000 (-3%% and %.0f/s for the lag, +3%%), lag %+v", m.TPS, unserved, m.ScheduleLagMS)
	}
}

func TestShardInputErrors(t *testing.T) {
	cases := []struct{ args, want string }{
		{"--shard 0/3", "--shard"}, {"--shard 4/3", "--shard"}, {"--shard x", "--shard"},
		{"--shard 1/3 --threads 2", "fewer than the shards"}, {"--shard 1/2 --threads 1,2", "one thread count"},
		{"--start-at 2001-01-01T00:00:00Z", "has passed"}, {"--start-at tomorrow", "not a time"},
	}
	for _, c := range cases {
		args := append([]string{"run", "--target", "postgres://u@127.0.0.1:1/db", "--workload", "oltp_point_select"}, strings.Fields(c.args)...)
		code, _, stderr := run(args...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: exit %d %q, want 2 and %q", c.args, code, stderr, c.want)
		}
	}
}
