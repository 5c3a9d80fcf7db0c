package tpch

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fairbench/fairbench/internal/dialect"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/servermetrics"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/workload"
)

// Query statuses as result.TPCHQuery records them.
const (
	StatusOK      = "ok"
	StatusWrong   = "wrong"
	StatusTimeout = "timeout"
	StatusError   = "error"
)

// What TPCH.AnswersChecked says.
const (
	CheckedOfficial    = "official SF1 answers"
	CheckedCrossEngine = "cross-engine"
	CheckedNone        = "none"
)

// columnNames are the queries' result columns, for answer files and mismatch details (sqldb
// returns values only).
var columnNames = [numQueries + 1][]string{
	1:  {"l_returnflag", "l_linestatus", "sum_qty", "sum_base_price", "sum_disc_price", "sum_charge", "avg_qty", "avg_price", "avg_disc", "count_order"},
	2:  {"s_acctbal", "s_name", "n_name", "p_partkey", "p_mfgr", "s_address", "s_phone", "s_comment"},
	3:  {"l_orderkey", "revenue", "o_orderdate", "o_shippriority"},
	4:  {"o_orderpriority", "order_count"},
	5:  {"n_name", "revenue"},
	6:  {"revenue"},
	7:  {"supp_nation", "cust_nation", "l_year", "revenue"},
	8:  {"o_year", "mkt_share"},
	9:  {"nation", "o_year", "sum_profit"},
	10: {"c_custkey", "c_name", "revenue", "c_acctbal", "n_name", "c_address", "c_phone", "c_comment"},
	11: {"ps_partkey", "value"},
	12: {"l_shipmode", "high_line_count", "low_line_count"},
	13: {"c_count", "custdist"},
	14: {"promo_revenue"},
	15: {"s_suppkey", "s_name", "s_address", "s_phone", "total_revenue"},
	16: {"p_brand", "p_type", "p_size", "supplier_cnt"},
	17: {"avg_yearly"},
	18: {"c_name", "c_custkey", "o_orderkey", "o_orderdate", "o_totalprice", "sum_quantity"},
	19: {"revenue"},
	20: {"s_name", "s_address"},
	21: {"s_name", "numwait"},
	22: {"cntrycode", "numcust", "totacctbal"},
}

// watchdogGrace is how long past --query-timeout a query may run before fairbench cancels it
// itself: the server's own timeout should have fired by then (MySQL's max_execution_time does
// not cover Q15's CREATE VIEW, and a server may check its timer late).
const watchdogGrace = 5 * time.Second

// session is one connection that runs queries, with what it needs to have a running query
// cancelled from another connection (Ctrl-C, or the watchdog).
type session struct {
	env     *workload.Env
	conn    sqldb.Conn
	id      int64 // the server's session id: pg_backend_pid() / CONNECTION_ID()
	timeout time.Duration
}

func openSession(ctx context.Context, env *workload.Env, timeout time.Duration) (*session, error) {
	c, err := env.Connect(ctx)
	if err != nil {
		return nil, err
	}
	s := &session{env: env, conn: c, timeout: timeout}
	if s.id, err = dialect.SamplerFor(c.Kind()).SessionID(ctx, c); err != nil {
		c.Close()
		return nil, fmt.Errorf("reading the connection id: %v", err)
	}
	// Last: from here on every statement on this connection is subject to the timeout.
	if err := s.setTimeout(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return s, nil
}

// setTimeout asks the server to cancel statements that run longer than the timeout, in the
// first of the engine's ways that it takes.
func (s *session) setTimeout(ctx context.Context) error {
	var first error
	for _, q := range dialect.Of(s.conn).StatementTimeout(s.timeout) {
		err := s.conn.Exec(ctx, q)
		if err == nil {
			return nil
		}
		first = cmp.Or(first, err)
	}
	return fmt.Errorf("setting the query timeout: %v", first)
}

func (s *session) Close() error { return s.conn.Close() }

// cancelRunning cancels whatever this session's connection is running, from a new connection.
// Cancelling an idle connection does nothing on either engine.
func (s *session) cancelRunning() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := s.env.Connect(ctx)
	if err != nil {
		return
	}
	defer c.Close()
	_ = c.Exec(ctx, dialect.Of(c).CancelStatement(s.id))
}

