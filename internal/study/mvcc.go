package study

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/fairbench/fairbench/internal/dialect"
	"github.com/fairbench/fairbench/internal/engine"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/servermetrics"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/version"
)

// Phase keys, in the order a scenario runs them.
const (
	PhaseFresh             = "select-fresh"
	PhaseUpdate            = "update"
	PhaseSelectAfterUpdate = "select-after-update"
	PhaseVacuum            = "vacuum"
	PhaseSelectAfterVacuum = "select-after-vacuum"
)

var phaseLabels = map[string]string{
	PhaseFresh:             "SELECT, fresh data",
	PhaseUpdate:            "UPDATE",
	PhaseSelectAfterUpdate: "SELECT after updates",
	PhaseVacuum:            "VACUUM",
	PhaseSelectAfterVacuum: "SELECT after VACUUM",
}

// Scenario names.
const (
	ScenarioAutovacuumOff = "autovacuum off"
	ScenarioAutovacuumOn  = "autovacuum on"
	ScenarioPurge         = "purge on" // InnoDB's purge cannot be turned off; it is always this
)

// Config is what a study was asked to do.
type Config struct {
	Engines         []string `json:"engines"`
	StepSeconds     float64  `json:"step_s"` // one phase (mvcc) or one bandwidth step
	Threads         int      `json:"threads"`
	Tables          int      `json:"tables"`
	TableSize       int      `json:"table_size"`
	BufferPoolBytes int64    `json:"buffer_pool_bytes"`
	Seed            uint64   `json:"seed"`
	Limits          []string `json:"limits,omitempty"`       // bandwidth
	DeviceBytes     int64    `json:"device_bytes,omitempty"` // bandwidth
	// ServerMemoryBytes is the cap on the server's cgroup memory, page cache included (bandwidth
	// --server-memory); 0 for none.
	ServerMemoryBytes int64 `json:"server_memory_bytes,omitempty"`
}

func configOf(c *Common) Config {
	return Config{Engines: c.Engines, StepSeconds: c.Time.Seconds(), Threads: c.Threads, Tables: c.Tables,
		TableSize: c.TableSize, BufferPoolBytes: c.BufferPoolBytes, Seed: c.Seed}
}

// MVCC is the mvcc study's document (mvcc.json).
type MVCC struct {
	Study       string       `json:"study"` // "mvcc"
	Schema      int          `json:"schema"`
	ToolVersion string       `json:"tool_version"`
	StartedAt   time.Time    `json:"started_at"`
	FinishedAt  time.Time    `json:"finished_at"`
	Command     string       `json:"command,omitempty"`
	Complete    bool         `json:"complete"`
	Error       string       `json:"error,omitempty"`
	Config      Config       `json:"config"`
	Engines     []MVCCEngine `json:"engines"`
	// Effects state, from the numbers, what each MVCC design choice did in this run.
	Effects []Effect `json:"effects"`
	Notes   []string `json:"notes,omitempty"`
}

// MVCCEngine is one engine's scenarios.
type MVCCEngine struct {
	EngineInfo
	Scenarios []Scenario `json:"scenarios"`
}

// Scenario is one fresh data set taken through the phases.
type Scenario struct {
	Name        string  `json:"name"`
	Autovacuum  *bool   `json:"autovacuum,omitempty"` // PostgreSQL only
	LoadSeconds float64 `json:"load_s"`
	DataBytes   int64   `json:"data_bytes"` // tables and indexes after loading
	Phases      []Phase `json:"phases"`
}

