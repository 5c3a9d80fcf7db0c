// Package fakeconn is the unit layer's connection: a sqldb.Conn that runs nothing and records
// every statement sent to it, in order, with its arguments, so that a workload's or the runner's
// test can check what would reach a server (the statements of a transaction, their parameters,
// the counts) without one. Answers are what the test gives: rows for a query by the start of its
// text, rows affected, and an error to return for a statement. What only a server can show (that
// the SQL runs, the rows it reads, locks, isolation) stays with the tests on real servers.
package fakeconn

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/fairbench/fairbench/internal/sqldb"
)

// Call is one statement as the connection received it.
type Call struct {
	Op   string // "exec" (text protocol), "query" (text protocol, rows back), "prepare", "stmt.query", "stmt.exec", "stmt.firstrow"
	SQL  string
	Args []any
}

// Conn is a recording connection. Its zero value is not usable: New makes one.
type Conn struct {
	kind sqldb.Kind
	mu   sync.Mutex
	// Calls are every statement sent, in order, while Keep is set (New sets it; a test that
	// sends millions of statements, the runner's, clears it).
	Calls []Call
	Keep  bool
	// Do, when set, is the server's work for each execution of a prepared statement (a delay, a
	// hang until the connection closes, an error): the runner's tests give it.
	Do func(ctx context.Context, c *Conn, call Call) error
	// Rows answers Query and a prepared statement's Query and FirstRow: the rows of the first
	// entry whose key the statement starts with (after leading spaces). Otherwise Query has no
	// rows, and a prepared statement one row of one column, "1".
	Rows map[string][][]string
	// Affected is what Exec of a prepared statement reports; 1 when 0.
	Affected int64
	// Fail returns its error for the first statement whose text contains its key, once each
	// (kept calls only).
	Fail map[string]error

	counts   sqldb.StatementCounts
	closed   atomic.Bool
	done     chan struct{}
	closeOne sync.Once
	// OnClose, when set, is called once when the connection closes.
	OnClose func()
}

// New is a recording connection that speaks for an engine of kind (its dialect is asked by
// kind, as for a real connection).
func New(kind sqldb.Kind) *Conn {
	return &Conn{kind: kind, Rows: map[string][][]string{}, Fail: map[string]error{}, Keep: true, done: make(chan struct{})}
}

var _ sqldb.Conn = (*Conn)(nil)

func (c *Conn) Kind() sqldb.Kind { return c.kind }

func (c *Conn) Prepare(_ context.Context, sql string) (sqldb.Stmt, error) {
	if err := c.record("prepare", sql, nil); err != nil {
		return nil, err
	}
	return &stmt{c: c, sql: sql, class: sqldb.ClassOf(sql)}, nil
}

func (c *Conn) Exec(_ context.Context, sql string) error {
	c.counts.Add(sqldb.ClassOf(sql))
	return c.record("exec", sql, nil)
}

func (c *Conn) Query(ctx context.Context, sql string, args ...any) ([][]string, error) {
	return c.QueryAs(ctx, sqldb.ClassOf(sql), sql, args...)
}

// QueryAs is sqldb.QueryAs.
func (c *Conn) QueryAs(_ context.Context, class sqldb.Class, sql string, args ...any) ([][]string, error) {
	c.counts.Add(class)
	if err := c.record("query", sql, args); err != nil {
		return nil, err
	}
	return c.rows(sql, nil), nil
}

func (c *Conn) Close() error {
	c.closeOne.Do(func() {
		c.closed.Store(true)
		close(c.done)
		if c.OnClose != nil {
			c.OnClose()
		}
	})
	return nil
}

// Counters are the statements executed, by class, as a real connection counts them (no round
// trips: nothing goes over a wire). The runner's reads and writes come from them.
func (c *Conn) Counters() sqldb.Counters {
	return c.counts.Load()
}

// Closed says whether Close was called.
func (c *Conn) Closed() bool { return c.closed.Load() }

