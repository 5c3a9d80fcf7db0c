package servermetrics

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/fairbench/fairbench/internal/cgroup"
	"github.com/fairbench/fairbench/internal/dialect"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/throttle"
)

// mib is what result's "MB" fields count in, as PostgreSQL's "MB" does.
const mib = 1 << 20

// backendExitWait bounds how long Finish waits for the run's PostgreSQL backends to exit and so
// publish their last statistics; the runner closes its connections before it returns, so the
// wait normally ends within milliseconds.
const backendExitWait = 3 * time.Second

// Monitor watches one run. Use it as: NewMonitor, Start, runner.Run with Config.OnInterval set
// to m.OnInterval, then Finish once Run has returned (its connections closed).
type Monitor struct {
	conn    sqldb.Conn
	sampler *ProcessSampler // nil for a remote server, or where the cgroup covers everything
	group   *groupWatch     // nil without a cgroup
	device  *deviceWatch    // a block device of the server's own, nil where it has none
	host    *hostWatch      // a remote server's host through node_exporter, nil without one
	local   bool
	dataDir string // the server's data directory, for its size on disk
	// tolerant: a server fairbench did not start, perhaps another product of the protocol,
	// whose settings, counters or sessions a view it lacks cannot give: what cannot be read is
	// recorded as not available (missing) and the run goes on.
	tolerant bool

	mu              sync.Mutex
	started         bool
	settings        map[string]string
	before          map[string]int64
	earlierSessions map[string]bool // client backends already there at Start: not the run's
	base, last      Sample
	idleRSS         int64
	peakRSS         int64
	peakPSS         int64
	diskPartial     bool
	sampleErr       error
	missing         []string // what the server could not give (tolerant only), for the result
	// lateCounters says why the window has no counters: their first read came back too late
	// (MeasureStart); empty otherwise.
	lateCounters string
	// idleRead is how long the counters' read took at Start, on the idle server.
	idleRead time.Duration
}

// NewMonitor watches the server behind conn, a connection of the monitor's own (a benchmark
// thread's would have its statements interleaved with the workload). pids lists the server's
// processes; nil for a remote server, whose process figures cannot be seen.
// DiskSourceProcIO names where disk figures come from, and what they are: the kernel charges
// write_bytes per page-cache chunk dirtied, so for buffered writers (PostgreSQL) it can exceed the
// bytes that reach the disk many times over; InnoDB's O_DIRECT writes are counted byte for byte.
// The engines' own counters (wal_bytes, pages_written) are the figure to compare across engines.
// SourceProc names the /proc sampler as the source of CPU and memory figures (RSS and PSS
// summed over the server's processes), used where the server has no cgroup.
const SourceProc = "/proc (sum over the server's processes)"

// SourceRemote marks host figures of a server fairbench did not start and has no node_exporter for.
const SourceRemote = "not measured (remote)"

const DiskSourceProcIO = "/proc/PID/io (write_bytes counts page-cache chunks dirtied; see wal_bytes and pages_written for bytes the engine wrote)"

func NewMonitor(conn sqldb.Conn, pids func() []int) *Monitor {
	m := &Monitor{conn: conn}
	if pids != nil {
		m.sampler = NewProcessSampler(pids)
		m.local = true
	}
	return m
}

// WithProcesses samples the server's processes in /proc (pids lists them each time): a server
// on this machine that fairbench did not start and that has no cgroup of its own.
func (m *Monitor) WithProcesses(pids func() []int) *Monitor {
	m.sampler = NewProcessSampler(pids)
	m.local = true
	return m
}

// WithNodeExporter takes a remote server's host figures (CPU, memory, disks of the whole
// machine) from node_exporter, made with NewNodeExporter; nil changes nothing.
func (m *Monitor) WithNodeExporter(n *NodeExporter) *Monitor {
	if n != nil {
		m.host = &hostWatch{n: n}
	}
	return m
}

// WithDataDir has Finish record the data directory's size on disk. Where the directory is on a
// block device fairbench made for this server alone, the disk figures come from that device's
// own counters, and the cgroup's, if any, are kept beside them as the secondary source.
func (m *Monitor) WithDataDir(dir string) *Monitor {
	m.dataDir = dir
	if name, ok := throttle.OwnDevice(dir); ok {
		m.device = newDeviceWatch(name)
		m.local = true
	}
	if m.group != nil {
		m.group.journaled = cgroup.Journaled(dir)
	}
	return m
}

// dirBytes is the space the files under dir take on disk (allocated blocks, so sparse and
// preallocated files count as the filesystem does).
func dirBytes(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // a file removed meanwhile
		}
		if info, err := d.Info(); err == nil {
			if st, ok := info.Sys().(*syscall.Stat_t); ok {
				n += st.Blocks * 512
			}
		}
		return nil
	})
	return n, err
}

