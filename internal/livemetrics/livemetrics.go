// Package livemetrics serves a running benchmark's figures to Prometheus (`--metrics-addr`), so
// operators watch a long run on the dashboards they already have (deploy/grafana-dashboard.json).
//
// The runner hands over one Sample per report interval; the exporter adds it to running totals
// and answers scrapes from them. Latency is kept as the runner keeps it, in a lossless
// HdrHistogram per series, and turned into a classic Prometheus histogram at scrape time, so the
// buckets are exact and nothing is observed per transaction on the client's hot path.
package livemetrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/fairbench/fairbench/internal/histogram"
)

// Labels name one series: the engine and its version (two versions of one engine can run in one
// comparison), the workload, and the transaction kind: AllKinds for the workload as a whole, or
// one of its transaction types (TPC-C's new_order, payment...) for workloads that have them.
type Labels struct{ Engine, Version, Workload, Kind string }

// AllKinds is the kind label of a workload's whole series. Only it carries active clients and
// the server's figures, which belong to no one transaction type.
const AllKinds = "all"

// Sample is what one report interval adds.
type Sample struct {
	Transactions, Errors, Retries int64
	Clients                       int
	Latency                       *histogram.Histogram // this interval's latencies (µs); may be nil
	Lag                           *histogram.Histogram // open loop: how late transactions started; may be nil
	// Server-side figures of the interval, when sampled (0 = not measured): CPU and memory at the
	// interval's end, block I/O during it.
	ServerCPUPct                  float64
	ServerMemMB                   float64
	DiskReadBytes, DiskWriteBytes int64
	DiskReadOps, DiskWriteOps     int64
}

// LatencyBucketsSeconds are the classic histogram's upper bounds: 50 µs to 60 s, about three per
// decade, fine enough for histogram_quantile on OLTP and analytics alike.
var LatencyBucketsSeconds = []float64{
	0.00005, 0.0001, 0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05,
	0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60,
}

type series struct {
	txns, errors, retries float64
	clients               float64
	cpuPct, memBytes      float64
	disk                  [4]float64 // read bytes, write bytes, read ops, write ops
	latency, lag          *histogram.Histogram
}

// Exporter holds the running totals and serves them.
type Exporter struct {
	mu     sync.Mutex
	series map[Labels]*series
	srv    *http.Server
	addr   string
	bounds []int64
}

var labelNames = []string{"engine", "version", "workload", "kind"}

func desc(name, help string) *prometheus.Desc {
	return prometheus.NewDesc("fairbench_"+name, help, labelNames, nil)
}

var (
	descTxns    = desc("transactions_total", "Transactions committed (the workload's rollbacks on purpose included).")
	descErrors  = desc("errors_total", "Transactions that failed after every try.")
	descRetries = desc("retries_total", "Attempts repeated after a retryable error (deadlock, lock wait, serialization).")
	descClients = desc("active_clients", "Client threads running.")
	descLatency = desc("transaction_latency_seconds", "Transaction latency; open loop: from the scheduled arrival.")
	descLag     = desc("schedule_lag_seconds", "Open loop: how late transactions started after their scheduled arrival.")
	descCPU     = desc("server_cpu_percent", "The server's CPU over the last interval, percent of the machine.")
	descMem     = desc("server_memory_bytes", "The memory the kernel charges the server's cgroup, at the end of the last interval.")
	descDisk    = [4]*prometheus.Desc{
		desc("server_disk_read_bytes_total", "Bytes the server read from its data directory's disk."),
		desc("server_disk_write_bytes_total", "Bytes the server wrote to its data directory's disk."),
		desc("server_disk_read_ops_total", "Read operations of the server on its data directory's disk."),
		desc("server_disk_write_ops_total", "Write operations of the server on its data directory's disk."),
	}
)