// Phase is one measured step. Per-query figures divide by the phase's statements of its kind:
// SELECTs in a select phase, UPDATEs in an update phase. "4K" figures are in 4 KB pages, the
// others in the engine's own page (PageSize).
type Phase struct {
	Name    string  `json:"name"`
	Label   string  `json:"label"`
	Kind    string  `json:"kind"` // select | update | vacuum
	Seconds float64 `json:"seconds"`
	Queries int64   `json:"queries"`
	TPS     float64 `json:"tps,omitempty"`
	AvgMS   float64 `json:"latency_avg_ms,omitempty"`
	P95MS   float64 `json:"latency_p95_ms,omitempty"`
	Errors  int64   `json:"errors,omitempty"`

	PagesRequested           int64   `json:"pages_requested"` // buffer hits + reads
	PagesRead                int64   `json:"pages_read"`      // reads that missed the buffer pool
	PagesRequestedPerQuery   float64 `json:"pages_requested_per_query"`
	PagesReadPerQuery        float64 `json:"pages_read_per_query"`
	PagesRequestedPerQuery4K float64 `json:"pages_requested_per_query_4k"`
	PagesReadPerQuery4K      float64 `json:"pages_read_per_query_4k"`

	// Writes: WAL/redo and data pages from the engine's counters, disk bytes from /proc/PID/io.
	// Each phase ends with a checkpoint (PostgreSQL) or a flush of every dirty page (InnoDB)
	// that is counted in it, so data pages are charged to the phase that dirtied them.
	WALBytes                 int64   `json:"wal_bytes"`
	PagesWritten             int64   `json:"pages_written"`
	DiskReadBytes            int64   `json:"disk_read_bytes"`
	DiskWriteBytes           int64   `json:"disk_write_bytes"`
	WALBytesPerQuery         float64 `json:"wal_bytes_per_query"`
	DataBytesWrittenPerQuery float64 `json:"data_bytes_written_per_query"`
	BytesWrittenPerQuery     float64 `json:"bytes_written_per_query"` // WAL/redo + data pages
	DiskReadBytesPerQuery    float64 `json:"disk_read_bytes_per_query"`
	// DiskWriteBytesPerQuery is /proc/PID/io's write_bytes, charged when pages are dirtied, a
	// whole page-cache folio at a time: with large folios it overstates small writes many times.
	DiskWriteBytesPerQuery float64 `json:"disk_write_bytes_per_query"`

	TableBytesBefore int64 `json:"table_bytes_before"`
	TableBytesAfter  int64 `json:"table_bytes_after"`
	IndexBytesBefore int64 `json:"index_bytes_before"`
	IndexBytesAfter  int64 `json:"index_bytes_after"`

	// PostgreSQL, from pg_stat_user_tables.
	DeadTuplesBefore *int64   `json:"dead_tuples_before,omitempty"`
	DeadTuplesAfter  *int64   `json:"dead_tuples_after,omitempty"`
	Updates          *int64   `json:"updates,omitempty"`
	HOTUpdates       *int64   `json:"hot_updates,omitempty"`
	HOTRatio         *float64 `json:"hot_ratio,omitempty"`
	AutovacuumRuns   *int64   `json:"autovacuum_runs,omitempty"`

	// InnoDB: undo records not purged yet, at the start, the end and the highest seen (sampled
	// every second).
	HistoryListStart *int64 `json:"history_list_start,omitempty"`
	HistoryListEnd   *int64 `json:"history_list_end,omitempty"`
	HistoryListMax   *int64 `json:"history_list_max,omitempty"`

	Counters   map[string]int64 `json:"counters,omitempty"`
	ResultFile string           `json:"result_file,omitempty"`
	Error      string           `json:"error,omitempty"`
}

// Effect is one measured consequence of a design choice, stated in words from the numbers.
type Effect struct {
	Engine    string   `json:"engine"`
	Scenario  string   `json:"scenario,omitempty"`
	Design    string   `json:"design"`
	Statement string   `json:"statement"`
	Before    *float64 `json:"before,omitempty"`
	After     *float64 `json:"after,omitempty"`
	Unit      string   `json:"unit,omitempty"`
}

// Scenario returns the named scenario, nil if absent.
func (e *MVCCEngine) Scenario(name string) *Scenario {
	for i := range e.Scenarios {
		if e.Scenarios[i].Name == name {
			return &e.Scenarios[i]
		}
	}
	return nil
}