// dropView removes Q15's view after a failed or interrupted run of it, from a new connection
// when the session's own is gone (the MySQL driver closes it when ctx ends mid-query), so the
// next run's CREATE VIEW does not find it there.
func (s *session) dropView(name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if s.conn.Exec(ctx, "DROP VIEW "+name) == nil {
		return
	}
	c, err := s.env.Connect(ctx)
	if err != nil {
		return
	}
	defer c.Close()
	_ = c.Exec(ctx, "DROP VIEW IF EXISTS "+name)
}

// outcome is one execution of one query.
type outcome struct {
	answer  Answer
	elapsed time.Duration
	status  string // ok (so far: the answer is checked afterwards), timeout or error
	detail  string
	// interrupted is true when ctx ended the query: the run stops.
	interrupted bool
}

// run executes a query's statements and times them together (Q15's view is created, queried and
// dropped within its time, as the specification has it).
func (s *session) run(ctx context.Context, q int, stmts []string) outcome {
	done := make(chan struct{})
	var fired sync.WaitGroup
	var timedOut bool
	fired.Add(1)
	go func() {
		defer fired.Done()
		t := time.NewTimer(s.timeout + watchdogGrace)
		defer t.Stop()
		select {
		case <-done:
			return
		case <-t.C:
			timedOut = true
		case <-ctx.Done():
		}
		s.cancelRunning()
	}()

	var out outcome
	var err error
	t0 := time.Now()
	viewMade := ""
	for _, st := range stmts {
		low := strings.ToLower(st)
		if strings.HasPrefix(low, "select") {
			var rows [][]string
			rows, err = s.conn.Query(ctx, st)
			out.answer = Answer{Columns: columnNames[q], Rows: rows}
		} else {
			err = s.conn.Exec(ctx, st)
			if err == nil && strings.HasPrefix(low, "create view") {
				viewMade = strings.Fields(st)[2]
			} else if strings.HasPrefix(low, "drop view") {
				viewMade = ""
			}
		}
		if err != nil {
			break
		}
	}
	out.elapsed = time.Since(t0)
	close(done)
	fired.Wait() // a cancel must not reach the next query
	if viewMade != "" {
		s.dropView(viewMade)
	}
	switch {
	case err == nil:
		out.status = StatusOK
		if n := len(columnNames[q]); len(out.answer.Rows) > 0 && len(out.answer.Rows[0]) != n {
			out.status, out.detail = StatusError, fmt.Sprintf("%d columns, expected %d", len(out.answer.Rows[0]), n)
		}
	case ctx.Err() != nil:
		out.status, out.interrupted, out.detail = StatusError, true, "interrupted"
	case timedOut || isTimeout(err):
		out.status, out.detail = StatusTimeout, fmt.Sprintf("cancelled after %s (--%s)", s.timeout, OptQueryTimeout)
	default:
		out.status, out.detail = StatusError, firstLine(err.Error())
	}
	return out
}

// plan is the plan of the query's SELECT with the same parameters (Q15's view made around it),
// or "" where EXPLAIN fails: a plan explains a time and never fails a run. It is taken after the
// timed run, so that neither its planning nor a subquery an engine runs while planning is timed.
func (s *session) plan(ctx context.Context, stmts []string) string {
	view := ""
	defer func() {
		if view != "" {
			s.dropView(view)
		}
	}()
	for _, st := range stmts {
		low := strings.ToLower(st)
		switch {
		case strings.HasPrefix(low, "create view"):
			if s.conn.Exec(ctx, st) != nil {
				return ""
			}
			view = strings.Fields(st)[2]
		case strings.HasPrefix(low, "select"):
			steps, err := dialect.Explain(ctx, s.conn, st)
			if err != nil {
				return ""
			}
			return dialect.PlanSummary(steps)
		}
	}
	return ""
}

