package servermetrics

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/fairbench/fairbench/internal/result"
)

// NodeExporter reads a remote server's host from Prometheus node_exporter: the whole machine's
// CPU, memory and disks, which is the server's only when the server is what that machine runs.
type NodeExporter struct {
	URL    string
	client *http.Client
}

// HostReading is one scrape of node_exporter, cumulative where the metric is a counter.
type HostReading struct {
	At                         time.Time
	CPUs                       int
	CPUUserS, CPUSystemS       float64
	MemUsed, MemAnon, MemCache int64
	Disk                       struct{ ReadBytes, WriteBytes, ReadOps, WriteOps int64 }
	Devices                    []string
}

// NewNodeExporter checks the URL answers with node_exporter's metrics, so that a wrong address
// fails before anything runs.
func NewNodeExporter(ctx context.Context, url string) (*NodeExporter, error) {
	n := &NodeExporter{URL: url, client: &http.Client{Timeout: 5 * time.Second}}
	r, err := n.Read(ctx)
	if err != nil {
		return nil, err
	}
	if r.CPUs == 0 {
		return nil, fmt.Errorf("node_exporter at %s: no node_cpu_seconds_total in its metrics: is it node_exporter?", url)
	}
	return n, nil
}

// Read scrapes node_exporter once.
func (n *NodeExporter) Read(ctx context.Context) (HostReading, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, n.URL, nil)
	if err != nil {
		return HostReading{}, fmt.Errorf("node_exporter URL %q: %w", n.URL, err)
	}
	resp, err := n.client.Do(req)
	if err != nil {
		return HostReading{}, fmt.Errorf("node_exporter at %s cannot be reached: %w", n.URL, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return HostReading{}, fmt.Errorf("node_exporter at %s answered %s", n.URL, resp.Status)
	}
	return ParseNodeExporter(resp.Body, time.Now())
}

// ParseNodeExporter reads node_exporter's text format with the Prometheus project's own parser.
func ParseNodeExporter(in io.Reader, at time.Time) (HostReading, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(in)
	if err != nil {
		return HostReading{}, fmt.Errorf("node_exporter metrics: %w", err)
	}
	r := HostReading{At: at}
	cpus := map[string]bool{}
	for _, m := range metrics(fams, "node_cpu_seconds_total") {
		cpus[label(m, "cpu")] = true
		switch label(m, "mode") {
		case "user", "nice":
			r.CPUUserS += value(m)
		case "system", "irq", "softirq":
			r.CPUSystemS += value(m)
		}
	}
	r.CPUs = len(cpus)
	total, avail := gauge(fams, "node_memory_MemTotal_bytes"), gauge(fams, "node_memory_MemAvailable_bytes")
	r.MemUsed = int64(total - avail)
	r.MemAnon = int64(gauge(fams, "node_memory_AnonPages_bytes"))
	r.MemCache = int64(gauge(fams, "node_memory_Cached_bytes"))
	devs := map[string]bool{}
	add := func(name string, to *int64) {
		for _, m := range metrics(fams, name) {
			devs[label(m, "device")] = true
			*to += int64(value(m))
		}
	}
	add("node_disk_read_bytes_total", &r.Disk.ReadBytes)
	add("node_disk_written_bytes_total", &r.Disk.WriteBytes)
	add("node_disk_reads_completed_total", &r.Disk.ReadOps)
	add("node_disk_writes_completed_total", &r.Disk.WriteOps)
	for d := range devs {
		r.Devices = append(r.Devices, d)
	}
	sort.Strings(r.Devices)
	return r, nil
}

func metrics(fams map[string]*dto.MetricFamily, name string) []*dto.Metric {
	if f, ok := fams[name]; ok {
		return f.GetMetric()
	}
	return nil
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Untyped != nil:
		return m.Untyped.GetValue()
	}
	return 0
}

func gauge(fams map[string]*dto.MetricFamily, name string) float64 {
	var sum float64
	for _, m := range metrics(fams, name) {
		sum += value(m)
	}
	return sum
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// hostWatch follows a remote host through node_exporter over a run.
type hostWatch struct {
	n                            *NodeExporter
	base, last, idle             HostReading
	loadMem, loadAnon, loadCache int64
}

func (w *hostWatch) read() (HostReading, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return w.n.Read(ctx)
}

func (w *hostWatch) start() error {
	r, err := w.read()
	if err != nil {
		return err
	}
	w.base, w.last, w.idle = r, r, r
	return nil
}

func (w *hostWatch) measureStart() error {
	r, err := w.read()
	if err != nil {
		return err
	}
	w.track(r)
	w.base, w.last = r, r
	return nil
}

func (w *hostWatch) track(r HostReading) {
	w.loadMem = max(w.loadMem, r.MemUsed)
	w.loadAnon = max(w.loadAnon, r.MemAnon)
	w.loadCache = max(w.loadCache, r.MemCache)
}

func hostCPUPct(a, b HostReading) float64 {
	wall := b.At.Sub(a.At).Seconds()
	if wall <= 0 || b.CPUs == 0 {
		return 0
	}
	return ((b.CPUUserS + b.CPUSystemS) - (a.CPUUserS + a.CPUSystemS)) / (wall * float64(b.CPUs)) * 100
}

func (w *hostWatch) interval(iv *result.Interval) error {
	r, err := w.read()
	if err != nil {
		return err
	}
	iv.ServerCPUPct = round(hostCPUPct(w.last, r), 100)
	iv.ServerMemMB = mb(r.MemUsed)
	iv.ServerDiskReadBytes, iv.ServerDiskWriteBytes = r.Disk.ReadBytes-w.last.Disk.ReadBytes, r.Disk.WriteBytes-w.last.Disk.WriteBytes
	iv.ServerDiskReadOps, iv.ServerDiskWriteOps = r.Disk.ReadOps-w.last.Disk.ReadOps, r.Disk.WriteOps-w.last.Disk.WriteOps
	w.track(r)
	w.last = r
	return nil
}

func (w *hostWatch) finish(srv *result.Server) error {
	r, err := w.read()
	if err != nil {
		return err
	}
	w.track(r)
	src := "node_exporter " + w.n.URL + " (whole host)"
	srv.CPUUserS = round(r.CPUUserS-w.base.CPUUserS, 100)
	srv.CPUSystemS = round(r.CPUSystemS-w.base.CPUSystemS, 100)
	srv.CPUPct = round(hostCPUPct(w.base, r), 100)
	srv.MemIdleMB, srv.MemAnonIdleMB, srv.MemCacheIdleMB = mb(w.idle.MemUsed), mb(w.idle.MemAnon), mb(w.idle.MemCache)
	srv.MemLoadMB, srv.MemAnonLoadMB, srv.MemCacheLoadMB = mb(w.loadMem), mb(w.loadAnon), mb(w.loadCache)
	srv.DiskReadBytes, srv.DiskWriteBytes = r.Disk.ReadBytes-w.base.Disk.ReadBytes, r.Disk.WriteBytes-w.base.Disk.WriteBytes
	srv.DiskReadOps, srv.DiskWriteOps = r.Disk.ReadOps-w.base.Disk.ReadOps, r.Disk.WriteOps-w.base.Disk.WriteOps
	srv.DiskDevice = strings.Join(r.Devices, ", ")
	srv.CPUSource, srv.MemorySource, srv.DiskSource = src, src, src
	return nil
}
