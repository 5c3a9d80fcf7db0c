package livemetrics

import (
	"net/http"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/fairbench/fairbench/internal/histogram"
)

// Scrape fetches and parses the exporter's /metrics.
func Scrape(t *testing.T, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

func hist(micros ...int64) *histogram.Histogram {
	h := histogram.New()
	for _, m := range micros {
		h.Record(m)
	}
	return h
}

func TestExporterCountsAndBuckets(t *testing.T) {
	e, err := Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	l := Labels{Engine: "postgres", Version: "15.18", Workload: "oltp_point_select", Kind: "all"}
	e.Add(l, Sample{Transactions: 3, Retries: 1, Clients: 4, Latency: hist(80, 150, 3000), ServerCPUPct: 42})
	e.Add(l, Sample{Transactions: 2, Errors: 1, Clients: 4, Latency: hist(90, 70_000)})
	fams := Scrape(t, e.Addr())
	counter := func(name string) float64 { return fams[name].Metric[0].GetCounter().GetValue() }
	if counter("fairbench_transactions_total") != 5 || counter("fairbench_errors_total") != 1 || counter("fairbench_retries_total") != 1 {
		t.Errorf("counters: txns %v errors %v retries %v", counter("fairbench_transactions_total"), counter("fairbench_errors_total"), counter("fairbench_retries_total"))
	}
	h := fams["fairbench_transaction_latency_seconds"].Metric[0].GetHistogram()
	if h.GetSampleCount() != 5 {
		t.Fatalf("histogram count %d, want 5", h.GetSampleCount())
	}
	want := map[float64]uint64{0.0001: 2, 0.0002: 3, 0.005: 4, 0.05: 4, 0.1: 5}
	for _, b := range h.Bucket {
		if w, ok := want[b.GetUpperBound()]; ok && b.GetCumulativeCount() != w {
			t.Errorf("bucket le=%g: %d, want %d", b.GetUpperBound(), b.GetCumulativeCount(), w)
		}
	}
	if got := fams["fairbench_active_clients"].Metric[0].GetGauge().GetValue(); got != 4 {
		t.Errorf("active clients %v, want 4", got)
	}
	e.Done(l)
	if got := Scrape(t, e.Addr())["fairbench_active_clients"].Metric[0].GetGauge().GetValue(); got != 0 {
		t.Errorf("active clients after Done %v, want 0", got)
	}
}

// A transaction type's series carries its counters and latency; active clients and the server's
// figures belong to the workload's whole series only.
func TestKindSeries(t *testing.T) {
	e, err := Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	all := Labels{Engine: "mariadb", Version: "10.11.14", Workload: "tpcc", Kind: AllKinds}
	kind := all
	kind.Kind = "new_order"
	e.Add(all, Sample{Transactions: 10, Clients: 4, Latency: hist(1000), ServerCPUPct: 50})
	e.Add(kind, Sample{Transactions: 4, Errors: 1, Retries: 2, Latency: hist(2000, 3000)})
	byKind := func(fam string) map[string]*dto.Metric {
		out := map[string]*dto.Metric{}
		for _, m := range Scrape(t, e.Addr())[fam].GetMetric() {
			for _, lp := range m.GetLabel() {
				if lp.GetName() == "kind" {
					out[lp.GetValue()] = m
				}
			}
		}
		return out
	}
	tx := byKind("fairbench_transactions_total")
	if tx["new_order"].GetCounter().GetValue() != 4 || tx["all"].GetCounter().GetValue() != 10 {
		t.Errorf("transactions by kind: %v", tx)
	}
	if got := byKind("fairbench_errors_total")["new_order"].GetCounter().GetValue(); got != 1 {
		t.Errorf("new_order errors %v, want 1", got)
	}
	if got := byKind("fairbench_transaction_latency_seconds")["new_order"].GetHistogram().GetSampleCount(); got != 2 {
		t.Errorf("new_order latency count %d, want 2", got)
	}
	for _, fam := range []string{"fairbench_active_clients", "fairbench_server_cpu_percent"} {
		if m := byKind(fam); len(m) != 1 || m["all"] == nil {
			t.Errorf("%s by kind: %v, want the workload's series only", fam, m)
		}
	}
}

func TestStartRefusesABusyAddress(t *testing.T) {
	e, err := Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := Start(e.Addr()); err == nil || !strings.Contains(err.Error(), "--metrics-addr") {
		t.Errorf("second Start on %s: %v, want a --metrics-addr error", e.Addr(), err)
	}
}