// Phase returns the named phase, nil if absent.
func (s *Scenario) Phase(name string) *Phase {
	if s == nil {
		return nil
	}
	for i := range s.Phases {
		if s.Phases[i].Name == name {
			return &s.Phases[i]
		}
	}
	return nil
}

// RunMVCC runs the mvcc study and writes mvcc.json, report.md and report.html to c.OutDir;
// what was measured is written also when it fails part-way.
func RunMVCC(ctx context.Context, c Common) (*MVCC, error) {
	if err := c.defaults(); err != nil {
		return nil, err
	}
	if err := mkOut(c.OutDir); err != nil {
		return nil, err
	}
	doc := &MVCC{Study: "mvcc", Schema: SchemaVersion, ToolVersion: version.Version, StartedAt: time.Now().UTC(),
		Command: c.Command, Config: configOf(&c)}
	var errs []error
	for _, kind := range c.Engines {
		e, err := runMVCCEngine(ctx, &c, kind)
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
	doc.Effects = MVCCEffects(doc)
	doc.Complete = len(errs) == 0
	err := errors.Join(errs...)
	if err != nil {
		doc.Error = oneLine(err.Error())
	}
	md, html, rerr := RenderMVCC(doc)
	if rerr == nil {
		rerr = writeOut(c.OutDir, "mvcc.json", doc, md, html)
	}
	return doc, errors.Join(err, rerr)
}

func runMVCCEngine(ctx context.Context, c *Common, kind string) (*MVCCEngine, error) {
	e := &MVCCEngine{EngineInfo: EngineInfo{Kind: kind, BufferPoolBytes: c.BufferPoolBytes}}
	logf(c.Log, "%s: starting a server with a %d MiB buffer pool", kind, c.BufferPoolBytes>>20)
	srv, err := startServer(ctx, c, kind, c.WorkDir)
	if err != nil {
		return e, err
	}
	defer srv.Close()
	tg, admin := srv.Target, srv.Conn
	if e.EngineInfo, err = engineInfo(ctx, srv, c.BufferPoolBytes); err != nil {
		return e, err
	}
	type spec struct {
		name string
		av   *bool
	}
	specs := []spec{{name: ScenarioPurge}}
	if dialect.For(srv.Target.Kind).Caps().OldVersionsInTable {
		// Where old versions stay in the table, a background cleaner (autovacuum) removes them:
		// the study runs with it off and on.
		off, on := false, true
		specs = []spec{{ScenarioAutovacuumOff, &off}, {ScenarioAutovacuumOn, &on}}
	}
	for _, sp := range specs {
		sc := Scenario{Name: sp.name, Autovacuum: sp.av}
		err := runScenario(ctx, c, srv.Server, tg, admin, e.PageSize, &sc)
		e.Scenarios = append(e.Scenarios, sc)
		if err != nil {
			return e, fmt.Errorf("%s: %w", sp.name, err)
		}
	}
	return e, nil
}

func runScenario(ctx context.Context, c *Common, srv *engine.Server, tg sqldb.Target, admin sqldb.Conn, pageSize int, sc *Scenario) error {
	// Only where old row versions stay in the table does a VACUUM phase have something to show.
	vacuums := dialect.For(tg.Kind).Caps().OldVersionsInTable
	if sc.Autovacuum != nil {
		if err := dialect.Of(admin).SetBackgroundCleanup(ctx, admin, *sc.Autovacuum); err != nil {
			return err
		}
	}
	logf(c.Log, "%s, %s: loading %d tables of %d rows", tg.Kind, sc.Name, c.Tables, c.TableSize)
	d, err := load(ctx, tg, c)
	if err != nil {
		return err
	}
	sc.LoadSeconds = round2(d.Seconds())
	// Every scenario starts from the same clean state: statistics current, no dead versions, no
	// dirty pages from the load to be written during the first phase.
	if err := settle(ctx, admin, c.Tables); err != nil {
		return err
	}
	st, err := readTableState(ctx, admin, c.Tables)
	if err != nil {
		return err
	}
	sc.DataBytes = st.tableBytes + st.indexBytes

	phases := []struct{ key, kind, workload string }{
		{PhaseFresh, "select", "oltp_point_select"},
		{PhaseUpdate, "update", "oltp_update_non_index"},
		{PhaseSelectAfterUpdate, "select", "oltp_point_select"},
	}
	if vacuums {
		phases = append(phases,
			struct{ key, kind, workload string }{PhaseVacuum, "vacuum", ""},
			struct{ key, kind, workload string }{PhaseSelectAfterVacuum, "select", "oltp_point_select"})
	}
	for _, ph := range phases {
		logf(c.Log, "%s, %s: %s", tg.Kind, sc.Name, phaseLabels[ph.key])
		var p Phase
		var err error
		for attempt := 1; ; attempt++ {
			p = Phase{Name: ph.key, Label: phaseLabels[ph.key], Kind: ph.kind}
			err = runPhase(ctx, c, srv, tg, admin, pageSize, sc.Name, ph.workload, &p)
			if err != nil || !measureAgain(&p, attempt) {
				break
			}
			logf(c.Log, "%s, %s: %s measured again: %s", tg.Kind, sc.Name, phaseLabels[ph.key], p.Error)
		}
		if err != nil {
			p.Error = oneLine(err.Error())
		}
		sc.Phases = append(sc.Phases, p)
		if err != nil {
			return fmt.Errorf("%s: %w", p.Label, err)
		}
	}
	return nil
}

func tableNames(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = "sbtest" + strconv.Itoa(i+1)
	}
	return out
}

