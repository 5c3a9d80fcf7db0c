// Package study runs fairbench's built-in studies: fixed experiments that explain a difference
// between engines rather than just measure it. "mvcc" measures what each engine's multiversion
// design costs per query (pages requested per SELECT and per UPDATE, with PostgreSQL's vacuum on
// and off, before and after a VACUUM); "bandwidth" measures throughput with the data directory
// on a device whose bandwidth is capped, from a trickle up to the device's maximum.
//
// Each study starts its own servers (engine.Start) with a small buffer pool, so that the data is
// larger than the cache on any machine, writes one JSON document of its own (result.WriteJSON)
// plus the raw run results, and renders report.md and report.html from that document alone.
package study

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/fairbench/fairbench/internal/dialect"
	"github.com/fairbench/fairbench/internal/engine/discovery"
	"github.com/fairbench/fairbench/internal/engine/profile"
	"github.com/fairbench/fairbench/internal/job"
	"github.com/fairbench/fairbench/internal/randgen"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/runner"
	"github.com/fairbench/fairbench/internal/runspec"
	"github.com/fairbench/fairbench/internal/servermetrics"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/throwaway"
	_ "github.com/fairbench/fairbench/internal/workload/oltp" // the studies run sysbench's OLTP workloads
)

// SchemaVersion of the study documents; it changes only when a field changes meaning.
const SchemaVersion = 1

// DefaultBufferPool is small on purpose: the data must not fit in it, and a small pool lets a
// data set three times its size load in seconds.
const DefaultBufferPool = 64 << 20

// studyRedo keeps checkpoints out of short phases without making MariaDB create a 1 GiB redo
// file (or the bandwidth study's device hold one).
const studyRedo = 256 << 20

// bytesPerRow is about what an sbtest row costs with its share of both indexes, on either
// engine; it only sizes the default data set.
const bytesPerRow = 250

// Common are the settings both studies share.
type Common struct {
	Engines   []string
	MySQLRoot string
	// Installs are the installations chosen with --engines, by kind; a kind not in it runs its
	// newest installed version.
	Installs        map[string]discovery.Installation
	WorkDir         string // where servers' data directories go (mvcc) or the device's backing file (bandwidth)
	Time            time.Duration
	Threads         int
	Tables          int
	TableSize       int // 0 = sized to DataFactor × the buffer pool
	BufferPoolBytes int64
	OutDir          string
	Seed            uint64
	Command         string    // the command line, for the report
	Log             io.Writer // progress lines; nil = silent
	// WaitEvery is the wait sampling's period over each measured step (where the time went, and
	// the evidence of a stall); 0 is off.
	WaitEvery time.Duration
}

// DataFactor is how many times the buffer pool the default data set is.
const DataFactor = 3

// The studies' run defaults are runspec's (with the other run settings); DefaultTables is a
// study's data set, not a run setting.
const (
	DefaultTime    = runspec.DefaultStudyTime
	DefaultThreads = runspec.DefaultStudyThreads
	DefaultTables  = 4
)

func (c *Common) defaults() error {
	if len(c.Engines) == 0 {
		c.Engines = []string{discovery.Postgres, discovery.MariaDB}
	}
	if c.Time <= 0 {
		c.Time = DefaultTime
	}
	if c.Threads <= 0 {
		c.Threads = DefaultThreads
	}
	if c.Tables <= 0 {
		c.Tables = DefaultTables
	}
	if c.BufferPoolBytes <= 0 {
		c.BufferPoolBytes = DefaultBufferPool
	}
	if c.BufferPoolBytes < 32<<20 || c.BufferPoolBytes%(1<<20) != 0 {
		return fmt.Errorf("buffer pool %d bytes: use whole MiB, at least 32M", c.BufferPoolBytes)
	}
	if c.TableSize <= 0 {
		c.TableSize = DefaultTableSize(c.BufferPoolBytes, c.Tables)
	}
	if c.Seed == 0 {
		c.Seed = uint64(time.Now().UnixNano())
	}
	if c.OutDir == "" {
		return errors.New("no output directory")
	}
	return nil
}

// DefaultTableSize sizes tables so the data is DataFactor times the buffer pool, in whole
// thousands of rows.
func DefaultTableSize(bufferPool int64, tables int) int {
	rows := DataFactor * bufferPool / bytesPerRow / int64(max(tables, 1))
	return int((rows + 999) / 1000 * 1000)
}

// EngineInfo identifies a server a study ran on.
type EngineInfo struct {
	Kind            string            `json:"kind"`
	Version         string            `json:"version"`
	PageSize        int               `json:"page_size"` // bytes per page in the engine's own unit
	BufferPoolBytes int64             `json:"buffer_pool_bytes"`
	Settings        map[string]string `json:"settings,omitempty"`
	Error           string            `json:"error,omitempty"` // why this engine's part is incomplete
}

func logf(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, format+"\n", args...)
	}
}

// startServer starts one of the study's throwaway servers: the study's own small buffer pool and
// redo, its data directory under workDir.
func startServer(ctx context.Context, c *Common, kind, workDir string) (*throwaway.Server, error) {
	inst, ok := c.Installs[kind]
	if !ok {
		var err error
		if inst, err = discovery.Find(kind, c.MySQLRoot); err != nil {
			return nil, err
		}
	}
	return throwaway.Start(ctx, inst, profile.Profile{BufferPoolBytes: c.BufferPoolBytes, RedoBytes: studyRedo}, workDir)
}