// isTimeout recognizes the servers' own statement-timeout errors.
func isTimeout(err error) bool {
	switch sqldb.ErrorCode(err) {
	case "3024", "1969": // MySQL max_execution_time, MariaDB max_statement_time
		return true
	case "57014": // PostgreSQL query_canceled: by statement_timeout, or by the watchdog
		// The code is the same for both; only the server's message ("canceling statement due to
		// statement timeout" / "to user request") tells them apart.
		return strings.Contains(err.Error(), "statement timeout")
	}
	return false
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// checker compares answers with the reference of the run: the official SF 1 answers, or the
// answers the first engine gave on the same data and parameters.
type checker struct {
	mode     string
	official string // directory
	cache    string // directory
	out      string // directory for --answers-out, or ""
	seed     uint64
	who      string
	mu       sync.Mutex
	refs     map[int]Answer
}

func (w *tpch) newChecker(who string, log io.Writer) *checker {
	ck := &checker{mode: CheckedNone, out: w.cfg.answersOut, seed: w.cfg.seed, who: who, refs: map[int]Answer{}}
	if w.cfg.sf == 1 && w.cfg.seed == 0 {
		if dir := officialAnswersDir(w.cfg.answers); dir != "" {
			ck.mode, ck.official = CheckedOfficial, dir
			return ck
		}
		if log != nil {
			fmt.Fprintf(log, "tpch: the official SF 1 answers are not there (--%s): checking answers across engines instead\n", OptAnswers)
		}
	}
	dir, err := answersCacheDir(w.cfg.answersCache, w.cfg.sf, w.cfg.seed)
	if err != nil {
		if log != nil {
			fmt.Fprintf(log, "tpch: answers are not checked: %v\n", err)
		}
		return ck
	}
	ck.mode, ck.cache = CheckedCrossEngine, dir
	return ck
}

// check normalizes a and compares it; ok with an empty detail when it matches or when it is the
// first answer seen for that query.
func (ck *checker) check(q, stream int, a Answer) (bool, string, error) {
	a = Normalize(a)
	ck.mu.Lock()
	defer ck.mu.Unlock()
	if ck.out != "" {
		if err := WriteAnswer(filepath.Join(ck.out, answerFile(q, ck.seed, stream)), a); err != nil {
			return false, "", err
		}
	}
	switch ck.mode {
	case CheckedOfficial:
		ref, ok := ck.refs[q]
		if !ok {
			var err error
			if ref, err = ReadAnswer(filepath.Join(ck.official, fmt.Sprintf("q%d.out", q))); err != nil {
				return false, "", fmt.Errorf("reading the official answer of Q%d: %w", q, err)
			}
			ck.refs[q] = ref
		}
		ok, d := CompareAnswers(q, a, ref)
		if !ok {
			d += " (official answer " + filepath.Join(ck.official, fmt.Sprintf("q%d.out", q)) + ")"
		}
		return ok, d, nil
	case CheckedCrossEngine:
		return checkCached(ck.cache, answerFile(q, ck.seed, stream), q, a, ck.who)
	}
	return true, "", nil
}

// dropCaches empties the OS page cache so the query reads from disk whatever the engine's own
// buffer pool does not hold.
func dropCaches() error {
	syscall.Sync()
	return os.WriteFile("/proc/sys/vm/drop_caches", []byte("3"), 0)
}

// Measure runs the power or throughput test. The result keeps every query's status, also when
// the run fails; a wrong answer or a failed query fails the run with an error naming them.
func (w *tpch) Measure(ctx context.Context, env *workload.Env, run workload.RunSettings) (*result.Result, error) {
	progress := run.Progress
	if progress == nil {
		progress = io.Discard
	}
	connect := env.Connect
	if run.Monitor != nil {
		connect = run.Monitor
	}
	mc, err := connect(ctx)
	if err != nil {
		return nil, err
	}
	defer mc.Close()
	meta, err := readMeta(ctx, mc)
	if err != nil {
		return nil, err
	}
	if err := w.checkScale(meta); err != nil {
		return nil, err
	}
	if w.cfg.cold {
		if os.Geteuid() != 0 {
			return nil, fmt.Errorf("--%s on drops the OS page cache, which needs root", OptCold)
		}
		if run.PIDs == nil {
			fmt.Fprintf(progress, "tpch: --%s drops this machine's page cache; a remote server's is not touched\n", OptCold)
		}
	}
	ver, _ := sqldb.ServerVersion(ctx, mc)
	ck := w.newChecker(strings.TrimSpace(string(env.Kind)+" "+result.VersionNumber(ver)), env.Log)

	res := w.newResult(meta, ck)
	t := res.TPCH

	if w.cfg.warm {
		fmt.Fprintf(progress, "tpch: warm-up pass (not timed)\n")
		if err := w.warmUp(ctx, env); err != nil {
			res.Complete, res.Error = false, err.Error()
			return res, err
		}
	}

	window := newWindow(run)
	t0 := time.Now()
	var runErr error
	if w.cfg.throughput {
		t.Queries, runErr = w.throughputTest(ctx, env, ck, progress, window)
	} else {
		t.Queries, runErr = w.powerTest(ctx, env, mc, run, ck, progress, window)
	}
	window.close()
	res.DurationS = time.Since(t0).Seconds()

	bad := w.tally(res)
	res.Server = &result.Server{Local: run.PIDs != nil}
	if size, err := servermetrics.DataSize(context.WithoutCancel(ctx), mc); err == nil {
		res.Server.DataSizeBytes = size
	}

	if runErr == nil && len(bad) > 0 {
		runErr = fmt.Errorf("TPC-H answers not all right: %s", strings.Join(bad, "; "))
	}
	if runErr != nil {
		res.Complete, res.Error = false, runErr.Error()
	}
	return res, runErr
}

// window is the timed test's measured window for the server-side instruments: opened when its
// sessions are connected and about to run their first query, closed once, when the last query
// is done and before the throughput test's plans are taken (the power test takes each plan
// right after its query, inside the window: one EXPLAIN, no execution, per query).
type window struct {
	open, end func()
	opened    bool
	closed    bool
}

func newWindow(run workload.RunSettings) *window {
	return &window{open: run.OnMeasureStart, end: run.OnMeasureEnd}
}

func (w *window) start() {
	if !w.opened && w.open != nil {
		w.open()
	}
	w.opened = true
}

func (w *window) close() {
	if w.opened && !w.closed && w.end != nil {
		w.end()
	}
	w.closed = true
}

// newResult is the result a test fills: its mode and the load times Prepare recorded.
func (w *tpch) newResult(meta map[string]string, ck *checker) *result.Result {
	t := &result.TPCH{Mode: "power", ScaleFactor: w.cfg.sf, AnswersChecked: ck.mode, LoadSeconds: map[string]float64{}}
	for k, v := range meta {
		if name, ok := strings.CutPrefix(k, "load_s."); ok {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				t.LoadSeconds[name] = f
			}
		}
	}
	res := &result.Result{Complete: true, Threads: 1, TPCH: t}
	if w.cfg.throughput {
		t.Mode, t.Streams, res.Threads = "throughput", w.cfg.streams, w.cfg.streams
	}
	return res
}