// settle brings freshly loaded tables to a clean state: PostgreSQL vacuums (setting hint bits
// and the visibility map, which the first reader would otherwise do, writing) and analyzes;
// InnoDB analyzes; both write every dirty page out.
func settle(ctx context.Context, c sqldb.Conn, tables int) error {
	d := dialect.Of(c)
	for _, t := range tableNames(tables) {
		if err := d.Maintain(ctx, c, t); err != nil {
			return fmt.Errorf("settling %s: %w", t, err)
		}
	}
	return flush(ctx, c)
}

// flush writes every dirty data page to disk now, as before every measured step (the dialect's
// Flush): a phase's page writes are then its own.
func flush(ctx context.Context, c sqldb.Conn) error {
	_, err := dialect.Of(c).Flush(ctx, c)
	return err
}

// tableState is what the sbtest tables look like between phases.
type tableState struct {
	tableBytes, indexBytes int64
	// PostgreSQL
	updates, hotUpdates, deadTuples, autovacuums int64
	// InnoDB
	historyList int64
	hasHistory  bool
}

// readTableState reads the sbtest tables' sizes and where each engine keeps the old row
// versions an update leaves: PostgreSQL's dead tuples and update counts per table, InnoDB's
// history list server-wide.
func readTableState(ctx context.Context, c sqldb.Conn, tables int) (tableState, error) {
	var st tableState
	d := dialect.Of(c)
	if !d.Caps().OldVersionsInTable {
		// The sizes come from the persistent statistics: refresh them.
		for _, t := range tableNames(tables) {
			if err := d.Maintain(ctx, c, t); err != nil {
				return st, err
			}
		}
	}
	var err error
	if st.tableBytes, st.indexBytes, err = d.TableSizes(ctx, c, "sbtest%"); err != nil {
		return st, err
	}
	if !d.Caps().OldVersionsInTable {
		if cs, err := servermetrics.Counters(ctx, c); err == nil {
			st.historyList, st.hasHistory = cs[servermetrics.KeyHistoryListLength]
		}
		return st, nil
	}
	v, err := d.TableVersions(ctx, c, "sbtest%")
	if err != nil {
		return st, err
	}
	st.updates, st.hotUpdates, st.deadTuples, st.autovacuums = v.Updates, v.InPlaceUpdates, v.OldVersions, v.CleanerRuns
	return st, nil
}

