package study

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/fairbench/fairbench/internal/engine"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/throttle"
	"github.com/fairbench/fairbench/internal/throwaway"
	"github.com/fairbench/fairbench/internal/version"
)

// DefaultLimits are the bandwidth study's steps.
var DefaultLimits = []string{"50M", "125M", "250M", "500M", "max"}

// capSlack is how far over its cap a device may measure before the cap is said not to hold.
const capSlack = 0.10

// BandwidthOptions are the bandwidth study's settings beyond the common ones.
type BandwidthOptions struct {
	Common
	Limits      []string // as throttle.ParseRate reads them; "max" = no cap
	DeviceBytes int64    // size of the loop device (sparse); default throttle.DefaultDeviceSize
	// TPCHScale is the scale factor of the TPC-H data Q18 runs on at every step; 0 skips Q18.
	TPCHScale float64
	// ServerMemory, when above 0, caps the memory of the server's cgroup, its page cache included:
	// the study's data was four times its machine's memory, where PostgreSQL's reads through the
	// OS page cache reach the device; on a machine with memory to spare they need not.
	ServerMemory int64
}

// StepWorkload is a workload timed once at each bandwidth step, after OLTP read-write.
type StepWorkload interface {
	Name() string
	Prepare(ctx context.Context, tg sqldb.Target) error
	Run(ctx context.Context, tg sqldb.Target) (seconds float64, err error)
}

// q18Status says in the report how TPC-H Q18 was measured.
func q18Status(scale float64) string {
	if scale <= 0 {
		return "not run (--tpch-scale 0)."
	}
	return fmt.Sprintf("TPC-H at scale factor %s is loaded uncapped once per engine; at every step, after OLTP read-write, "+
		"the device's page cache is dropped and Q18 (validation parameters) runs once and is timed. "+
		"The second engine's answer is checked against the first's.", strconv.FormatFloat(scale, 'f', -1, 64))
}

// Bandwidth is the bandwidth study's document (bandwidth.json).
type Bandwidth struct {
	Study       string            `json:"study"` // "bandwidth"
	Schema      int               `json:"schema"`
	ToolVersion string            `json:"tool_version"`
	StartedAt   time.Time         `json:"started_at"`
	FinishedAt  time.Time         `json:"finished_at"`
	Command     string            `json:"command,omitempty"`
	Complete    bool              `json:"complete"`
	Error       string            `json:"error,omitempty"`
	Config      Config            `json:"config"`
	Mechanism   string            `json:"mechanism"` // throttle.CgroupV1 or CgroupV2
	Engines     []BandwidthEngine `json:"engines"`
	Crossovers  []Crossover       `json:"crossovers,omitempty"`
	TPCHQ18     string            `json:"tpch_q18"`
	Notes       []string          `json:"notes,omitempty"`
}

// BandwidthEngine is one engine's steps.
type BandwidthEngine struct {
	EngineInfo
	Device      string  `json:"device,omitempty"` // e.g. /dev/loop3 (7:3), direct I/O
	LoadSeconds float64 `json:"load_s"`
	DataBytes   int64   `json:"data_bytes"`
	Steps       []Step  `json:"steps"`
	// Knee is the lowest cap at which the engine got 90% of its uncapped throughput.
	Knee string `json:"knee,omitempty"`
}