// tally scores the queries run: the power test's geometric mean of the right answers' times or
// the throughput test's queries per hour, and the result's counts. It returns the queries
// answered wrongly or failed, one line each.
func (w *tpch) tally(res *result.Result) []string {
	t := res.TPCH
	var ok, failed int64
	var logSum float64
	var bad []string
	for _, q := range t.Queries {
		switch q.Status {
		case StatusOK:
			ok++
			logSum += math.Log(math.Max(q.Seconds, 1e-6))
		case StatusWrong, StatusError:
			failed++
			bad = append(bad, fmt.Sprintf("Q%d%s %s: %s", q.Query, streamSuffix(q.Stream), q.Status, q.Detail))
		default:
			failed++
		}
	}
	if ok > 0 && !w.cfg.throughput {
		t.GeoMeanS = math.Exp(logSum / float64(ok))
	}
	if w.cfg.throughput && res.DurationS > 0 {
		t.QueriesPerHour = float64(ok) * 3600 / res.DurationS
	}
	res.Transactions = ok
	res.Errors = failed
	res.Queries = result.Queries{Read: int64(len(t.Queries)), Total: int64(len(t.Queries))}
	if res.DurationS > 0 {
		res.TPS = float64(ok) / res.DurationS
		res.QPS = float64(len(t.Queries)) / res.DurationS
	}
	return bad
}