// measureAgain says whether a phase that ran is measured once more: a select phase whose window
// got no page counters (the server answered their first read too late, on a loaded machine) has
// nothing for the study. Only on tables in a steady state, fresh or just vacuumed: after updates
// the first pass's reads already clean up dead versions (PostgreSQL prunes pages and marks dead
// index entries as it reads), so a second would measure tidier tables than the phase stands for;
// an update or VACUUM phase changed the tables itself.
func measureAgain(p *Phase, attempt int) bool {
	steady := p.Name == PhaseFresh || p.Name == PhaseSelectAfterVacuum
	return attempt == 1 && steady && p.Kind == "select" && p.Error != "" && p.Queries > 0
}

func runPhase(ctx context.Context, c *Common, srv *engine.Server, tg sqldb.Target, admin sqldb.Conn, pageSize int,
	scenario, workloadName string, p *Phase) error {
	before, err := readTableState(ctx, admin, c.Tables)
	if err != nil {
		return err
	}
	hist := historyTracker{}
	if before.hasHistory {
		hist.add(before.historyList)
	}

	var m *measured
	if p.Kind == "vacuum" {
		m, err = runVacuum(ctx, tg, c.Tables, srv.PIDs)
	} else {
		var onInterval func(*result.Interval)
		if before.hasHistory {
			hconn, err := sqldb.Open(ctx, tg)
			if err != nil {
				return err
			}
			defer hconn.Close()
			onInterval = func(*result.Interval) {
				if cs, err := servermetrics.Counters(ctx, hconn); err == nil {
					if v, ok := cs[servermetrics.KeyHistoryListLength]; ok {
						hist.add(v)
					}
				}
			}
		}
		m, err = measureStudyStep(ctx, tg, c, workloadName, srv.PIDs, stepOptions{onInterval: onInterval, after: flush})
	}
	if m != nil {
		fillPhase(p, m, pageSize)
		if f, werr := writeRun(c.OutDir, fmt.Sprintf("%s %s %s", tg.Kind, scenario, p.Name), m.res); werr == nil {
			p.ResultFile = f
		}
	}
	if err != nil {
		return err
	}
	after, err := readTableState(ctx, admin, c.Tables)
	if err != nil {
		return err
	}
	if after.hasHistory {
		hist.add(after.historyList)
	}
	p.TableBytesBefore, p.TableBytesAfter = before.tableBytes, after.tableBytes
	p.IndexBytesBefore, p.IndexBytesAfter = before.indexBytes, after.indexBytes
	if !dialect.For(tg.Kind).Caps().OldVersionsInTable {
		if hist.n > 0 {
			p.HistoryListStart, p.HistoryListEnd, p.HistoryListMax = ptr(hist.first), ptr(hist.last), ptr(hist.max)
		}
		return nil
	}
	p.DeadTuplesBefore, p.DeadTuplesAfter = ptr(before.deadTuples), ptr(after.deadTuples)
	upd, hot := after.updates-before.updates, after.hotUpdates-before.hotUpdates
	p.Updates, p.HOTUpdates = ptr(upd), ptr(hot)
	if upd > 0 {
		p.HOTRatio = ptr(float64(hot) / float64(upd))
	}
	p.AutovacuumRuns = ptr(after.autovacuums - before.autovacuums)
	return nil
}

type historyTracker struct {
	n                int
	first, last, max int64
}

func (h *historyTracker) add(v int64) {
	if h.n == 0 {
		h.first, h.max = v, v
	}
	h.n++
	h.last = v
	h.max = max(h.max, v)
}