// Step is one bandwidth limit.
type Step struct {
	Limit    string                `json:"limit"`     // as given, "max" for none
	LimitBps int64                 `json:"limit_bps"` // 0 = no cap
	Probe    *throttle.ProbeResult `json:"probe,omitempty"`
	// ProofOK says the direct-I/O probe stayed within 10% of the cap (always true uncapped).
	ProofOK bool   `json:"proof_ok"`
	Proof   string `json:"proof"`

	Workload string  `json:"workload"`
	Seconds  float64 `json:"seconds"`
	TPS      float64 `json:"tps"`
	QPS      float64 `json:"qps"`
	AvgMS    float64 `json:"latency_avg_ms"`
	P95MS    float64 `json:"latency_p95_ms"`
	P99MS    float64 `json:"latency_p99_ms"`
	Errors   int64   `json:"errors,omitempty"`

	PagesRequestedPerSec   float64 `json:"pages_requested_per_s"` // engine pages
	PagesRequestedPerSec4K float64 `json:"pages_requested_per_s_4k"`
	PagesReadPerSec4K      float64 `json:"pages_read_per_s_4k"`

	// What reached the device (its own counters), averaged over the run and over its busiest
	// five seconds (peakWindow says why not one).
	DeviceReadBps      float64 `json:"device_read_bps"`
	DeviceWriteBps     float64 `json:"device_write_bps"`
	DeviceReadPeakBps  float64 `json:"device_read_peak_bps"`
	DeviceWritePeakBps float64 `json:"device_write_peak_bps"`
	// The same window's bytes, to set beside the server's figures.
	DeviceReadBytes  int64 `json:"device_read_bytes"`
	DeviceWriteBytes int64 `json:"device_write_bytes"`
	// The server's disk figures for the step as every run records them (its monitor, re-based
	// after the settle's flush), from the source it names: the server's own device here, so they
	// must agree with the device's bytes above; a step that counted an earlier step's flush
	// would not.
	ServerReadBps    float64 `json:"server_read_bps"`
	ServerWriteBps   float64 `json:"server_write_bps"`
	ServerReadBytes  int64   `json:"server_read_bytes"`
	ServerWriteBytes int64   `json:"server_write_bytes"`
	ServerDiskSource string  `json:"server_disk_source,omitempty"`
	// WithinCap: the device's average read and write rates stayed within 10% of the cap.
	WithinCap *bool `json:"within_cap,omitempty"`

	Extra      map[string]ExtraResult `json:"extra,omitempty"`
	ResultFile string                 `json:"result_file,omitempty"`
	Error      string                 `json:"error,omitempty"`
}

// ExtraResult is one StepWorkload's figure at a step.
type ExtraResult struct {
	Seconds       float64 `json:"seconds,omitempty"`
	DeviceReadBps float64 `json:"device_read_bps,omitempty"` // averaged over the query
	Error         string  `json:"error,omitempty"`
}

// Crossover compares two engines' throughput across the limits.
type Crossover struct {
	A         string `json:"a"`
	B         string `json:"b"`
	Statement string `json:"statement"`
	// AtBps is where the throughput curves cross (interpolated on a log scale), 0 if they don't.
	AtBps float64 `json:"at_bps,omitempty"`
}

// CheckBandwidth says whether this machine can run the study, without changing anything: the
// error names what is missing.
func CheckBandwidth() (string, error) {
	return throttle.Available()
}

// RunBandwidth runs the bandwidth study and writes bandwidth.json, report.md and report.html to
// OutDir; what was measured is written also when it fails part-way.
func RunBandwidth(ctx context.Context, o BandwidthOptions) (*Bandwidth, error) {
	mech, err := CheckBandwidth()
	if err != nil {
		return nil, err
	}
	if err := o.defaults(); err != nil {
		return nil, err
	}
	if len(o.Limits) == 0 {
		o.Limits = DefaultLimits
	}
	limits := make([]int64, len(o.Limits))
	for i, l := range o.Limits {
		if limits[i], err = throttle.ParseRate(l); err != nil {
			return nil, err
		}
	}
	if err := mkOut(o.OutDir); err != nil {
		return nil, err
	}
	// A study killed outright left its device, cap and server behind; they would skew this one.
	reaped, err := throttle.ReapStale(o.WorkDir)
	for _, r := range reaped {
		logf(o.Log, "removed what a killed fairbench left behind: %s", r)
	}
	if err != nil {
		return nil, fmt.Errorf("removing what a killed fairbench left behind: %w", err)
	}
	cfg := configOf(&o.Common)
	cfg.Limits, cfg.DeviceBytes, cfg.ServerMemoryBytes = o.Limits, o.DeviceBytes, o.ServerMemory
	doc := &Bandwidth{Study: "bandwidth", Schema: SchemaVersion, ToolVersion: version.Version, StartedAt: time.Now().UTC(),
		Command: o.Command, Config: cfg, Mechanism: mech, TPCHQ18: q18Status(o.TPCHScale)}
	var errs []error
	for _, kind := range o.Engines {
		e, err := runBandwidthEngine(ctx, &o, kind, limits)
		if err != nil {
			e.Error = oneLine(err.Error())
			errs = append(errs, fmt.Errorf("%s: %w", kind, err))
		}
		doc.Engines = append(doc.Engines, *e)
		if ctx.Err() != nil {
			break
		}
	}
	doc.FinishedAt = time.Now().UTC()
	doc.Crossovers = Crossovers(doc)
	doc.Notes = bandwidthNotes(doc)
	doc.Complete = len(errs) == 0
	err = errors.Join(errs...)
	if err != nil {
		doc.Error = oneLine(err.Error())
	}
	md, html, rerr := RenderBandwidth(doc)
	if rerr == nil {
		rerr = writeOut(o.OutDir, "bandwidth.json", doc, md, html)
	}
	return doc, errors.Join(err, rerr)
}