func streamSuffix(stream int) string {
	if stream == 0 {
		return ""
	}
	return fmt.Sprintf(" (stream %d)", stream)
}

// warmUp runs the selected queries once, untimed, to load caches the way a repeated workload
// would find them; answers are not checked (the timed pass checks them).
func (w *tpch) warmUp(ctx context.Context, env *workload.Env) error {
	s, err := openSession(ctx, env, w.cfg.timeout)
	if err != nil {
		return err
	}
	defer s.Close()
	for _, q := range w.cfg.queries {
		stmts, err := queryText(q, params(q, w.cfg.sf, w.cfg.seed, 0), 0)
		if err != nil {
			return err
		}
		if o := s.run(ctx, q, stmts); o.interrupted {
			return ctx.Err()
		}
	}
	return nil
}

// powerTest runs each selected query once, in order, on one connection, with the server's
// figures for each query alone: buffer reads and hits from the engine's counters, disk reads
// and CPU from the server's processes when fairbench started the server.
func (w *tpch) powerTest(ctx context.Context, env *workload.Env, mc sqldb.Conn, run workload.RunSettings, ck *checker, progress io.Writer,
	win *window) ([]result.TPCHQuery, error) {
	s, err := openSession(ctx, env, w.cfg.timeout)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	defer win.close() // before the session closes: MariaDB keeps a session's accounts only while it lives
	var sampler *servermetrics.ProcessSampler
	if run.PIDs != nil {
		sampler = servermetrics.NewProcessSampler(run.PIDs)
		_, _ = sampler.Sample() // the first sample holds the processes' whole lifetime
	}
	win.start()
	var out []result.TPCHQuery
	for _, q := range w.cfg.queries {
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
		stmts, err := queryText(q, params(q, w.cfg.sf, w.cfg.seed, 0), 0)
		if err != nil {
			return out, err
		}
		if w.cfg.cold {
			if err := dropCaches(); err != nil {
				return out, fmt.Errorf("dropping the page cache: %w", err)
			}
		}
		before, _ := servermetrics.Counters(ctx, mc)
		var s0 servermetrics.Sample
		if sampler != nil {
			s0, _ = sampler.Sample()
		}
		o := s.run(ctx, q, stmts)
		var s1 servermetrics.Sample
		if sampler != nil {
			s1, _ = sampler.Sample()
		}
		// The query's own buffer figures, visible before they are read.
		if q := dialect.Of(mc).PublishStatistics(); q != "" {
			_ = s.conn.Exec(context.WithoutCancel(ctx), q)
		}
		after, _ := servermetrics.Counters(context.WithoutCancel(ctx), mc)
		rec := w.record(q, 0, o, ck)
		if !o.interrupted {
			rec.Plan = s.plan(ctx, stmts)
		}
		if before != nil && after != nil {
			d := servermetrics.Delta(before, after)
			rec.BufferReads, rec.BufferHits = d[servermetrics.KeyBufferReads], d[servermetrics.KeyBufferHits]
		}
		if sampler != nil {
			rec.DiskReadBytes = s1.ReadBytes - s0.ReadBytes
			rec.ServerCPUS = (s1.CPUUser + s1.CPUSystem) - (s0.CPUUser + s0.CPUSystem)
		}
		out = append(out, rec)
		printQuery(progress, rec)
		if o.interrupted {
			return out, ctx.Err()
		}
	}
	return out, nil
}

