package tpch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fairbench/fairbench/internal/dialect"
	"github.com/fairbench/fairbench/internal/randgen"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/servermetrics"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/workload"
)

// The power and throughput tests run through the runner like every workload (workload.FixedList):
// one client per stream, each running its list of queries once; the runner times each query (a
// transaction of kind Qn) and says when the window opens and closes. What is TPC-H's own stays
// here: the queries' text and parameters, the watchdog, the answers' check, each query's plan and
// server figures, taken in the worker's pauses so that they are never part of a query's time.

// test is one power or throughput test, from Begin to End: what its workers share.
type test struct {
	env      *workload.Env
	progress io.Writer
	meta     map[string]string
	ck       *checker
	// monitor reads the server's counters around each query of the power test and its data's
	// size; it is not a client, so the wait sampler does not follow it.
	monitor sqldb.Conn
	// sampler reads the server's processes around each query of the power test when fairbench
	// started the server; nil otherwise.
	sampler *servermetrics.ProcessSampler
	// interrupt is Begin's context: Ctrl-C ends it.
	interrupt context.Context

	mu      sync.Mutex
	done    []result.TPCHQuery // in the order the runner timed them
	workers []*stream
}

// errNotBegun is NewWorker's answer when the runner is used without the job's Begin.
var errNotBegun = errors.New("tpch's power and throughput tests need the job's Begin before the runner's clients (fairbench run, compare)")

// Begin reads the data set's description, makes the answers' checker, runs the warm-up pass and
// says how many clients the test needs: one for the power test, one per stream for the
// throughput test.
func (w *tpch) Begin(ctx context.Context, run workload.RunSettings) (int, error) {
	progress := run.Progress
	if progress == nil {
		progress = io.Discard
	}
	mc, err := run.Env.Connect(ctx)
	if err != nil {
		return 0, err
	}
	t, err := w.begin(ctx, run, mc, progress)
	if err != nil {
		mc.Close()
		return 0, err
	}
	w.cur = t
	if w.cfg.throughput {
		return w.cfg.streams, nil
	}
	return 1, nil
}

func (w *tpch) begin(ctx context.Context, run workload.RunSettings, mc sqldb.Conn, progress io.Writer) (*test, error) {
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
	t := &test{env: run.Env, progress: progress, meta: meta, monitor: mc, interrupt: ctx,
		ck: w.newChecker(strings.TrimSpace(string(run.Env.Kind)+" "+result.VersionNumber(ver)), run.Env.Log)}
	if w.cfg.warm {
		fmt.Fprintf(progress, "tpch: warm-up pass (not timed)\n")
		if err := w.warmUp(ctx, run.Env); err != nil {
			return nil, err
		}
	}
	if run.PIDs != nil && !w.cfg.throughput {
		t.sampler = servermetrics.NewProcessSampler(run.PIDs)
		_, _ = t.sampler.Sample() // the first sample holds the processes' whole lifetime
	}
	return t, nil
}

// stream is one client's list: the power test's queries in order, or a throughput stream's in
// the specification's order for that stream (Appendix A), with its own parameters when --seed
// is set.
type stream struct {
	w       *tpch
	t       *test
	s       *session
	number  int // 0 in the power test, 1.. in the throughput test
	queries []int
	next    int
	// pending is the query just run, until the runner says how long it took.
	pending *result.TPCHQuery
}

// NewWorker makes the client's session and its list of queries.
func (w *tpch) NewWorker(ctx context.Context, conn sqldb.Conn, rng *randgen.Rand, thread, threads int) (workload.Worker, error) {
	t := w.cur
	if t == nil {
		return nil, errNotBegun
	}
	s, err := newSession(t.interrupt, conn, t.env, w.cfg.timeout)
	if err != nil {
		return nil, err
	}
	st := &stream{w: w, t: t, s: s, queries: w.cfg.queries}
	if w.cfg.throughput {
		st.number = thread + 1
		st.queries = streamOrder(st.number, w.cfg.queries)
	}
	t.mu.Lock()
	t.workers = append(t.workers, st)
	t.mu.Unlock()
	return st, nil
}