func runBandwidthEngine(ctx context.Context, o *BandwidthOptions, kind string, limits []int64) (_ *BandwidthEngine, err error) {
	e := &BandwidthEngine{EngineInfo: EngineInfo{Kind: kind, BufferPoolBytes: o.BufferPoolBytes}}
	logf(o.Log, "%s: setting up a throttled loop device", kind)
	th, err := throttle.Setup(ctx, throttle.DeviceOptions{WorkDir: o.WorkDir, SizeBytes: o.DeviceBytes})
	if err != nil {
		return e, err
	}
	defer func() {
		if cerr := th.Close(); cerr != nil {
			err = errors.Join(err, cerr)
		}
	}()
	e.Device = fmt.Sprintf("%s (%s)", th.Device.Path, th.Device.DevNum())
	if th.Device.DirectIO {
		e.Device += ", direct I/O to its backing file"
	}

	srv, err := startServer(ctx, &o.Common, kind, th.Device.Dir)
	if err != nil {
		return e, err
	}
	defer srv.Close()
	tg, admin := srv.Target, srv.Conn
	// Moved before any client connects, so every backend forked later inherits the group.
	if err := th.Group.Add(srv.PIDs()); err != nil {
		return e, err
	}
	if o.ServerMemory > 0 {
		if err := capMemory(th.Group, srv, o.ServerMemory); err != nil {
			return e, err
		}
	}
	stopFollow := th.Group.Follow(ctx, srv.PIDs, 500*time.Millisecond)
	defer func() {
		if ferr := stopFollow(); ferr != nil && err == nil {
			err = ferr
		}
	}()
	if e.EngineInfo, err = engineInfo(ctx, srv, o.BufferPoolBytes); err != nil {
		return e, err
	}
	logf(o.Log, "%s: loading %d tables of %d rows (uncapped)", kind, o.Tables, o.TableSize)
	d, err := load(ctx, tg, &o.Common)
	if err != nil {
		return e, err
	}
	e.LoadSeconds = round2(d.Seconds())
	if err := settle(ctx, admin, o.Tables); err != nil {
		return e, err
	}
	if st, err := readTableState(ctx, admin, o.Tables); err == nil {
		e.DataBytes = st.tableBytes + st.indexBytes
	}
	extra, notLoaded, err := loadStepWorkloads(ctx, o, kind, tg)
	if err != nil {
		return e, err
	}
	for i, lim := range limits {
		st := Step{Limit: o.Limits[i], LimitBps: lim, Workload: "oltp_read_write"}
		logf(o.Log, "%s: bandwidth %s", kind, st.Limit)
		err := runStep(ctx, o, th, srv.Server, tg, e.PageSize, extra, &st)
		for name, why := range notLoaded {
			if st.Extra == nil {
				st.Extra = map[string]ExtraResult{}
			}
			st.Extra[name] = ExtraResult{Error: why}
		}
		if err != nil {
			st.Error = oneLine(err.Error())
		}
		e.Steps = append(e.Steps, st)
		if err != nil {
			return e, fmt.Errorf("at %s: %w", st.Limit, err)
		}
	}
	e.Knee = knee(e.Steps)
	return e, nil
}

