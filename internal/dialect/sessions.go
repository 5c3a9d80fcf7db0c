package dialect

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/sqldb"
)

// Session is what one server session was doing at one moment: its category and the engine's own
// name for it ("IO:WALSync", "state: waiting for handler commit").
type Session struct {
	ID       int64
	Category string
	Event    string
}

// SessionSampler is an engine's view of its sessions' activity, for wait sampling.
type SessionSampler interface {
	// SessionID is the connection's session as the engine's activity views name it
	// (pg_backend_pid(), CONNECTION_ID()).
	SessionID(ctx context.Context, c sqldb.Conn) (int64, error)
	// Sessions says what each of the sessions ids is doing now, read over c; a session that has
	// gone is absent.
	Sessions(ctx context.Context, c sqldb.Conn, ids []int64) ([]Session, error)
}

// SamplerFor is a session sampler for an engine kind: a new one for each sampler, since the
// InnoDB engines' keeps what it last read of their lock waits.
func SamplerFor(k sqldb.Kind) SessionSampler {
	if k == sqldb.MySQL || k == sqldb.MariaDB {
		return &innodbSessionView{innodb: innodb{kind: k}}
	}
	return postgres{}
}

// idList is ids as a SQL list; they are integers, so nothing is quoted.
func idList(ids []int64) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.FormatInt(id, 10)
	}
	return strings.Join(s, ",")
}

// errNoRow is a query that returned nothing where one row was expected.
var errNoRow = errors.New("no row")

func sessionID(ctx context.Context, c sqldb.Conn, q string) (int64, error) {
	rows, err := c.Query(ctx, q)
	if err != nil {
		return 0, err
	}
	if len(rows) == 0 || len(rows[0]) == 0 {
		return 0, errNoRow
	}
	return strconv.ParseInt(rows[0][0], 10, 64)
}

func (postgres) SessionID(ctx context.Context, c sqldb.Conn) (int64, error) {
	return sessionID(ctx, c, "SELECT pg_backend_pid()")
}

// Sessions reads pg_stat_activity, as HammerDB's active session history does for PostgreSQL.
func (postgres) Sessions(ctx context.Context, c sqldb.Conn, ids []int64) ([]Session, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := c.Query(ctx, "SELECT pid, coalesce(state, ''), coalesce(wait_event_type, ''), coalesce(wait_event, '') "+
		"FROM pg_stat_activity WHERE pid IN ("+idList(ids)+")")
	if err != nil {
		return nil, err
	}
	out := make([]Session, 0, len(rows))
	for _, r := range rows {
		id, _ := strconv.ParseInt(r[0], 10, 64)
		cat, ev := pgCategory(r[1], r[2], r[3])
		out = append(out, Session{ID: id, Category: cat, Event: ev})
	}
	return out, nil
}

// pgCategory folds a pg_stat_activity row: an idle session waits for its client; an active one
// with no wait event runs on the CPU; otherwise its wait event decides.
func pgCategory(state, typ, event string) (category, name string) {
	if strings.HasPrefix(state, "idle") {
		return result.WaitClient, state
	}
	if typ == "" {
		return result.WaitOnCPU, state + " (no wait event)"
	}
	name = typ + ":" + event
	switch typ {
	case "IO":
		switch {
		case strings.HasPrefix(strings.ToUpper(event), "WAL"): // WALSync before PostgreSQL 17, WalSync since
			return result.WaitLogFlush, name
		case strings.HasSuffix(event, "Read") || strings.HasSuffix(event, "Prefetch"):
			return result.WaitDataRead, name
		case strings.HasPrefix(event, "DataFile") || strings.HasPrefix(event, "BufFile") || strings.HasPrefix(event, "SLRU"):
			return result.WaitDataWrite, name
		}
	case "LWLock":
		if strings.HasPrefix(strings.ToUpper(event), "WALWRITE") { // waiting for another backend's WAL flush
			return result.WaitLogFlush, name
		}
		return result.WaitLatch, name
	case "Lock":
		if event == "transactionid" || event == "tuple" {
			return result.WaitRowLock, name
		}
		return result.WaitLatch, name
	case "BufferPin":
		return result.WaitLatch, name
	case "Client":
		if event == "ClientWrite" {
			return result.WaitNetwork, name
		}
		return result.WaitClient, name
	case "IPC":
		if event == "SyncRep" { // a commit waiting for its standby
			return result.WaitLogFlush, name
		}
	}
	return result.WaitOther, name
}

func (innodb) SessionID(ctx context.Context, c sqldb.Conn) (int64, error) {
	return sessionID(ctx, c, "SELECT CONNECTION_ID()")
}