// Transaction runs the next query of the list. Everything around the query's statements (the
// page cache dropped, the server's figures read, the answer checked, the plan taken) is a pause,
// which the runner leaves out of the query's time.
func (st *stream) Transaction(ctx context.Context, q *workload.Txn) error {
	if st.next >= len(st.queries) {
		return workload.ErrWorkDone
	}
	began := time.Now()
	query := st.queries[st.next]
	st.next++
	q.Kind = query - 1
	stmts, err := queryText(query, params(query, st.w.cfg.sf, st.w.cfg.seed, st.number), st.number)
	if err != nil {
		return err
	}
	before, err := st.beforeQuery(ctx)
	if err != nil {
		return err
	}
	q.Paused = time.Since(began)
	o := st.s.run(ctx, query, stmts)
	after := time.Now()
	rec := st.w.record(query, st.number, o, st.t.ck)
	if st.number == 0 {
		st.afterQuery(ctx, &rec, before, o, stmts)
	}
	st.t.mu.Lock()
	st.pending = &rec
	st.t.mu.Unlock()
	q.Paused += time.Since(after)
	if rec.Status != StatusOK {
		return fmt.Errorf("%w: Q%d %s", workload.ErrRecordedFailure, query, rec.Status)
	}
	return nil
}

// RecordLatency keeps the query just run with the time the runner measured.
func (st *stream) RecordLatency(latency time.Duration) {
	st.t.mu.Lock()
	defer st.t.mu.Unlock()
	rec := st.pending
	if rec == nil {
		return
	}
	st.pending = nil
	if rec.Status == StatusOK {
		rec.Seconds = latency.Seconds()
	}
	st.t.done = append(st.t.done, *rec)
	printQuery(st.t.progress, *rec)
}

// figures are the server's readings before a power test's query.
type figures struct {
	counters map[string]int64
	procs    servermetrics.Sample
}

// beforeQuery drops the page cache (--cold) and, in the power test, reads the server's figures
// the query's own are the difference from.
func (st *stream) beforeQuery(ctx context.Context) (figures, error) {
	var f figures
	if st.w.cfg.cold {
		if err := dropCaches(); err != nil {
			return f, fmt.Errorf("dropping the page cache: %w", err)
		}
	}
	if st.number != 0 {
		return f, nil // concurrent queries share the counters: no per-query figures
	}
	f.counters, _ = servermetrics.Counters(ctx, st.t.monitor)
	if st.t.sampler != nil {
		f.procs, _ = st.t.sampler.Sample()
	}
	return f, nil
}

// afterQuery adds a power test query's own server figures and its plan to rec.
func (st *stream) afterQuery(ctx context.Context, rec *result.TPCHQuery, before figures, o outcome, stmts []string) {
	t := st.t
	if t.sampler != nil {
		if s1, err := t.sampler.Sample(); err == nil {
			rec.DiskReadBytes = s1.ReadBytes - before.procs.ReadBytes
			rec.ServerCPUS = (s1.CPUUser + s1.CPUSystem) - (before.procs.CPUUser + before.procs.CPUSystem)
		}
	}
	// The query's own buffer figures, visible before they are read.
	if q := dialect.Of(t.monitor).PublishStatistics(); q != "" {
		_ = st.s.observe.Exec(ctx, q)
	}
	if after, _ := servermetrics.Counters(ctx, t.monitor); before.counters != nil && after != nil {
		d := servermetrics.Delta(before.counters, after)
		rec.BufferReads, rec.BufferHits = d[servermetrics.KeyBufferReads], d[servermetrics.KeyBufferHits]
	}
	if !o.interrupted {
		rec.Plan = st.s.plan(ctx, stmts)
	}
}