// loadStepWorkloads loads the workloads timed at every step besides OLTP, uncapped. One that
// cannot be loaded (no TPC-H generator, say) is returned in notLoaded with the reason, reported
// at every step; the OLTP figures do not depend on it. Only a cancelled study is an error.
func loadStepWorkloads(ctx context.Context, o *BandwidthOptions, kind string, tg sqldb.Target) (loaded []StepWorkload, notLoaded map[string]string, err error) {
	notLoaded = map[string]string{}
	for _, w := range o.stepWorkloads() {
		logf(o.Log, "%s: loading %s (uncapped)", kind, w.Name())
		if err := w.Prepare(ctx, tg); err != nil {
			if ctx.Err() != nil {
				return nil, nil, err
			}
			logf(o.Log, "%s: %s not loaded: %v", kind, w.Name(), err)
			notLoaded[w.Name()] = "not loaded: " + oneLine(err.Error())
			continue
		}
		loaded = append(loaded, w)
	}
	return loaded, notLoaded, nil
}

// probeSize is about three seconds of I/O at the cap, within bounds that keep the probe short
// uncapped and meaningful at a trickle.
func probeSize(bps int64) int64 {
	if bps <= 0 {
		return 256 << 20
	}
	return min(max(3*bps, 16<<20), 256<<20)
}

func runStep(ctx context.Context, o *BandwidthOptions, th *throttle.Throttled, srv *engine.Server, tg sqldb.Target, pageSize int,
	extra []StepWorkload, st *Step) error {
	if err := th.Group.SetLimit(st.LimitBps, st.LimitBps); err != nil {
		return err
	}
	// Each step starts with only what the server keeps in its own memory: what the previous step
	// left in the OS page cache would otherwise be read at memory speed, past the cap.
	if err := th.Device.DropCache(); err != nil {
		return err
	}
	p, err := throttle.Probe(ctx, th.Group, th.Device, probeSize(st.LimitBps))
	if err != nil {
		return fmt.Errorf("probing the device: %w", err)
	}
	st.Probe = &p
	st.ProofOK = true
	st.Proof = fmt.Sprintf("O_DIRECT from inside the cgroup: write %s, read %s", mbps(p.WriteBps), mbps(p.ReadBps))
	if st.LimitBps > 0 {
		top := float64(st.LimitBps) * (1 + capSlack)
		st.ProofOK = p.WriteBps <= top && p.ReadBps <= top
		st.Proof += fmt.Sprintf(" against a cap of %s", mbps(float64(st.LimitBps)))
		if !st.ProofOK {
			return fmt.Errorf("the cap does not hold: %s (more than %.0f%% over)", st.Proof, capSlack*100)
		}
	}

	// The device is sampled over the measured window only, the one the server's figures cover:
	// the settle's flush before it writes what earlier steps left dirty.
	var dev *deviceRates
	startSampling := func() { dev = sampleDevice(th.Device.Stats, time.Second) }
	m, runErr := measureStudyStep(ctx, tg, &o.Common, st.Workload, srv.PIDs, stepOptions{dataDir: srv.DataDir, onStart: startSampling})
	dev.finish()
	if m != nil {
		fillStep(st, m, dev, pageSize)
		if f, err := writeRun(o.OutDir, fmt.Sprintf("%s bandwidth %s", tg.Kind, st.Limit), m.res); err == nil {
			st.ResultFile = f
		}
	}
	if runErr != nil {
		return runErr
	}
	for _, w := range extra {
		if st.Extra == nil {
			st.Extra = map[string]ExtraResult{}
		}
		st.Extra[w.Name()] = runExtra(ctx, th, tg, w)
	}
	return nil
}

