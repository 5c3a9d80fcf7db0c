package job

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/sqldb"
)

// Every measured step starts from the same state on every engine: the dirty pages a load or an
// earlier step left in the buffer pool are written out first, as MariaDB's own regression runs
// do after each step. Otherwise a step pays for the writes of the one before it (a TPC-C run
// right after its load pays for the load's), and how much depends on each engine's checkpoint
// policy, not on the workload.

// settleWait bounds how long Settle waits for InnoDB to write its dirty pages: a busy or very
// large buffer pool must not hold a run up forever; the start state then says how many were left.
const settleWait = 2 * time.Minute

// Settle flushes the server's dirty pages (PostgreSQL: CHECKPOINT; InnoDB: dirty pages brought
// to about zero) unless NoFlush, and returns the state the step starts from. A server that does
// not let this user flush is measured anyway; the state says why it was not flushed.
func (j *Job) Settle(ctx context.Context) *result.StartState {
	st := &result.StartState{Flush: "off"}
	c, err := j.Connect(ctx)
	if err != nil {
		st.Flush = "not done: " + err.Error()
		return st
	}
	defer c.Close()
	if !j.NoFlush {
		t0 := time.Now()
		if c.Kind().MySQLFamily() {
			st.Flush = flushInnoDB(ctx, c)
		} else {
			st.Flush = "checkpoint"
			if err := c.Exec(ctx, "CHECKPOINT"); err != nil {
				st.Flush = "not permitted: " + err.Error()
			}
		}
		st.FlushS = time.Since(t0).Seconds()
	}
	st.DirtyPages, st.RedoBacklogBytes = backlog(ctx, c)
	return st
}

// flushInnoDB sets innodb_max_dirty_pages_pct to 0, which makes the page cleaners write every
// dirty page, waits (bounded) until about none are left, and restores the setting, also when
// ctx is cancelled. InnoDB lowers innodb_max_dirty_pages_pct_lwm along with it (MySQL's default
// is 10), so that is restored too, after the first: a later step must not run with another
// flushing policy.
func flushInnoDB(ctx context.Context, c sqldb.Conn) string {
	rows, err := c.Query(ctx, "SELECT @@GLOBAL.innodb_max_dirty_pages_pct, @@GLOBAL.innodb_max_dirty_pages_pct_lwm")
	if err != nil || len(rows) == 0 {
		return fmt.Sprintf("not done: reading innodb_max_dirty_pages_pct: %v", err)
	}
	pct, lwm := rows[0][0], rows[0][1]
	for _, v := range []string{pct, lwm} {
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			return "not done: innodb_max_dirty_pages_pct(_lwm) reads " + strconv.Quote(v)
		}
	}
	if err := c.Exec(ctx, "SET GLOBAL innodb_max_dirty_pages_pct = 0"); err != nil {
		return "not permitted: " + err.Error()
	}
	defer func() {
		restore := context.WithoutCancel(ctx)
		_ = c.Exec(restore, "SET GLOBAL innodb_max_dirty_pages_pct = "+pct)
		_ = c.Exec(restore, "SET GLOBAL innodb_max_dirty_pages_pct_lwm = "+lwm)
	}()
	deadline := time.Now().Add(settleWait)
	for {
		dirty, total, err := innodbPages(ctx, c)
		if err != nil {
			return "not done: " + err.Error()
		}
		// "About zero": background work (purge, the change buffer) keeps dirtying a few pages.
		if dirty <= max(16, total/1000) {
			return "dirty pages flushed"
		}
		if time.Now().After(deadline) {
			return fmt.Sprintf("timed out after %s with %d dirty pages left", settleWait, dirty)
		}
		select {
		case <-ctx.Done():
			return "interrupted"
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func innodbPages(ctx context.Context, c sqldb.Conn) (dirty, total int64, err error) {
	s, err := globalStatus(ctx, c, "Innodb_buffer_pool_pages_dirty", "Innodb_buffer_pool_pages_total")
	if err != nil {
		return 0, 0, err
	}
	d, ok1 := s["Innodb_buffer_pool_pages_dirty"]
	t, ok2 := s["Innodb_buffer_pool_pages_total"]
	if !ok1 || !ok2 {
		return 0, 0, fmt.Errorf("the server does not report Innodb_buffer_pool_pages_dirty")
	}
	return d, t, nil
}

// globalStatus reads integer status variables by name; absent ones are left out.
func globalStatus(ctx context.Context, c sqldb.Conn, names ...string) (map[string]int64, error) {
	out := map[string]int64{}
	for _, n := range names {
		rows, err := c.Query(ctx, "SHOW GLOBAL STATUS LIKE '"+n+"'")
		if err != nil {
			return nil, err
		}
		if len(rows) == 1 {
			if v, err := strconv.ParseInt(rows[0][1], 10, 64); err == nil {
				out[n] = v
			}
		}
	}
	return out, nil
}

// backlog reads the dirty pages and the WAL/redo written since the last checkpoint, where the
// engine tells this connection; nil where it does not.
func backlog(ctx context.Context, c sqldb.Conn) (dirty, redo *int64) {
	if c.Kind().MySQLFamily() {
		s, err := globalStatus(ctx, c, "Innodb_buffer_pool_pages_dirty", "Innodb_checkpoint_age",
			"Innodb_redo_log_current_lsn", "Innodb_redo_log_checkpoint_lsn")
		if err != nil {
			return nil, nil
		}
		if d, ok := s["Innodb_buffer_pool_pages_dirty"]; ok {
			dirty = &d
		}
		if age, ok := s["Innodb_checkpoint_age"]; ok { // MariaDB
			redo = &age
		} else if cur, ok := s["Innodb_redo_log_current_lsn"]; ok { // MySQL 8.0.30 on
			if cp, ok := s["Innodb_redo_log_checkpoint_lsn"]; ok {
				age := cur - cp
				redo = &age
			}
		}
		return dirty, redo
	}
	// pg_buffercache is read only where someone installed it: fairbench creates nothing in a
	// database it did not make.
	dirty = firstInt(ctx, c, "SELECT count(*) FROM pg_buffercache WHERE isdirty")
	redo = firstInt(ctx, c, "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), redo_lsn)::bigint FROM pg_control_checkpoint()")
	return dirty, redo
}

func firstInt(ctx context.Context, c sqldb.Conn, q string) *int64 {
	rows, err := c.Query(ctx, q)
	if err != nil || len(rows) == 0 || len(rows[0]) == 0 {
		return nil
	}
	v, err := strconv.ParseInt(rows[0][0], 10, 64)
	if err != nil {
		return nil
	}
	return &v
}
