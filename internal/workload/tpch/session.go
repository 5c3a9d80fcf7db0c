package tpch

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fairbench/fairbench/internal/dialect"
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
	env  *workload.Env
	conn sqldb.Conn
	// observe is conn for what observes a query rather than runs it (its plan, the server's
	// statistics flushed): in the same session, but not counted among the run's statements.
	observe sqldb.Conn
	id      int64 // the server's session id: pg_backend_pid() / CONNECTION_ID()
	timeout time.Duration
	// interrupt is the run's context, ended by Ctrl-C: the running query is then cancelled on the
	// server. The statements themselves run under the runner's context, which is never cancelled
	// (a run ends between transactions), so this is how an interrupted query stops on a server
	// fairbench does not stop afterwards.
	interrupt context.Context
}

// newSession makes c a session that runs queries under the timeout.
func newSession(ctx context.Context, c sqldb.Conn, env *workload.Env, timeout time.Duration) (*session, error) {
	s := &session{env: env, conn: c, observe: sqldb.Uncounted(c), timeout: timeout, interrupt: ctx}
	var err error
	if s.id, err = dialect.SamplerFor(c.Kind()).SessionID(ctx, c); err != nil {
		return nil, fmt.Errorf("reading the connection id: %v", err)
	}
	// Last: from here on every statement on this connection is subject to the timeout.
	if err := s.setTimeout(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// openSession connects a session of its own (the warm-up pass, plans after the window).
func openSession(ctx context.Context, env *workload.Env, timeout time.Duration) (*session, error) {
	c, err := env.Connect(ctx)
	if err != nil {
		return nil, err
	}
	s, err := newSession(ctx, c, env, timeout)
	if err != nil {
		c.Close()
	}
	return s, err
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

// dropView removes Q15's view after a failed or interrupted run of it, or after its plan, from a
// new connection when the session's own is gone (the MySQL driver closes it when ctx ends
// mid-query), so the next run's CREATE VIEW does not find it there. It is cleaning up, not the
// query's work: not counted among the run's statements.
func (s *session) dropView(name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if s.observe.Exec(ctx, "DROP VIEW "+name) == nil {
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
		case <-s.interrupt.Done():
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
	case ctx.Err() != nil || s.interrupt.Err() != nil:
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
			if s.observe.Exec(ctx, st) != nil {
				return ""
			}
			view = strings.Fields(st)[2]
		case strings.HasPrefix(low, "select"):
			steps, err := dialect.Explain(ctx, s.observe, st)
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

// dropCaches empties the OS page cache so the query reads from disk whatever the engine's own
// buffer pool does not hold.
func dropCaches() error {
	syscall.Sync()
	return os.WriteFile("/proc/sys/vm/drop_caches", []byte("3"), 0)
}
