package capacity

import (
	"github.com/fairbench/fairbench/internal/slo"
	"strings"
	"testing"
	"time"
)

// Each condition fails on its own and is named; a backlog's drift of a few milliseconds between
// the window's thirds is noise, a backlog that reaches half the limit and grows is not.
func TestJudge(t *testing.T) {
	ok := Window{Offered: 1000, Completed: 1000, Latency: 8 * time.Millisecond, Busy: 0.3, Connections: 32, Service: time.Millisecond}
	cases := []struct {
		name string
		edit func(*Window)
		want string
	}{
		{"passes", func(*Window) {}, ""},
		{"drift", func(w *Window) { w.LagStart, w.LagEnd = time.Millisecond, 3*time.Millisecond }, ""},
		{"lag high, not growing", func(w *Window) { w.LagStart, w.LagEnd = 6*time.Millisecond, 7*time.Millisecond }, ""},
		{"latency", func(w *Window) { w.Latency = 12 * time.Millisecond }, "p99 was 12.00 ms, over 10.00 ms"},
		{"throughput", func(w *Window) { w.Completed = 960 }, "completed 960/s of 1000/s offered (96%, under 97%"},
		{"throughput, within the schedule's variation", func(w *Window) { w.Offered, w.Completed, w.Seconds = 50, 44, 1 }, ""},
		{"throughput, past it", func(w *Window) { w.Offered, w.Completed, w.Seconds = 50, 28, 1 }, "completed 28/s of 50/s"},
		{"backlog", func(w *Window) { w.LagStart, w.LagEnd = time.Millisecond, 400*time.Millisecond }, "the backlog grew"},
		{"failed", func(w *Window) { w.Failed = "server stopped answering" }, "the run failed: server stopped answering"},
	}
	for _, c := range cases {
		w := ok
		c.edit(&w)
		v := Judge(slo10ms, w)
		got := strings.Join(v.Failed, "; ")
		if v.Pass != (c.want == "") || !strings.Contains(got, c.want) || (v.Pass && v.Stress > 1) {
			t.Errorf("%s: pass %v, stress %.2f, failed %q; want %q", c.name, v.Pass, v.Stress, got, c.want)
		}
	}
}

func TestStartRate(t *testing.T) {
	for _, c := range []struct {
		slo  string
		want float64
	}{{"p99<=5ms", 100}, {"p99.9<=5ms", 1000}, {"p50<=5ms", 2}, {"p95<=1s", 20}} {
		s, err := slo.Parse(c.slo)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.StartRate(10 * time.Second); got != c.want {
			t.Errorf("%s: start %.0f/s, want %.0f/s over a 10 s window", c.slo, got, c.want)
		}
	}
}

// What gave way is the client or the pool only where the failing tail was mostly the wait to
// start: a slow answer with connections free is the server's (a read-write mix at 285/s on
// PostgreSQL here: p99 28.6 ms, the lag a fraction of it, 36% of 8 connections busy).
func TestGaveWay(t *testing.T) {
	cases := []struct {
		name string
		w    Window
		want string
	}{
		{"slow answers", Window{Offered: 285, Completed: 272, Seconds: 4, Latency: 28600 * time.Microsecond, LagStart: 500 * time.Microsecond, LagEnd: 2 * time.Millisecond, Busy: 0.36, Connections: 8, Service: 10 * time.Millisecond}, ByServer},
		{"the client late", Window{Offered: 3200, Completed: 3000, Seconds: 4, Latency: 30 * time.Millisecond, LagStart: time.Millisecond, LagEnd: 25 * time.Millisecond, Busy: 0.05, Connections: 32, Service: time.Millisecond}, ByClient},
		{"the pool full", Window{Offered: 9000, Completed: 8000, Seconds: 4, Latency: 300 * time.Millisecond, LagStart: time.Millisecond, LagEnd: 290 * time.Millisecond, Busy: 0.98, Connections: 8, Service: time.Millisecond}, ByConnections},
		{"a stalled server holds every connection", Window{Offered: 4000, Completed: 1000, Seconds: 4, Latency: 2 * time.Second, LagEnd: time.Second, Busy: 1, Connections: 64, Service: time.Second}, ByServer},
	}
	for _, c := range cases {
		if v := Judge(slo10ms, c.w); v.Pass || v.GaveWay != c.want {
			t.Errorf("%s: pass %v, gave way %q, want %q (%v)", c.name, v.Pass, v.GaveWay, c.want, v.Failed)
		}
	}
}