// runVacuum vacuums every table in turn, on a connection of its own that is closed before the
// counters are read (PostgreSQL publishes a backend's statistics when it exits).
func runVacuum(ctx context.Context, tg sqldb.Target, tables int, pids func() []int) (*measured, error) {
	mconn, err := sqldb.Open(ctx, tg)
	if err != nil {
		return nil, err
	}
	defer mconn.Close()
	mon := servermetrics.NewMonitor(mconn, pids)
	if err := mon.Start(ctx); err != nil {
		return nil, err
	}
	vconn, err := sqldb.Open(ctx, tg)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	var verr error
	for _, t := range tableNames(tables) {
		if verr = dialect.Of(vconn).RemoveOldVersions(ctx, vconn, t); verr != nil {
			verr = fmt.Errorf("VACUUM %s: %w", t, verr)
			break
		}
	}
	secs := time.Since(start).Seconds()
	vconn.Close()
	if verr == nil {
		verr = flush(ctx, mconn)
	}
	srvm, ferr := mon.Finish(ctx, 0)
	res := &result.Result{Schema: result.SchemaVersion, ToolVersion: version.Version, Complete: verr == nil,
		StartedAt: start.UTC(), Engine: result.Engine{Kind: string(tg.Kind), Target: tg.Redacted()},
		Workload:  result.Workload{Name: "vacuum", Options: map[string]string{"tables": strconv.Itoa(tables)}},
		DurationS: round2(secs), Server: srvm}
	if verr != nil {
		res.Error = verr.Error()
	}
	return &measured{res: res, srv: srvm}, errors.Join(verr, ferr)
}

func fillPhase(p *Phase, m *measured, pageSize int) {
	r := m.res
	p.Seconds = round2(r.DurationS)
	p.TPS = round2(r.TPS)
	p.AvgMS, p.P95MS = r.LatencyMS.Avg, r.LatencyMS.P95
	p.Errors = r.Errors
	switch p.Kind {
	case "select":
		p.Queries = r.Queries.Read
	case "update":
		p.Queries = r.Queries.Write
	}
	if m.srv == nil {
		return
	}
	cs := m.srv.Counters
	p.Counters = cs
	if _, ok := cs[servermetrics.KeyBufferHits]; !ok && p.Queries > 0 {
		// Without the engine's counters over the window (read too late on a loaded machine, and
		// so not given: m.srv.NotAvailable), every page figure would read as zero, and the
		// effects would claim a cut of 100%. The phase says why it has none instead, and
		// measuredQ keeps it out of every effect.
		p.Error = "no page counters over the window: " + strings.Join(m.srv.NotAvailable, "; ")
		return
	}
	p.PagesRequested, p.PagesRead = pagesRequested(cs)
	p.WALBytes = cs[servermetrics.KeyWALBytes]
	p.PagesWritten = cs[servermetrics.KeyPagesWritten]
	p.DiskReadBytes, p.DiskWriteBytes = m.srv.DiskReadBytes, m.srv.DiskWriteBytes
	if p.Queries == 0 {
		return
	}
	q := p.Queries
	p.PagesRequestedPerQuery = round4(perQuery(p.PagesRequested, q))
	p.PagesReadPerQuery = round4(perQuery(p.PagesRead, q))
	p.PagesRequestedPerQuery4K = round4(to4K(perQuery(p.PagesRequested, q), pageSize))
	p.PagesReadPerQuery4K = round4(to4K(perQuery(p.PagesRead, q), pageSize))
	data := p.PagesWritten * int64(pageSize)
	p.WALBytesPerQuery = round2(perQuery(p.WALBytes, q))
	p.DataBytesWrittenPerQuery = round2(perQuery(data, q))
	p.BytesWrittenPerQuery = round2(perQuery(p.WALBytes+data, q))
	p.DiskReadBytesPerQuery = round2(perQuery(p.DiskReadBytes, q))
	p.DiskWriteBytesPerQuery = round2(perQuery(p.DiskWriteBytes, q))
}

func ptr[T any](v T) *T { return &v }

func round2(x float64) float64 { return float64(int64(x*100+0.5*sign(x))) / 100 }
func round4(x float64) float64 { return float64(int64(x*10000+0.5*sign(x))) / 10000 }

func sign(x float64) float64 {
	if x < 0 {
		return -1
	}
	return 1
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(strings.TrimSpace(s), "\n", " ")), " ")
}
