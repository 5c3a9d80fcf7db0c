package job

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/fairbench/fairbench/internal/dialect"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/sqldb"
)

// Every measured step starts from the same state on every engine: the dirty pages a load or an
// earlier step left in the buffer pool are written out first, as MariaDB's own regression runs
// do after each step. Otherwise a step pays for the writes of the one before it (a TPC-C run
// right after its load pays for the load's), and how much depends on each engine's checkpoint
// policy, not on the workload.

// Settle flushes the server's dirty pages (its dialect's Flush: PostgreSQL's CHECKPOINT; InnoDB's
// dirty pages brought to about zero) unless NoFlush, and returns the state the step starts from.
// A server that does not let this user flush is measured anyway; the state says why it was not
// flushed.
func (j *Job) Settle(ctx context.Context) *result.StartState {
	st := &result.StartState{Flush: "off"}
	c, err := j.Connect(ctx)
	if err != nil {
		st.Flush = "not done: " + err.Error()
		return st
	}
	defer c.Close()
	d := dialect.Of(c)
	if !j.NoFlush {
		t0 := time.Now()
		fctx, cancel := context.WithTimeout(ctx, FlushLimit)
		frozen := j.watchServer(fctx, cancel)
		done, err := d.Flush(fctx, c)
		cancel()
		if st.Flush = done; err != nil {
			st.Flush = err.Error()
		}
		switch {
		case ctx.Err() != nil:
		case frozen():
			st.Flush = "not done: the server stopped answering a trivial query during its flush (frozen, or fallen over)"
		case fctx.Err() == context.DeadlineExceeded:
			st.Flush = "not done: the server did not finish its flush within " + FlushLimit.String()
		}
		st.FlushS = time.Since(t0).Seconds()
	}
	bctx, cancel := context.WithTimeout(ctx, FinishTimeout)
	defer cancel()
	st.DirtyPages, st.RedoBacklogBytes = d.Backlog(bctx, c)
	return st
}

// FlushLimit bounds the settle's flush: a checkpoint of a full buffer pool on a slow disk takes
// tens of seconds, a frozen server for ever, and the step that follows ends on the runner's
// stall rule rather than never.
const FlushLimit = 2 * time.Minute

// watchServer asks the server a trivial query on a connection of its own every few seconds while
// ctx lasts, and cancels when one gets no answer within the connect timeout: a checkpoint may
// rightly take minutes, a frozen server would take for ever. frozen says whether it cancelled.
func (j *Job) watchServer(ctx context.Context, cancel context.CancelFunc) (frozen func() bool) {
	var gaveUp atomic.Bool
	go func() {
		c, err := j.Connect(ctx)
		if err != nil {
			if ctx.Err() == nil {
				gaveUp.Store(true)
				cancel()
			}
			return
		}
		defer c.Close()
		limit := j.Target.ConnectTimeout
		if limit <= 0 {
			limit = sqldb.DefaultConnectTimeout
		}
		for tick := time.NewTicker(2 * time.Second); ; {
			select {
			case <-ctx.Done():
				tick.Stop()
				return
			case <-tick.C:
			}
			qctx, qcancel := context.WithTimeout(ctx, limit)
			_, err := c.Query(qctx, "SELECT 1")
			qcancel()
			if err != nil && ctx.Err() == nil {
				gaveUp.Store(true)
				cancel()
				return
			}
		}
	}()
	return gaveUp.Load
}