// Start listens on addr (host:port) and serves /metrics until Close. An address that cannot be
// listened on is returned as an error before any benchmark starts.
func Start(addr string) (*Exporter, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics-addr %s: %v: give a free host:port such as 127.0.0.1:9464", addr, err)
	}
	e := &Exporter{series: map[Labels]*series{}, addr: ln.Addr().String()}
	for _, b := range LatencyBucketsSeconds {
		e.bounds = append(e.bounds, int64(b*1e6))
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(e)
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	e.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = e.srv.Serve(ln) }() // Serve returns ErrServerClosed after Close
	return e, nil
}

// Addr is the address actually listened on (useful with port 0).
func (e *Exporter) Addr() string { return e.addr }

// Close stops serving; a scrape in flight gets a second to finish.
func (e *Exporter) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := e.srv.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return e.srv.Close()
	}
	return nil
}

// Add folds one interval into the series' totals.
func (e *Exporter) Add(l Labels, s Sample) {
	e.mu.Lock()
	defer e.mu.Unlock()
	sr := e.series[l]
	if sr == nil {
		sr = &series{latency: histogram.New(), lag: histogram.New()}
		e.series[l] = sr
	}
	sr.txns += float64(s.Transactions)
	sr.errors += float64(s.Errors)
	sr.retries += float64(s.Retries)
	sr.clients = float64(s.Clients)
	sr.cpuPct, sr.memBytes = s.ServerCPUPct, s.ServerMemMB*1024*1024
	for i, v := range []int64{s.DiskReadBytes, s.DiskWriteBytes, s.DiskReadOps, s.DiskWriteOps} {
		sr.disk[i] += float64(v)
	}
	if s.Latency != nil {
		sr.latency.Merge(s.Latency)
	}
	if s.Lag != nil {
		sr.lag.Merge(s.Lag)
	}
}

// Done marks a series' clients as stopped, so a dashboard does not show a finished step as running.
func (e *Exporter) Done(l Labels) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if sr := e.series[l]; sr != nil {
		sr.clients = 0
	}
}

// Describe sends every descriptor (prometheus.Collector).
func (e *Exporter) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descTxns, descErrors, descRetries, descClients, descLatency, descLag, descCPU, descMem} {
		ch <- d
	}
	for _, d := range descDisk {
		ch <- d
	}
}

// Collect answers a scrape from the running totals (prometheus.Collector).
func (e *Exporter) Collect(ch chan<- prometheus.Metric) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for l, sr := range e.series {
		lv := []string{l.Engine, l.Version, l.Workload, l.Kind}
		ch <- prometheus.MustNewConstMetric(descTxns, prometheus.CounterValue, sr.txns, lv...)
		ch <- prometheus.MustNewConstMetric(descErrors, prometheus.CounterValue, sr.errors, lv...)
		ch <- prometheus.MustNewConstMetric(descRetries, prometheus.CounterValue, sr.retries, lv...)
		ch <- e.constHistogram(descLatency, sr.latency, lv)
		if l.Kind != AllKinds {
			continue
		}
		ch <- prometheus.MustNewConstMetric(descClients, prometheus.GaugeValue, sr.clients, lv...)
		if sr.lag.Count() > 0 {
			ch <- e.constHistogram(descLag, sr.lag, lv)
		}
		if sr.cpuPct > 0 {
			ch <- prometheus.MustNewConstMetric(descCPU, prometheus.GaugeValue, sr.cpuPct, lv...)
		}
		if sr.memBytes > 0 {
			ch <- prometheus.MustNewConstMetric(descMem, prometheus.GaugeValue, sr.memBytes, lv...)
		}
		for i, d := range descDisk {
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, sr.disk[i], lv...)
		}
	}
}

func (e *Exporter) constHistogram(d *prometheus.Desc, h *histogram.Histogram, lv []string) prometheus.Metric {
	cum := h.CumulativeAt(e.bounds)
	buckets := make(map[float64]uint64, len(cum))
	for i, c := range cum {
		buckets[LatencyBucketsSeconds[i]] = c
	}
	return prometheus.MustNewConstHistogram(d, uint64(h.Count()), h.SumMicros()/1e6, buckets, lv...)
}