// runExtra times one step workload from a cold page cache, with the device's read rate while it
// ran. Its failure is recorded, not fatal: OLTP's figure at this step stands on its own.
func runExtra(ctx context.Context, th *throttle.Throttled, tg sqldb.Target, w StepWorkload) ExtraResult {
	if err := th.Device.DropCache(); err != nil {
		return ExtraResult{Error: oneLine(err.Error())}
	}
	before, berr := th.Device.Stats()
	secs, err := w.Run(ctx, tg)
	r := ExtraResult{Seconds: round2(secs)}
	if after, aerr := th.Device.Stats(); berr == nil && aerr == nil {
		if d := after.At.Sub(before.At).Seconds(); d > 0 {
			r.DeviceReadBps = float64(after.ReadBytes-before.ReadBytes) / d
		}
	}
	if err != nil {
		r.Error = oneLine(err.Error())
	}
	return r
}

// deviceRates samples the device's counters every second on a goroutine of its own, so that a
// slow server query can never stretch or shift a window, and turns them into averages and peaks.
type deviceRates struct {
	mu      sync.Mutex
	samples []throttle.IOStats
	stop    chan struct{}
	done    chan struct{}
}

// sampleDevice starts sampling now; stop takes the last sample.
func sampleDevice(stats func() (throttle.IOStats, error), every time.Duration) *deviceRates {
	d := &deviceRates{stop: make(chan struct{}), done: make(chan struct{})}
	take := func() {
		if s, err := stats(); err == nil {
			d.add(s)
		}
	}
	take()
	go func() {
		defer close(d.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				take()
			case <-d.stop:
				take()
				return
			}
		}
	}()
	return d
}

// finish takes the last sample; nothing when sampling never started (a run that failed first).
func (d *deviceRates) finish() {
	if d == nil {
		return
	}
	close(d.stop)
	<-d.done
}

func (d *deviceRates) add(s throttle.IOStats) {
	d.mu.Lock()
	d.samples = append(d.samples, s)
	d.mu.Unlock()
}