// WithCgroup takes the server's CPU, memory and disk figures from its cgroup (g may be nil: no
// change), disk figures from the disk holding its data ("MAJ:MIN", "" for all devices). /proc
// sampling stays only for what the group cannot give.
func (m *Monitor) WithCgroup(g *cgroup.Group, disk string) *Monitor {
	if g == nil {
		return m
	}
	m.group = newGroupWatch(g, disk)
	m.local = true
	if len(g.Missing) == 0 {
		m.sampler = nil
	}
	return m
}

// Start reads the settings and the counters before the run and, for a local server, takes the
// idle process sample. The counters and CPU baseline can be moved to where measurement really
// starts with MeasureStart.
func (m *Monitor) Start(ctx context.Context) error {
	settings, err := Settings(ctx, m.conn)
	if err = m.tolerate(ctx, "its settings", err); err != nil {
		return err
	}
	t0 := time.Now()
	before, err := Counters(ctx, m.conn)
	if err = m.tolerate(ctx, "its counters", err); err != nil {
		return err
	}
	m.idleRead = time.Since(t0)
	// The sessions already there, which the run's end does not wait for.
	earlier, err := dialect.Of(m.conn).ClientSessions(ctx, m.conn)
	if err = m.tolerate(ctx, "its sessions", err); err != nil {
		return fmt.Errorf("listing the server's sessions: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.settings, m.before, m.earlierSessions = settings, before, earlier
	if m.group != nil {
		if err := m.group.start(); err != nil {
			return fmt.Errorf("reading the server's cgroup: %w", err)
		}
	}
	if m.device != nil {
		if err := m.device.start(); err != nil {
			return err
		}
	}
	if m.host != nil {
		if err := m.host.start(); err != nil {
			return err
		}
	}
	if m.sampler != nil {
		s, err := m.sampler.Sample()
		if err != nil {
			return fmt.Errorf("sampling server processes: %w", err)
		}
		m.base, m.last = s, s
		m.idleRSS, m.peakRSS, m.peakPSS = s.RSSBytes, s.RSSBytes, s.PSSBytes
		m.diskPartial = s.DiskPartial
	}
	m.started = true
	return nil
}

// MeasureStart moves the start of the counters and of the CPU and disk figures to now, keeping
// the idle RSS from Start. Call it when the warm-up ends: Finish divides by the measured
// transactions, so counters that included the warm-up would overstate every per-transaction
// figure by (warm-up + duration) / duration. The kernel's figures (cgroup, device, processes)
// are taken first, at once; the engine's counters then need the server to answer, which a
// saturated one may do seconds late: counters read later than CountersLateLimit would cover only
// part of the window, so the result says they were not available instead of giving them.
func (m *Monitor) MeasureStart(ctx context.Context) error {
	m.mu.Lock()
	if !m.started {
		m.mu.Unlock()
		return errors.New("servermetrics: MeasureStart before Start")
	}
	err := m.kernelStart()
	m.mu.Unlock()
	if err != nil {
		return err
	}
	t0 := time.Now()
	before, err := Counters(ctx, m.conn)
	if err = m.tolerate(ctx, "its counters", err); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.before, m.lateCounters = before, ""
	// Late is beyond what the same read took on the idle server at Start: a far server's round
	// trips make every read slow, and its counters still stand for the window.
	if late := time.Since(t0) - m.idleRead; late > CountersLateLimit {
		m.before = nil
		m.lateCounters = fmt.Sprintf("its counters over the window: the server answered their first read %s after the window opened", late.Round(time.Millisecond))
	}
	return nil
}

// CountersLateLimit is how much later than on the idle server the engine's counters may be read
// after the window opens and still stand for the whole window: 3% of an 8 s window. A quiet
// server on this machine answers in milliseconds.
const CountersLateLimit = 250 * time.Millisecond

// kernelStart takes the window's starting figures that need no answer from the server. m.mu held.
func (m *Monitor) kernelStart() error {
	if m.group != nil {
		if err := m.group.measureStart(); err != nil {
			return fmt.Errorf("reading the server's cgroup: %w", err)
		}
	}
	if m.device != nil {
		if err := m.device.start(); err != nil {
			return err
		}
	}
	if m.host != nil {
		if err := m.host.measureStart(); err != nil {
			return err
		}
	}
	if m.sampler != nil {
		s, err := m.sampler.Sample()
		if err != nil {
			return fmt.Errorf("sampling server processes: %w", err)
		}
		m.base, m.last = s, s
		m.track(s)
	}
	return nil
}

// OnInterval samples the server's processes and fills the interval's server CPU and RSS. It
// is meant for runner.Config.OnInterval, which calls it on the runner's reporter goroutine; a
// failed sample leaves the fields empty and is reported by Finish.
func (m *Monitor) OnInterval(iv *result.Interval) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.started {
		return
	}
	if m.group != nil {
		if err := m.group.interval(iv); err != nil && m.sampleErr == nil {
			m.sampleErr = err
		}
	}
	if m.device != nil {
		if err := m.device.interval(iv); err != nil && m.sampleErr == nil {
			m.sampleErr = err
		}
	}
	if m.host != nil {
		if err := m.host.interval(iv); err != nil && m.sampleErr == nil {
			m.sampleErr = err
		}
	}
	if m.sampler == nil {
		return
	}
	cpuDone := iv.ServerCPUPct != 0
	s, err := m.sampler.Sample()
	if err != nil {
		if m.sampleErr == nil {
			m.sampleErr = err
		}
		return
	}
	if !cpuDone {
		iv.ServerCPUPct = round(CPUPercent(m.last, s), 100)
	}
	iv.ServerRSSMB = round(float64(s.RSSBytes)/mib, 10)
	m.last = s
	m.track(s)
}

func (m *Monitor) track(s Sample) {
	m.peakRSS = max(m.peakRSS, s.RSSBytes)
	m.peakPSS = max(m.peakPSS, s.PSSBytes)
	m.diskPartial = m.diskPartial || s.DiskPartial
}

// Finish reads the counters again and returns what was seen of the server over the run. On an
// error it still returns every figure it could get, with the error.
func (m *Monitor) Finish(ctx context.Context, transactions int64) (*result.Server, error) {
	m.mu.Lock()
	started := m.started
	m.mu.Unlock()
	if !started {
		return nil, errors.New("servermetrics: Finish before Start")
	}
	var errs []error
	if dialect.Of(m.conn).Caps().StatisticsAtExit {
		if err := m.waitRunBackendsExit(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	after, cerr := Counters(ctx, m.conn)
	size, serr := DataSize(ctx, m.conn)

	m.mu.Lock()
	defer m.mu.Unlock()
	srv := &result.Server{Local: m.local, Settings: m.settings}
	got, serrs := m.finishOwnCounters(srv, transactions)
	errs = append(errs, serrs...)
	if m.sampler != nil {
		if err := m.finishFromProc(srv, got); err != nil {
			errs = append(errs, err)
		}
	}
	if m.sampleErr != nil {
		errs = append(errs, fmt.Errorf("sampling the server: %w", m.sampleErr))
	}
	if m.dataDir != "" {
		if n, err := dirBytes(m.dataDir); err == nil {
			srv.DataDirBytes = n
		}
	}
	if m.local && transactions > 0 {
		srv.HostPerTxn = hostPerTxn(srv, transactions)
	}
	if !m.local && srv.CPUSource == "" {
		srv.CPUSource, srv.MemorySource, srv.DiskSource = SourceRemote, SourceRemote, SourceRemote
	}
	srv.NotAvailable = m.missing
	switch {
	case m.before == nil && m.lateCounters != "":
		srv.NotAvailable = appendOnce(srv.NotAvailable, m.lateCounters)
	case m.before == nil && m.tolerant:
		// Not read at the start: nothing to subtract from; recorded as not available.
	case cerr != nil:
		errs = append(errs, cerr)
	default:
		srv.Counters = Delta(m.before, after)
		srv.PerTxn = PerTransaction(srv.Counters, transactions)
		markUndercounted(srv)
	}
	switch {
	case serr != nil && m.tolerant && m.alive(ctx):
		srv.NotAvailable = appendOnce(srv.NotAvailable, "its data size: "+firstLine(serr))
	case serr != nil:
		errs = append(errs, serr)
	default:
		srv.DataSizeBytes = size
	}
	return srv, errors.Join(errs...)
}

// Tolerant makes the monitor record what the server cannot give as not available instead of
// failing the run: for a server fairbench did not start, which may be another product of the
// protocol without a view fairbench reads (a managed service, a fork, a distributed SQL engine).
// A server that does not answer at all still fails the run.
func (m *Monitor) Tolerant() *Monitor {
	m.tolerant = true
	return m
}

// tolerate passes err on, unless the monitor is tolerant and the server still answers: then
// what could not be read is recorded as not available, once.
func (m *Monitor) tolerate(ctx context.Context, what string, err error) error {
	if err == nil || !m.tolerant || !m.alive(ctx) {
		return err
	}
	m.mu.Lock()
	m.missing = appendOnce(m.missing, what+": "+firstLine(err))
	m.mu.Unlock()
	return nil
}

// alive says whether the server answers a trivial query within a few seconds.
func (m *Monitor) alive(ctx context.Context) bool {
	actx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, err := m.conn.Query(actx, "SELECT 1")
	return err == nil
}

func appendOnce(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

func firstLine(err error) string {
	s := err.Error()
	for i, r := range s {
		if r == '\n' {
			return s[:i]
		}
	}
	return s
}

// measured says which of a run's figures a source of the server's own gave (its cgroup, its loop
// device), so that the sampled /proc figures fill only the rest.
type measured struct{ cpu, mem, disk bool }

// finishOwnCounters reads the run's figures from the server's cgroup, its loop device and
// node_exporter, where the monitor has them, each failure an error of its own.
func (m *Monitor) finishOwnCounters(srv *result.Server, transactions int64) (measured, []error) {
	var got measured
	var errs []error
	if m.group != nil {
		var err error
		if got.cpu, got.mem, got.disk, err = m.group.finish(srv); err != nil {
			errs = append(errs, fmt.Errorf("reading the server's cgroup: %w", err))
		}
	}
	if m.device != nil {
		if err := m.device.finish(srv); err != nil {
			errs = append(errs, err)
		} else {
			got.disk = true
		}
	}
	if m.host != nil {
		if err := m.host.finish(srv); err != nil {
			errs = append(errs, err)
		} else if transactions > 0 {
			srv.HostPerTxn = hostPerTxn(srv, transactions)
		}
	}
	return got, errs
}

// finishFromProc takes a last sample of the server's processes and fills the figures no source
// of its own gave.
func (m *Monitor) finishFromProc(srv *result.Server, got measured) error {
	// The run's end is when caches are fullest; a PSS figure rationed away there would miss
	// the peak.
	m.sampler.forcePSS()
	s, err := m.sampler.Sample()
	if err != nil {
		err = fmt.Errorf("sampling server processes: %w", err)
	} else {
		m.last = s
		m.track(s)
	}
	end := m.last
	if !got.cpu {
		srv.CPUUserS = round(end.CPUUser-m.base.CPUUser, 100)
		srv.CPUSystemS = round(end.CPUSystem-m.base.CPUSystem, 100)
		srv.CPUPct = round(CPUPercent(m.base, end), 100)
		srv.CPUSource = SourceProc
	}
	if !got.mem {
		srv.RSSIdleMB = round(float64(m.idleRSS)/mib, 10)
		srv.RSSPeakMB = round(float64(m.peakRSS)/mib, 10)
		srv.PSSPeakMB = round(float64(m.peakPSS)/mib, 10)
		srv.MemorySource = SourceProc
	}
	// Undercounted disk figures would be compared as if they were whole; better none.
	if !m.diskPartial && !got.disk {
		srv.DiskReadBytes = end.ReadBytes - m.base.ReadBytes
		srv.DiskWriteBytes = end.WriteBytes - m.base.WriteBytes
		srv.DiskSource = DiskSourceProcIO
	}
	return err
}

// waitRunBackendsExit waits until the client backends that appeared since Start have exited:
// a PostgreSQL backend keeps up to a second of statistics to itself while it runs and publishes
// them when it exits.
func (m *Monitor) waitRunBackendsExit(ctx context.Context) error {
	deadline := time.Now().Add(backendExitWait)
	for {
		now, err := dialect.Of(m.conn).ClientSessions(ctx, m.conn)
		if err != nil {
			return fmt.Errorf("listing the server's sessions: %w", err)
		}
		remaining := 0
		for pid := range now {
			if !m.earlierSessions[pid] {
				remaining++
			}
		}
		if remaining == 0 || time.Now().After(deadline) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// markUndercounted flags disk figures that hold fewer bytes written than the WAL or redo the
// engine says it wrote: every durable commit puts its log on the disk, so such figures miss
// writes the kernel made on the server's behalf and must not be compared as if whole.
func markUndercounted(srv *result.Server) {
	wal := srv.Counters[KeyWALBytes]
	if srv.DiskDevice == "" || wal < 1<<20 || srv.DiskWriteBytes >= wal/2 {
		return
	}
	srv.DiskUndercounted = true
	srv.DiskSource += fmt.Sprintf("; undercounted: %d bytes written against %d of WAL/redo by the engine's own counter, so part of the writes was made by the kernel for no cgroup", srv.DiskWriteBytes, wal)
}

// hostPerTxn divides the host figures by the transactions.
func hostPerTxn(srv *result.Server, txns int64) map[string]float64 {
	n := float64(txns)
	out := map[string]float64{}
	if srv.CPUSource != "" {
		out["cpu_ms"] = round((srv.CPUUserS+srv.CPUSystemS)*1000/n, 1000)
	}
	if srv.DiskDevice != "" {
		out["disk_read_bytes"] = round(float64(srv.DiskReadBytes)/n, 100)
		out["disk_write_bytes"] = round(float64(srv.DiskWriteBytes)/n, 100)
		out["disk_read_ops"] = round(float64(srv.DiskReadOps)/n, 1000)
		out["disk_write_ops"] = round(float64(srv.DiskWriteOps)/n, 1000)
	}
	return out
}

func round(x, scale float64) float64 { return math.Round(x*scale) / scale }