// Done is closed when the connection closes: a statement that hangs until then (a server
// that froze) waits on it.
func (c *Conn) Done() <-chan struct{} { return c.done }

// ErrClosed is what a statement on a closed connection returns.
var ErrClosed = fmt.Errorf("fakeconn: connection closed")

// Reset forgets the calls so far.
func (c *Conn) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.Calls = nil
}

// Sent are the statements executed (not prepared), in order: what a server would have run.
func (c *Conn) Sent() []Call {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []Call
	for _, call := range c.Calls {
		if call.Op != "prepare" {
			out = append(out, call)
		}
	}
	return out
}

// Shapes are the executed statements' texts in order, each reduced to its first words (up to
// n), which is what most tests compare: "SELECT c FROM", "UPDATE sbtest1 SET".
func (c *Conn) Shapes(n int) []string {
	var out []string
	for _, call := range c.Sent() {
		f := strings.Fields(call.SQL)
		out = append(out, strings.Join(f[:min(n, len(f))], " "))
	}
	return out
}

func (c *Conn) record(op, sql string, args []any) error {
	if c.closed.Load() {
		return ErrClosed
	}
	if !c.Keep {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.Calls = append(c.Calls, Call{Op: op, SQL: sql, Args: append([]any(nil), args...)})
	for key, err := range c.Fail {
		if strings.Contains(sql, key) {
			delete(c.Fail, key)
			return err
		}
	}
	return nil
}

func (c *Conn) rows(sql string, otherwise [][]string) [][]string {
	if len(c.Rows) == 0 {
		return otherwise
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	trimmed := strings.TrimSpace(sql)
	for key, rows := range c.Rows {
		if strings.HasPrefix(trimmed, key) {
			return rows
		}
	}
	return otherwise
}

var oneRow = [][]string{{"1"}}

type stmt struct {
	c     *Conn
	sql   string
	class sqldb.Class
}

// CountAs is sqldb.CountAs.
func (s *stmt) CountAs(c sqldb.Class) { s.class = c }

func (s *stmt) Query(ctx context.Context, args ...any) (int64, error) {
	if err := s.run(ctx, "stmt.query", args); err != nil {
		return 0, err
	}
	return int64(len(s.c.rows(s.sql, oneRow))), nil
}

func (s *stmt) Exec(ctx context.Context, args ...any) (int64, error) {
	if err := s.run(ctx, "stmt.exec", args); err != nil {
		return 0, err
	}
	if s.c.Affected == 0 {
		return 1, nil
	}
	return s.c.Affected, nil
}

func (s *stmt) FirstRow(ctx context.Context, args ...any) ([]string, []*string, int64, error) {
	if err := s.run(ctx, "stmt.firstrow", args); err != nil {
		return nil, nil, 0, err
	}
	rows := s.c.rows(s.sql, oneRow)
	if len(rows) == 0 {
		return nil, nil, 0, nil
	}
	row := make([]*string, len(rows[0]))
	names := make([]string, len(rows[0]))
	for i := range rows[0] {
		v := rows[0][i]
		row[i], names[i] = &v, fmt.Sprintf("c%d", i+1)
	}
	return names, row, int64(len(rows)), nil
}

// run records one execution and does the server's work for it (Do).
func (s *stmt) run(ctx context.Context, op string, args []any) error {
	s.c.counts.Add(s.class)
	var kept []any
	if s.c.Keep {
		kept = copyArgs(args)
	}
	if err := s.c.record(op, s.sql, kept); err != nil {
		return err
	}
	if s.c.Do != nil {
		return s.c.Do(ctx, s.c, Call{Op: op, SQL: s.sql, Args: kept})
	}
	return nil
}

// copyArgs keeps a copy of []byte arguments, which callers reuse after the call (sqldb.Stmt).
func copyArgs(args []any) []any {
	out := make([]any, len(args))
	for i, a := range args {
		if b, ok := a.([]byte); ok {
			a = string(b)
		}
		out[i] = a
	}
	return out
}
