package cli

import (
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/testserver"
)

// A run with --metrics-addr, scraped by Debian's prometheus: the counters move during the run,
// and the last value Prometheus saw matches the result's total within one interval (the part
// after the last scrape). The dashboard's queries are checked in livemetrics' own test.
func TestLiveMetricsScrapedByPrometheus(t *testing.T) {
	base := prepared(t, "postgres")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	prom := testserver.Prometheus(t, addr)
	out := filepath.Join(t.TempDir(), "r.json")
	done := make(chan string, 1)
	go func() {
		code, stdout, stderr := run(append([]string{"run"}, append(base, "--threads", "2", "--time", "6s", "--warmup", "1s", "--metrics-addr", addr, "--out", out)...)...)
		done <- fmt.Sprintf("exit %d\n%s%s", code, stdout, stderr)
	}()
	first := 0.0
	for deadline := time.Now().Add(15 * time.Second); first == 0 && time.Now().Before(deadline); {
		first = scrapeTotal(t, addr, 200*time.Millisecond)
	}
	second := scrapeTotal(t, addr, 2*time.Second)
	if !(second > first && first > 0) {
		t.Errorf("transactions_total did not move: %v then %v", first, second)
	}
	if msg := <-done; !strings.HasPrefix(msg, "exit 0") {
		t.Fatal(msg)
	}
	r, err := result.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got, err := testserver.PromQuery(ctx, prom, `max_over_time(fairbench_transactions_total{workload="oltp_point_select"}[1m])`, "engine")
	if err != nil {
		t.Fatal(err)
	}
	slack := r.TPS * 2 // one report interval, plus up to one scrape interval before it
	t.Logf("scraped %v then %v transactions during the run; prometheus's last %v, the result %d (%.0f TPS)", first, second, got["postgres"], r.Transactions, r.TPS)
	if diff := math.Abs(got["postgres"] - float64(r.Transactions)); diff > slack {
		t.Errorf("prometheus saw %v transactions, the result has %d (more than %.0f apart)", got["postgres"], r.Transactions, slack)
	}
}

// scrapeTotal waits d, then reads fairbench_transactions_total from the endpoint (0 before
// the first interval, or when the endpoint is not up yet).
func scrapeTotal(t *testing.T, addr string, d time.Duration) float64 {
	t.Helper()
	time.Sleep(d)
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, "fairbench_transactions_total{") {
			var v float64
			fmt.Sscan(line[strings.LastIndex(line, " ")+1:], &v)
			return v
		}
	}
	return 0
}

// --metrics-addr without a host listens on every interface; the user is told so.
func TestMetricsAddrOnEveryInterfaceIsSaid(t *testing.T) {
	for addr, warned := range map[string]bool{":0": true, "0.0.0.0:0": true, "127.0.0.1:0": false} {
		var stderr strings.Builder
		_, stop, err := startLive(addr, &stderr)
		if err != nil {
			t.Fatalf("%s: %v", addr, err)
		}
		stop()
		if got := strings.Contains(stderr.String(), "every network interface"); got != warned {
			t.Errorf("--metrics-addr %s: warned %v (%q), want %v", addr, got, stderr.String(), warned)
		}
	}
}