// bytes is what the device read and wrote between the first sample and the last.
func (d *deviceRates) bytes() (read, written int64) {
	if d == nil {
		return 0, 0
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if n := len(d.samples); n >= 2 {
		first, last := d.samples[0], d.samples[n-1]
		return int64(last.ReadBytes - first.ReadBytes), int64(last.WriteBytes - first.WriteBytes)
	}
	return 0, 0
}

// peakWindow is the window of the reported peaks. The device counts an I/O when it completes:
// a hiccup of the disk under the loop device holds back a fraction of a second's completions and
// lets them land in the next second, so one-second windows swing by that much around what the
// throttle passed, while over five seconds the swing is a fifth of it.
const peakWindow = 5 * time.Second

// rates returns the averages over all samples and the peaks over the busiest window of at
// least peakWindow (or of the whole run, when it is shorter).
func (d *deviceRates) rates() (rAvg, wAvg, rPeak, wPeak float64) {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	n := len(d.samples)
	if n < 2 {
		return
	}
	rate := func(a, b throttle.IOStats) (float64, float64) {
		secs := b.At.Sub(a.At).Seconds()
		if secs <= 0 {
			return 0, 0
		}
		return float64(b.ReadBytes-a.ReadBytes) / secs, float64(b.WriteBytes-a.WriteBytes) / secs
	}
	rAvg, wAvg = rate(d.samples[0], d.samples[n-1])
	j := 0
	for i := 0; i < n; i++ {
		for j < n && d.samples[j].At.Sub(d.samples[i].At) < peakWindow {
			j++
		}
		if j == n {
			break
		}
		r, w := rate(d.samples[i], d.samples[j])
		rPeak, wPeak = math.Max(rPeak, r), math.Max(wPeak, w)
	}
	if rPeak == 0 && wPeak == 0 {
		rPeak, wPeak = rAvg, wAvg // a run shorter than the window
	}
	return
}

func fillStep(st *Step, m *measured, dev *deviceRates, pageSize int) {
	r := m.res
	st.Seconds = round2(r.DurationS)
	st.TPS, st.QPS = round2(r.TPS), round2(r.QPS)
	st.AvgMS, st.P95MS, st.P99MS = r.LatencyMS.Avg, r.LatencyMS.P95, r.LatencyMS.P99
	st.Errors = r.Errors
	st.DeviceReadBps, st.DeviceWriteBps, st.DeviceReadPeakBps, st.DeviceWritePeakBps = dev.rates()
	st.DeviceReadBytes, st.DeviceWriteBytes = dev.bytes()
	if st.LimitBps > 0 {
		top := float64(st.LimitBps) * (1 + capSlack)
		st.WithinCap = ptr(st.DeviceReadBps <= top && st.DeviceWriteBps <= top)
	}
	if m.srv == nil || r.DurationS <= 0 {
		return
	}
	req, rd := pagesRequested(m.srv.Counters)
	st.PagesRequestedPerSec = round2(float64(req) / r.DurationS)
	st.PagesRequestedPerSec4K = round2(to4K(float64(req)/r.DurationS, pageSize))
	st.PagesReadPerSec4K = round2(to4K(float64(rd)/r.DurationS, pageSize))
	st.ServerReadBps = float64(m.srv.DiskReadBytes) / r.DurationS
	st.ServerWriteBps = float64(m.srv.DiskWriteBytes) / r.DurationS
	st.ServerReadBytes, st.ServerWriteBytes, st.ServerDiskSource = m.srv.DiskReadBytes, m.srv.DiskWriteBytes, m.srv.DiskSource
}

// knee is the lowest cap at which the engine reached 90% of its throughput at the highest limit.
func knee(steps []Step) string {
	best := -1
	for i, s := range steps {
		if s.Error == "" && (best < 0 || effectiveBps(s, steps) > effectiveBps(steps[best], steps)) {
			best = i
		}
	}
	if best < 0 || steps[best].TPS <= 0 {
		return ""
	}
	top := steps[best].TPS
	var kneeStep *Step
	for i := range steps {
		s := &steps[i]
		if s.Error != "" || s.TPS < 0.9*top {
			continue
		}
		if kneeStep == nil || effectiveBps(*s, steps) < effectiveBps(*kneeStep, steps) {
			kneeStep = s
		}
	}
	if kneeStep == nil {
		return ""
	}
	return kneeStep.Limit
}

// effectiveBps places a step on the bandwidth axis: its cap, or for the uncapped step what the
// probe measured (and above every cap if that is unknown).
func effectiveBps(s Step, all []Step) float64 {
	if s.LimitBps > 0 {
		return float64(s.LimitBps)
	}
	if s.Probe != nil && s.Probe.WriteBps > 0 {
		v := math.Min(s.Probe.WriteBps, s.Probe.ReadBps)
		for _, o := range all {
			v = math.Max(v, float64(o.LimitBps)*1.01)
		}
		return v
	}
	var top float64
	for _, o := range all {
		top = math.Max(top, float64(o.LimitBps))
	}
	return math.Max(top*2, 1<<30)
}

// Crossovers compares every pair of engines over the limits both measured, in the order given.
func Crossovers(doc *Bandwidth) []Crossover {
	var out []Crossover
	for i := 0; i < len(doc.Engines); i++ {
		for j := i + 1; j < len(doc.Engines); j++ {
			if c, ok := crossover(&doc.Engines[i], &doc.Engines[j]); ok {
				out = append(out, c)
			}
		}
	}
	return out
}

func crossover(a, b *BandwidthEngine) (Crossover, bool) {
	na, nb := engineName(a.Kind), engineName(b.Kind)
	type pt struct {
		label string
		x     float64
		d     float64 // a's TPS minus b's
		ra    float64 // a's TPS over b's
	}
	var pts []pt
	bs := map[string]Step{}
	for _, s := range b.Steps {
		if s.Error == "" {
			bs[s.Limit] = s
		}
	}
	for _, s := range a.Steps {
		t, ok := bs[s.Limit]
		if !ok || s.Error != "" || t.TPS <= 0 {
			continue
		}
		x := math.Sqrt(effectiveBps(s, a.Steps) * effectiveBps(t, b.Steps)) // the same cap; uncapped: both probes
		pts = append(pts, pt{s.Limit, x, s.TPS - t.TPS, s.TPS / t.TPS})
	}
	c := Crossover{A: na, B: nb}
	if len(pts) == 0 {
		return c, false
	}
	for i := 0; i+1 < len(pts); i++ {
		p, q := pts[i], pts[i+1]
		if p.d == 0 || (p.d > 0) == (q.d > 0) {
			continue
		}
		t := p.d / (p.d - q.d)
		c.AtBps = math.Exp(math.Log(p.x) + t*(math.Log(q.x)-math.Log(p.x)))
		lo, hi := na, nb
		if p.d < 0 {
			lo, hi = nb, na
		}
		c.Statement = fmt.Sprintf("%s is faster below about %s and %s above it: the curves cross between %s and %s",
			lo, mbps(c.AtBps), hi, p.label, q.label)
		return c, true
	}
	for _, p := range pts {
		if p.d == 0 {
			c.AtBps = p.x
			c.Statement = fmt.Sprintf("%s and %s tie at %s", na, nb, p.label)
			return c, true
		}
	}
	lead, lag := na, nb
	lo, hi := pts[0].ra, pts[0].ra
	for _, p := range pts {
		lo, hi = math.Min(lo, p.ra), math.Max(hi, p.ra)
	}
	if pts[0].d < 0 {
		lead, lag = nb, na
		lo, hi = 1/hi, 1/lo
	}
	c.Statement = fmt.Sprintf("no crossover: %s is faster than %s at every limit measured (%s× to %s×)", lead, lag, num(lo), num(hi))
	return c, true
}

func bandwidthNotes(doc *Bandwidth) []string {
	notes := []string{
		"Each engine's data directory is on its own loop device (a sparse file formatted ext4), so the cap throttles the server and nothing else on the machine.",
	}
	switch doc.Mechanism {
	case throttle.CgroupV1:
		notes = append(notes, "Capped with cgroup v1 blkio.throttle on the root blkio cgroup for this one device: v1 has no cgroup writeback, so dirty pages are written back by kernel threads in the root cgroup, which a cap on a child cgroup would not slow. Server and writeback therefore share one cap per direction.")
	case throttle.CgroupV2:
		notes = append(notes, "Capped with cgroup v2 io.max on a cgroup of its own that holds every server process; writeback of the pages they dirty is charged to that cgroup (cgroup writeback).")
	}
	notes = append(notes,
		"Before every step the page cache of the device's files is dropped and a direct-I/O probe (dd with O_DIRECT, from inside the cgroup) shows the cap holds within 10%; a step whose probe exceeds that fails.",
		"Read and write are capped separately at the step's limit, so the device may move up to the limit in each direction at once.",
		"PostgreSQL reads its files through the OS page cache and InnoDB (O_DIRECT) does not: no cap limits that cache, so during a step PostgreSQL may read pages it has read before at memory speed. 'pages read/s' and the device read rate show how much really reached the device.",
	)
	return notes
}

func mbps(bps float64) string { return num(bps/1e6) + " MB/s" }

// capMemory caps the server's memory in the cgroup its processes are charged to: on cgroup v2 the
// throttle's group, which holds them now; on v1 the server's own memory cgroup (the throttle moved
// them in the blkio hierarchy only).
func capMemory(th *throttle.Group, srv *throwaway.Server, bytes int64) error {
	if th.Mechanism == throttle.CgroupV2 {
		return th.LimitMemory(bytes)
	}
	g, err := srv.Cgroup()
	if g == nil {
		return fmt.Errorf("the server has no cgroup of its own to cap its memory in: %v", err)
	}
	return g.LimitMemory(bytes)
}