// record turns an outcome into the result's figures, checking the answer of a query that ran.
func (w *tpch) record(q, stream int, o outcome, ck *checker) result.TPCHQuery {
	rec := result.TPCHQuery{Query: q, Stream: stream, Rows: int64(len(o.answer.Rows)), Status: o.status, Detail: o.detail}
	if o.status == StatusOK {
		ok, detail, err := ck.check(q, stream, o.answer)
		switch {
		case err != nil:
			rec.Status, rec.Detail = StatusError, "checking the answer: "+err.Error()
		case !ok:
			rec.Status, rec.Detail = StatusWrong, detail
		default:
			rec.Seconds = o.elapsed.Seconds()
		}
	}
	return rec
}

func printQuery(w io.Writer, r result.TPCHQuery) {
	stream := ""
	if r.Stream > 0 {
		stream = fmt.Sprintf("stream %d ", r.Stream)
	}
	if r.Status == StatusOK {
		fmt.Fprintf(w, "tpch: %sQ%-2d %9.3fs %7d rows  ok\n", stream, r.Query, r.Seconds, r.Rows)
		return
	}
	fmt.Fprintf(w, "tpch: %sQ%-2d %s: %s\n", stream, r.Query, r.Status, r.Detail)
}

// firstStreamPlans records the plan of each query stream 1 ran, after all streams are done:
// taken while they ran, a plan's planning would be timed in the other streams' queries.
func (w *tpch) firstStreamPlans(ctx context.Context, s *session, out []result.TPCHQuery) {
	for i := range out {
		if out[i].Stream != 1 {
			continue
		}
		if stmts, err := queryText(out[i].Query, params(out[i].Query, w.cfg.sf, w.cfg.seed, 1), 1); err == nil {
			out[i].Plan = s.plan(ctx, stmts)
		}
	}
}

// throughputTest runs the streams at once, each on its own connection in the specification's
// order for that stream (Appendix A), each with its own parameters when --seed is set. Per-query
// server figures are left out: concurrent queries share the counters.
func (w *tpch) throughputTest(ctx context.Context, env *workload.Env, ck *checker, progress io.Writer, win *window) ([]result.TPCHQuery, error) {
	sessions := make([]*session, w.cfg.streams)
	defer func() {
		win.close()
		for _, s := range sessions {
			if s != nil {
				s.Close()
			}
		}
	}()
	for i := range sessions {
		s, err := openSession(ctx, env, w.cfg.timeout)
		if err != nil {
			return nil, err
		}
		sessions[i] = s
	}
	win.start()
	var mu sync.Mutex
	var out []result.TPCHQuery
	errs := make([]error, len(sessions))
	var wg sync.WaitGroup
	for i, s := range sessions {
		stream := i + 1
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, q := range streamOrder(stream, w.cfg.queries) {
				if ctx.Err() != nil {
					return
				}
				stmts, err := queryText(q, params(q, w.cfg.sf, w.cfg.seed, stream), stream)
				if err != nil {
					errs[i] = err
					return
				}
				o := s.run(ctx, q, stmts)
				rec := w.record(q, stream, o, ck)
				mu.Lock()
				out = append(out, rec)
				printQuery(progress, rec)
				mu.Unlock()
				if o.interrupted {
					return
				}
			}
		}()
	}
	wg.Wait()
	win.close()
	// Each stream's queries in the order it ran them, stream after stream.
	sort.SliceStable(out, func(i, j int) bool { return out[i].Stream < out[j].Stream })
	if ctx.Err() != nil {
		return out, ctx.Err()
	}
	w.firstStreamPlans(ctx, sessions[0], out)
	return out, errors.Join(errs...)
}