// innodbSessions reads the sessions from the performance schema, without the lock that the
// processlist table takes in MySQL: each thread's command and state, and the wait it is in now (a
// wait still in progress, not the last one completed: HammerDB's fix #905).
const innodbSessions = "SELECT t.processlist_id, coalesce(t.processlist_command, ''), coalesce(t.processlist_state, ''), " +
	"coalesce(w.event_name, ''), coalesce(w.operation, '') " +
	"FROM performance_schema.threads t " +
	"LEFT JOIN performance_schema.events_waits_current w ON w.thread_id = t.thread_id AND w.end_event_id IS NULL AND w.event_name <> 'idle' " +
	"WHERE t.processlist_id IN (%s)"

// innodbProcesslist is the same without the performance schema (a server started with it off):
// commands and states only.
const innodbProcesslist = "SELECT id, command, coalesce(state, ''), '', '' FROM information_schema.processlist WHERE id IN (%s)"

// innodbLockWaiters are the sessions whose transaction waits for a row lock. A row lock wait has
// no wait event of its own (MariaDB names none; its state reads "Updating" as any update's does),
// so InnoDB's transaction table says it.
const innodbLockWaiters = "SELECT trx_mysql_thread_id FROM information_schema.innodb_trx WHERE trx_state = 'LOCK WAIT'"

// lockReadEvery spaces the reads of innodb_trx: InnoDB refreshes that table's cache only when
// it has not been read for 100 ms, so reading it every round of a faster sampler would show the
// same stale transactions for ever (seen here: a blocked update never listed).
const lockReadEvery = 250 * time.Millisecond

// innodbSessionView reads MySQL's and MariaDB's sessions, keeping the lock waiters it last read.
type innodbSessionView struct {
	innodb
	lockRead time.Time
	waiting  map[int64]bool
}

func (v *innodbSessionView) Sessions(ctx context.Context, c sqldb.Conn, ids []int64) ([]Session, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	list := idList(ids)
	rows, err := c.Query(ctx, strings.Replace(innodbSessions, "%s", list, 1))
	if err != nil {
		if rows, err = c.Query(ctx, strings.Replace(innodbProcesslist, "%s", list, 1)); err != nil {
			return nil, err
		}
	}
	if time.Since(v.lockRead) >= lockReadEvery {
		v.lockRead = time.Now()
		if lw, err := c.Query(ctx, innodbLockWaiters); err == nil {
			v.waiting = map[int64]bool{}
			for _, r := range lw {
				v.waiting[atoi(r[0])] = true
			}
		}
	}
	seen := make(map[int64]bool, len(rows))
	out := make([]Session, 0, len(rows))
	for _, r := range rows {
		id := atoi(r[0])
		if seen[id] { // a thread in nested waits has a row for each; the first is enough
			continue
		}
		seen[id] = true
		trx := ""
		if v.waiting[id] {
			trx = "LOCK WAIT"
		}
		cat, ev := innodbCategory(r[1], r[2], r[3], r[4], trx)
		out = append(out, Session{ID: id, Category: cat, Event: ev})
	}
	return out, nil
}

// innodbCommitStates are the thread states of a commit, during which the redo log is written and
// flushed (innodb_flush_log_at_trx_commit=1): MySQL's, then MariaDB's.
var innodbCommitStates = map[string]bool{"waiting for handler commit": true, "Commit": true, "Commit implicit": true}

// innodbNetworkStates are the states of sending a result.
var innodbNetworkStates = map[string]bool{"Sending to client": true, "Writing to net": true}

// innodbCategory folds a thread's row: a row lock wait first (its state names no wait), then an
// idle connection, the wait in progress, and the state.
func innodbCategory(command, state, event, operation, trx string) (category, name string) {
	switch {
	case trx == "LOCK WAIT":
		return result.WaitRowLock, "innodb_trx: LOCK WAIT"
	case command == "Sleep":
		return result.WaitClient, "Sleep"
	case event != "":
		return innodbEventCategory(event, operation), event
	case innodbCommitStates[state]:
		return result.WaitLogFlush, "state: " + state
	case innodbNetworkStates[state]:
		return result.WaitNetwork, "state: " + state
	case strings.HasPrefix(state, "Waiting for") && strings.Contains(state, "lock"):
		return result.WaitLatch, "state: " + state
	}
	if state == "" {
		return result.WaitOnCPU, command
	}
	return result.WaitOnCPU, "state: " + state
}

// innodbEventCategory folds a performance-schema wait event.
func innodbEventCategory(event, operation string) string {
	switch {
	case strings.HasPrefix(event, "wait/io/file/innodb/innodb_log_file"), strings.HasPrefix(event, "wait/io/file/sql/binlog"):
		return result.WaitLogFlush
	case strings.HasPrefix(event, "wait/io/file/"):
		if strings.Contains(operation, "read") {
			return result.WaitDataRead
		}
		return result.WaitDataWrite
	case strings.HasPrefix(event, "wait/synch/"), strings.HasPrefix(event, "wait/lock/"):
		return result.WaitLatch
	case strings.HasPrefix(event, "wait/io/socket/"):
		return result.WaitNetwork
	case strings.HasPrefix(event, "wait/io/table/"): // the handler's row calls: the statement's own work
		return result.WaitOnCPU
	}
	return result.WaitOther
}
