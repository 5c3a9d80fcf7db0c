package runner

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/fairbench/fairbench/internal/sqldb"
)

// fakeDB hands out fake connections for unit tests of the runner's own logic (timing, rate,
// retries, counting): every statement does what stmt says, at once when it is nil.
type fakeDB struct {
	stmt   func(ctx context.Context, c *fakeConn) error
	opened atomic.Int64
	closed atomic.Int64
	calls  atomic.Int64
}

var errFakeClosed = errors.New("fake connection closed")

func (db *fakeDB) connect(context.Context) (sqldb.Conn, error) {
	db.opened.Add(1)
	return &fakeConn{db: db, closed: make(chan struct{})}, nil
}

type fakeConn struct {
	db     *fakeDB
	closed chan struct{}
	once   sync.Once
}

func (c *fakeConn) Kind() sqldb.Kind { return sqldb.Postgres }
func (c *fakeConn) Prepare(context.Context, string) (sqldb.Stmt, error) {
	return fakeStmt{c}, nil
}
func (c *fakeConn) Exec(context.Context, string) error {
	select {
	case <-c.closed:
		return errFakeClosed
	default:
		return nil
	}
}
func (c *fakeConn) Query(context.Context, string, ...any) ([][]string, error) { return nil, nil }
func (c *fakeConn) Close() error {
	c.once.Do(func() {
		close(c.closed)
		c.db.closed.Add(1)
	})
	return nil
}

type fakeStmt struct{ c *fakeConn }

func (s fakeStmt) Query(ctx context.Context, _ ...any) (int64, error) {
	s.c.db.calls.Add(1)
	if s.c.db.stmt == nil {
		return 1, nil
	}
	return 1, s.c.db.stmt(ctx, s.c)
}
func (s fakeStmt) Exec(ctx context.Context, args ...any) (int64, error) { return s.Query(ctx, args...) }
func (s fakeStmt) FirstRow(ctx context.Context, args ...any) ([]string, []*string, int64, error) {
	n, err := s.Query(ctx, args...)
	return nil, nil, n, err
}

// hangUntilClosed is a server that never answers: the statement returns only when its
// connection is closed or its context cancelled.
func hangUntilClosed(ctx context.Context, c *fakeConn) error {
	select {
	case <-c.closed:
		return errFakeClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}