// engineInfo asks the server its page size; version and settings come with the server.
func engineInfo(ctx context.Context, srv *throwaway.Server, bufferPool int64) (EngineInfo, error) {
	info := EngineInfo{Kind: srv.Kind, Version: srv.Version, BufferPoolBytes: bufferPool, Settings: srv.Settings}
	rows, err := srv.Conn.Query(ctx, dialect.Of(srv.Conn).PageSizeQuery())
	if err != nil || len(rows) != 1 {
		return info, fmt.Errorf("reading the page size: %v", err)
	}
	if info.PageSize, err = strconv.Atoi(rows[0][0]); err != nil {
		return info, fmt.Errorf("page size %q: %w", rows[0][0], err)
	}
	return info, nil
}

// newJob binds an oltp workload to the study's tables.
func newJob(tg sqldb.Target, c *Common, workloadName string) (*job.Job, error) {
	opts := map[string]string{"tables": strconv.Itoa(c.Tables), "table-size": strconv.Itoa(c.TableSize)}
	return job.New(tg, workloadName, opts, randgen.DefaultConfig("uniform"), c.Seed)
}

// load (re)creates the sbtest tables with fresh data.
func load(ctx context.Context, tg sqldb.Target, c *Common) (time.Duration, error) {
	j, err := newJob(tg, c, "oltp_point_select")
	if err != nil {
		return 0, err
	}
	start := time.Now()
	if err := j.Prepare(ctx, j.Env(2, true, nil, c.Log)); err != nil {
		return 0, fmt.Errorf("loading %d×%d rows: %w", c.Tables, c.TableSize, err)
	}
	return time.Since(start), nil
}

// measured is one workload run with the server's side of it.
type measured struct {
	res *result.Result
	srv *result.Server
}

// stepOptions are what a study adds to a measured step.
type stepOptions struct {
	// dataDir is the server's data directory: on a loop device of the server's own (the bandwidth
	// study) the disk figures then come from the device's counters.
	dataDir string
	// onInterval is called every report interval, after the monitor's reading.
	onInterval func(*result.Interval)
	// onStart is called when the measured window opens (the monitor's baseline is taken then).
	onStart func()
	// after, when set, runs once the clients are done and before the closing counters are read,
	// so that work the run caused but the engine defers (writing dirty pages) is counted in it.
	after func(context.Context, sqldb.Conn) error
}

// measureStudyStep runs a workload for the study's time with a server monitor around it.
func measureStudyStep(ctx context.Context, tg sqldb.Target, c *Common, workloadName string, pids func() []int, o stepOptions) (*measured, error) {
	j, err := newJob(tg, c, workloadName)
	if err != nil {
		return nil, err
	}
	j.PIDs, j.WaitEvery = pids, c.WaitEvery
	mconn, err := sqldb.Open(ctx, tg)
	if err != nil {
		return nil, err
	}
	defer mconn.Close()
	mon := servermetrics.NewMonitor(mconn, pids)
	if o.dataDir != "" {
		mon = mon.WithDataDir(o.dataDir)
	}
	cfg := runner.Config{Threads: c.Threads, Duration: c.Time, MaxTries: runspec.DefaultMaxTries, ReportInterval: runspec.DefaultReportInterval,
		Observers: []runner.Observer{runner.Hooks{OnInterval: o.onInterval, OnMeasureStart: o.onStart}}}
	clients := func(ctx context.Context, cfg runner.Config) (*result.Result, error) {
		res, err := j.Run(ctx, cfg)
		if res != nil && err == nil && o.after != nil {
			err = o.after(ctx, mconn)
		}
		return res, err
	}
	res, err := j.Measured(ctx, cfg, mon, clients)
	if res == nil {
		return nil, err
	}
	return &measured{res: res, srv: res.Server}, err
}

// writeRun stores a raw run result under out/runs, for whoever wants more than the study shows.
func writeRun(out, name string, r *result.Result) (string, error) {
	rel := filepath.Join("runs", slug(name)+".json")
	if err := result.Write(filepath.Join(out, rel), r); err != nil {
		return "", err
	}
	return rel, nil
}

func slug(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			if b.Len() > 0 && !strings.HasSuffix(b.String(), "-") {
				b.WriteByte('-')
			}
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}

// pagesRequested is buffer hits plus misses: every page access the engine made, whether the page
// was cached or not.
func pagesRequested(counters map[string]int64) (requested, read int64) {
	return counters[servermetrics.KeyBufferHits] + counters[servermetrics.KeyBufferReads], counters[servermetrics.KeyBufferReads]
}

// to4K converts a count of the engine's pages to 4 KB pages.
func to4K(pages float64, pageSize int) float64 { return pages * float64(pageSize) / 4096 }

func perQuery(n int64, queries int64) float64 {
	if queries <= 0 {
		return 0
	}
	return float64(n) / float64(queries)
}

// writeOut stores the study document and renders its reports.
func writeOut(out, docName string, doc any, md, html []byte) error {
	if err := result.WriteJSON(filepath.Join(out, docName), doc); err != nil {
		return err
	}
	if err := result.WriteFileAtomic(filepath.Join(out, "report.md"), md); err != nil {
		return err
	}
	return result.WriteFileAtomic(filepath.Join(out, "report.html"), html)
}

// mkOut makes the output directory.
func mkOut(out string) error { return os.MkdirAll(out, 0o755) }
