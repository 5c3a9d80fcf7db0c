package report

import (
	"math"
	"testing"

	"github.com/fairbench/fairbench/internal/result"
)

func TestTopWaits(t *testing.T) {
	waits := func(counts ...any) *result.Waits {
		w := &result.Waits{}
		for i := 0; i < len(counts); i += 2 {
			n := counts[i+1].(int)
			w.Categories = append(w.Categories, result.WaitCount{Category: counts[i].(string), Count: n})
			w.Sessions += n
		}
		return w
	}
	for _, tc := range []struct {
		name string
		w    *result.Waits
		n    int
		want string
	}{
		{"none", nil, 2, "not sampled"},
		{"no samples", &result.Waits{}, 2, "not sampled"},
		{"server side first, client last", waits("cpu", 17, "log_flush", 13, "client", 70), 2, "on CPU 17%, log flush 13%; client 70%"},
		{"most sampled first", waits("cpu", 10, "log_flush", 30, "row_lock", 5, "client", 55), 2, "log flush 30%, on CPU 10%; client 55%"},
		{"only n of them", waits("cpu", 10, "log_flush", 30, "row_lock", 5, "client", 55), 1, "log flush 30%; client 55%"},
		{"no client", waits("cpu", 60, "data_read", 40), 2, "on CPU 60%, data read 40%"},
		{"client only", waits("client", 10), 2, "client 100%"},
	} {
		if got := TopWaits(tc.w, tc.n); got != tc.want {
			t.Errorf("%s: TopWaits = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestCPUBound(t *testing.T) {
	run := func(cpuShare float64, threads int, secs, serverCPU float64) *result.Result {
		n := 1000
		cpu := int(cpuShare * float64(n))
		r := &result.Result{Threads: threads, DurationS: secs, Waits: &result.Waits{Sessions: n,
			Categories: []result.WaitCount{{Category: "cpu", Count: cpu}, {Category: "client", Count: n - cpu}}}}
		if serverCPU >= 0 {
			r.Server = &result.Server{CPUUserS: serverCPU * 0.8, CPUSystemS: serverCPU * 0.2}
		}
		return r
	}
	for _, tc := range []struct {
		name     string
		runs     []*result.Result
		wantMost float64
		wantOver bool
	}{
		// MariaDB 11.8 at a 25 MiB/s cap: 64% cpu of 12 threads for 20 s, 5.6 CPU-seconds.
		{"waiting unnamed", []*result.Result{run(0.64, 12, 20, 5.6)}, 5.6 / 240, true},
		{"cpu that the server's CPU covers", []*result.Result{run(0.20, 4, 10, 9)}, 9.0 / 40, false},
		{"rounds pooled", []*result.Result{run(0.5, 2, 10, 1), run(0.5, 2, 10, 1)}, 2.0 / 40, true},
		{"no server CPU: unknown", []*result.Result{run(0.9, 4, 10, -1)}, 0, false},
		{"more CPU than sessions (background work)", []*result.Result{run(0.9, 1, 10, 15)}, 1, false},
	} {
		most, over := cpuBound(tc.runs, result.PoolWaits(tc.runs))
		if over != tc.wantOver || math.Abs(most-tc.wantMost) > 1e-9 {
			t.Errorf("%s: cpuBound = %.4f, %v; want %.4f, %v", tc.name, most, over, tc.wantMost, tc.wantOver)
		}
	}
}
