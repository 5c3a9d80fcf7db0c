package job

import (
	"context"
	"time"

	"github.com/fairbench/fairbench/internal/dialect"
	"github.com/fairbench/fairbench/internal/result"
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
		done, err := d.Flush(ctx, c)
		if st.Flush = done; err != nil {
			st.Flush = err.Error()
		}
		st.FlushS = time.Since(t0).Seconds()
	}
	st.DirtyPages, st.RedoBacklogBytes = d.Backlog(ctx, c)
	return st
}
