package cli

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/testserver"
)

// capacity on a real PostgreSQL: a search whose objective every rate meets climbs to --max-rate
// and says the capacity is at least that, each rate's figures in the results file (offered,
// completed, the percentile, the backlog, busy connections); a budget that allows one rate stops
// there and says so. Bad input is refused before any server is touched.
func TestCapacityOnRealServer(t *testing.T) {
	tg := testserver.Database(t, "postgres")
	dsn := withPassword(tg, tg.Password)
	if code, out, errs := run("prepare", "--target", dsn, "--workload", "oltp_point_select", "--tables", "1", "--table-size", "1000"); code != 0 {
		t.Fatalf("prepare: %d\n%s%s", code, out, errs)
	}
	t.Cleanup(func() { run("cleanup", "--target", dsn, "--workload", "oltp_point_select") })
	out := filepath.Join(t.TempDir(), "cap.json")
	base := []string{"capacity", "--target", dsn, "--workload", "oltp_point_select", "--window", "1s", "--warmup", "200ms", "--instrument", "off"}
	code, stdout, stderr := run(append(base, "--slo", "p50<=2s", "--start-rate", "50", "--max-rate", "200", "--out", out)...)
	if code != 0 || !strings.Contains(stdout, "capacity at p50 ≤ 2s: at least 200/s (every rate tried passed)") {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	r, err := result.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	c := r.Capacity
	if c == nil || len(c.Steps) != 3 || c.Reached != "climb" || !c.AtLeast || c.Connections != DefaultCapacityConnections || r.Rate != 200 {
		t.Fatalf("capacity record %+v (result at %.0f/s)", c, r.Rate)
	}
	for i, st := range c.Steps {
		// A 1 s window's arrivals are Poisson: want ± 3√want completed by chance alone.
		if want := 50.0 * float64(int(1)<<i); st.OfferedPerS != want || !st.Pass || st.CompletedPerS < want-3*math.Sqrt(want) || st.LatencyMS <= 0 || st.Busy <= 0 {
			t.Errorf("step %d: %+v, want %.0f/s offered and passed, with its figures", i, st, want)
		}
	}

	code, stdout, stderr = run(append(base, "--slo", "p50<=2s", "--start-rate", "50", "--budget", "2s")...)
	if code != 0 || !strings.Contains(stdout, "the search stopped: budget") || strings.Count(stdout, "climb ") != 1 {
		t.Errorf("a budget for one rate: exit %d\n%s%s", code, stdout, stderr)
	}

	for _, c := range []struct{ args, want string }{
		{"--slo p99<10ms", "written <="},
		{"--slo p99(new_order)<=1s", "this workload has one kind of transaction"},
		{"--slo p99<=1s --max-connections 0", "--max-connections 0"},
		{"--slo p99<=1s --budget 1s", "shorter than one rate's warm-up and window"},
		{"--slo p99<=1s --resolution 2", "--resolution between 0 and 1"},
	} {
		code, _, stderr := run(append(base, strings.Fields(c.args)...)...)
		if code != 2 || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("%s: exit %d, %q; want exit 2 and one line with %q", c.args, code, stderr, c.want)
		}
	}
}

// A real PostgreSQL frozen with SIGSTOP mid-search: the search ends with what it had, the result
// written and marked incomplete, well within its budget plus the runner's grace, not at the
// budget's end nor never. The freeze comes just after the first rate's verdict, whatever the
// machine's load makes of the search's start (a fixed instant froze a busy CI machine's server
// before its first rate, which left nothing to keep); FAIRBENCH_FREEZE_AT freezes at an instant
// instead, for other phases of the search (a client's set-up, the settle, a window).
func TestCapacityOnAFrozenServer(t *testing.T) {
	freezeAt := time.Duration(0)
	if d, err := time.ParseDuration(os.Getenv("FAIRBENCH_FREEZE_AT")); err == nil {
		freezeAt = d
	}
	srv := testserver.Server(t, "postgres")
	tg := testserver.Database(t, "postgres")
	dsn := withPassword(tg, tg.Password)
	if code, out, errs := run("prepare", "--target", dsn, "--workload", "oltp_point_select", "--tables", "1", "--table-size", "1000"); code != 0 {
		t.Fatalf("prepare: %d\n%s%s", code, out, errs)
	}
	t.Cleanup(func() { run("cleanup", "--target", dsn, "--workload", "oltp_point_select") })
	var ice freezer
	defer ice.thaw()
	freeze := func() { ice.freeze(srv.PIDs()) }
	log := &onFirst{mark: "completed ", do: func() { time.AfterFunc(300*time.Millisecond, freeze) }}
	if freezeAt > 0 {
		log.do = func() {}
		timer := time.AfterFunc(freezeAt, freeze)
		defer timer.Stop()
	}
	out := filepath.Join(t.TempDir(), "cap.json")
	began := time.Now()
	var o bytes.Buffer
	code := Main([]string{"capacity", "--target", dsn, "--workload", "oltp_point_select", "--window", "1s", "--warmup", "200ms",
		"--instrument", "off", "--slo", "p50<=2s", "--start-rate", "50", "--budget", "60s", "--out", out}, &o, log)
	stdout, stderr := o.String(), log.String()
	wall := time.Since(began)
	ice.thaw()
	if code != 1 {
		t.Fatalf("exit %d, want 1 (incomplete)\n%s%s", code, stdout, stderr)
	}
	// The freeze, the watchdog's connect timeout (10 s) twice at most, and room for a loaded machine.
	if wall > 45*time.Second {
		t.Errorf("the search on a frozen server took %v: want it to end soon after the freeze, not at its 60 s budget\n%s%s", wall, stdout, stderr)
	}
	r, err := result.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	if r.Complete || r.Capacity == nil || len(r.Capacity.Steps) == 0 {
		t.Fatalf("result complete=%v, capacity %+v: want incomplete, with the rates measured before the freeze", r.Complete, r.Capacity)
	}
	t.Logf("ended after %v: %s; %d rates kept, stopped: %s", wall.Round(time.Millisecond), r.Error, len(r.Capacity.Steps), r.Capacity.Stopped)
}

// onFirst is a log that calls do once, when a line holding mark is first written.
type onFirst struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	mark string
	do   func()
	done bool
}

func (w *onFirst) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done && bytes.Contains(p, []byte(w.mark)) {
		w.done = true
		w.do()
	}
	return w.buf.Write(p)
}

func (w *onFirst) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}
