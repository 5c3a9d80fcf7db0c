package runner

import (
	"context"
	"sync/atomic"

	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/sqldb/fakeconn"
)

// fakeConn is the unit layer's shared fake connection (internal/sqldb/fakeconn).
type fakeConn = fakeconn.Conn

// fakeDB hands out fake connections for unit tests of the runner's own logic (timing, rate,
// retries, counting): every execution of a prepared statement does what stmt says, at once
// when it is nil. The connections keep no calls: these tests send millions of statements.
type fakeDB struct {
	stmt   func(ctx context.Context, c *fakeConn) error
	opened atomic.Int64
	closed atomic.Int64
	calls  atomic.Int64
}

var errFakeClosed = fakeconn.ErrClosed

func (db *fakeDB) connect(context.Context) (sqldb.Conn, error) {
	db.opened.Add(1)
	c := fakeconn.New(sqldb.Postgres)
	c.Keep = false
	c.OnClose = func() { db.closed.Add(1) }
	c.Do = func(ctx context.Context, c *fakeConn, _ fakeconn.Call) error {
		db.calls.Add(1)
		if db.stmt == nil {
			return nil
		}
		return db.stmt(ctx, c)
	}
	return c, nil
}

// hangUntilClosed is a server that never answers: the statement returns only when its
// connection is closed or its context cancelled.
func hangUntilClosed(ctx context.Context, c *fakeConn) error {
	select {
	case <-c.Done():
		return errFakeClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}