// End puts the queries the runner timed into the result with TPC-H's scores, takes the first
// stream's plans in the throughput test, and fails the run when an answer was wrong or a query
// failed. A query that ended after the window closed (Ctrl-C) is recorded as interrupted. res is
// nil when no client ran; the test's connection is closed all the same.
func (w *tpch) End(ctx context.Context, res *result.Result) error {
	t := w.cur
	w.cur = nil
	if t == nil {
		return nil
	}
	defer t.monitor.Close()
	if res == nil {
		return nil // no client ran
	}
	tr := w.newResult(t.meta, t.ck)
	tr.Queries = t.collect()
	if w.cfg.throughput && ctx.Err() == nil {
		w.firstStreamPlans(ctx, t.env, tr.Queries)
	}
	res.TPCH = tr
	if bad := w.score(res); len(bad) > 0 {
		return fmt.Errorf("TPC-H answers not all right: %s", strings.Join(bad, "; "))
	}
	return nil
}

// collect is every query recorded, each stream's in the order it ran them, stream after stream.
func (t *test) collect() []result.TPCHQuery {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := t.done
	for _, st := range t.workers {
		if rec := st.pending; rec != nil {
			rec.Status, rec.Detail, rec.Seconds = StatusError, "interrupted: it ended after the measured window closed", 0
			out = append(out, *rec)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Stream < out[j].Stream })
	return out
}

// newResult is the TPC-H part of a test's result: its mode and the load times Prepare recorded.
func (w *tpch) newResult(meta map[string]string, ck *checker) *result.TPCH {
	t := &result.TPCH{Mode: "power", ScaleFactor: w.cfg.sf, AnswersChecked: ck.mode, LoadSeconds: map[string]float64{}}
	for k, v := range meta {
		if name, ok := strings.CutPrefix(k, "load_s."); ok {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				t.LoadSeconds[name] = f
			}
		}
	}
	if w.cfg.throughput {
		t.Mode, t.Streams = "throughput", w.cfg.streams
	}
	return t
}

// score is TPC-H's own figures of the queries run: the power test's geometric mean of the right
// answers' times or the throughput test's queries per hour (the runner counted them). It returns
// the queries answered wrongly or failed, one line each.
func (w *tpch) score(res *result.Result) []string {
	t := res.TPCH
	var ok int64
	var logSum float64
	var bad []string
	for _, q := range t.Queries {
		switch q.Status {
		case StatusOK:
			ok++
			logSum += math.Log(math.Max(q.Seconds, 1e-6))
		case StatusWrong, StatusError:
			bad = append(bad, fmt.Sprintf("Q%d%s %s: %s", q.Query, streamSuffix(q.Stream), q.Status, q.Detail))
		}
	}
	if ok > 0 && !w.cfg.throughput {
		t.GeoMeanS = math.Exp(logSum / float64(ok))
	}
	if w.cfg.throughput && res.DurationS > 0 {
		t.QueriesPerHour = float64(ok) * 3600 / res.DurationS
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

// record turns an outcome into the result's figures, checking the answer of a query that ran;
// its time is the runner's, added when the runner has it.
func (w *tpch) record(q, stream int, o outcome, ck *checker) result.TPCHQuery {
	rec := result.TPCHQuery{Query: q, Stream: stream, Rows: int64(len(o.answer.Rows)), Status: o.status, Detail: o.detail}
	if o.status == StatusOK {
		ok, detail, err := ck.check(q, stream, o.answer)
		switch {
		case err != nil:
			rec.Status, rec.Detail = StatusError, "checking the answer: "+err.Error()
		case !ok:
			rec.Status, rec.Detail = StatusWrong, detail
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
func (w *tpch) firstStreamPlans(ctx context.Context, env *workload.Env, out []result.TPCHQuery) {
	s, err := openSession(ctx, env, w.cfg.timeout)
	if err != nil {
		return // a plan explains a time and never fails a run
	}
	defer s.Close()
	for i := range out {
		if out[i].Stream != 1 {
			continue
		}
		if stmts, err := queryText(out[i].Query, params(out[i].Query, w.cfg.sf, w.cfg.seed, 1), 1); err == nil {
			out[i].Plan = s.plan(ctx, stmts)
		}
	}
}

// queryKinds names the runner's transaction kinds: query n is kind n-1.
func queryKinds() []string {
	out := make([]string, numQueries)
	for i := range out {
		out[i] = fmt.Sprintf("Q%d", i+1)
	}
	return out
}
