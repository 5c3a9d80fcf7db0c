package servermetrics

import (
	"context"
	"fmt"
	"strings"

	"github.com/fairbench/fairbench/internal/sqldb"
)

// Counter keys that mean the same thing on every engine, so a report can set them side by side.
// Everything else keeps the engine's own (lower-cased) name, because its meaning is the engine's.
const (
	KeyBufferReads  = "buffer_reads"  // page reads that missed the buffer pool
	KeyBufferHits   = "buffer_hits"   // page reads served from the buffer pool
	KeyPagesWritten = "pages_written" // data pages written out (8 KiB on PostgreSQL, 16 KiB on InnoDB by default)
	KeyWALBytes     = "wal_bytes"     // WAL / redo log bytes generated
	KeyRowLockWaits = "row_lock_waits"
	KeyDeadlocks    = "deadlocks"
	// Gauges: a level, not a running total.
	KeyHistoryListLength = "history_list_length"    // InnoDB undo not yet purged
	KeyDeadTuples        = "n_dead_tup"             // PostgreSQL rows awaiting vacuum
	KeyRecvQueue         = "wsrep_local_recv_queue" // galera: write sets received, not yet applied
)

// gauges keep their after-value in Delta and are left out of PerTransaction: a backlog divided
// by transactions means nothing.
var gauges = map[string]bool{KeyHistoryListLength: true, KeyDeadTuples: true, KeyRecvQueue: true}

// Counters reads the engine's cumulative counters. Take one before and one after a run and
// subtract with Delta. The secondary sources (views that depend on the version, InnoDB metrics)
// are best-effort: a key that cannot be read is absent, and Delta then leaves it out.
//
// PostgreSQL backends publish their statistics at most once a second while busy, and at exit;
// read the after-counters once the run's connections have closed (Monitor.Finish waits for that).
func Counters(ctx context.Context, c sqldb.Conn) (map[string]int64, error) {
	if c.Kind().MySQLFamily() {
		return mysqlCounters(ctx, c)
	}
	return pgCounters(ctx, c)
}

func pgCounters(ctx context.Context, c sqldb.Conn) (map[string]int64, error) {
	out := map[string]int64{}
	ver, err := QueryInts(ctx, c, "SELECT current_setting('server_version_num')::int")
	if err != nil {
		return nil, fmt.Errorf("reading server_version_num: %w", err)
	}
	v := ver[0]

	cols := []string{"blks_read", "blks_hit", "xact_commit", "xact_rollback", "tup_inserted",
		"tup_updated", "tup_deleted", "deadlocks", "temp_bytes"}
	vals, err := QueryInts(ctx, c, "SELECT "+strings.Join(cols, ", ")+" FROM pg_stat_database WHERE datname = current_database()")
	if err != nil {
		return nil, fmt.Errorf("reading pg_stat_database: %w", err)
	}
	for i, col := range cols {
		switch col {
		case "blks_read":
			out[KeyBufferReads] = vals[i]
		case "blks_hit":
			out[KeyBufferHits] = vals[i]
		default:
			out[col] = vals[i]
		}
	}

	// Pages written by the checkpointer, the background writer and backends themselves.
	// PostgreSQL 17 moved the checkpointer's count to pg_stat_checkpointer and the backends'
	// to pg_stat_io.
	written := "SELECT buffers_checkpoint + buffers_clean + buffers_backend FROM pg_stat_bgwriter"
	if v >= 170000 {
		written = `SELECT (SELECT buffers_written FROM pg_stat_checkpointer)
			+ (SELECT buffers_clean FROM pg_stat_bgwriter)
			+ (SELECT COALESCE(SUM(writes), 0) FROM pg_stat_io
			   WHERE object = 'relation' AND backend_type NOT IN ('checkpointer', 'background writer'))`
	}
	if r, err := QueryInts(ctx, c, written); err == nil {
		out[KeyPagesWritten] = r[0]
	}
	if v >= 140000 {
		if r, err := QueryInts(ctx, c, "SELECT wal_bytes FROM pg_stat_wal"); err == nil {
			out[KeyWALBytes] = r[0]
		}
	}
	if r, err := QueryInts(ctx, c, "SELECT COALESCE(SUM(n_dead_tup), 0), COALESCE(SUM(autovacuum_count), 0) FROM pg_stat_user_tables"); err == nil {
		out[KeyDeadTuples] = r[0]
		out["autovacuum_count"] = r[1]
	}
	return out, nil
}

// mysqlStatus maps SHOW GLOBAL STATUS names to counter keys.
var mysqlStatus = map[string]string{
	"Innodb_buffer_pool_read_requests": "innodb_buffer_pool_read_requests",
	"Innodb_buffer_pool_reads":         KeyBufferReads,
	"Innodb_pages_written":             KeyPagesWritten,
	"Innodb_os_log_written":            KeyWALBytes,
	"Innodb_row_lock_waits":            KeyRowLockWaits,
	"Innodb_data_read":                 "innodb_data_read",
	// Not the same figure on both engines: MySQL counts its redo log writes in it (a short
	// oltp_read_write run writes only redo, ~4.5 KB per transaction), MariaDB (10.5 on) counts
	// data-file writes only, page flushes and doublewrite, and with innodb_max_dirty_pages_pct_lwm
	// at 0 its page cleaner flushes nothing until 90% of the pool is dirty, so over a short run it
	// reads 0 while the redo log (wal_bytes) and the cgroup's disk writes show the real writing.
	"Innodb_data_written":        "innodb_data_written",
	"Com_commit":                 "com_commit",
	"Com_rollback":               "com_rollback",
	"Innodb_deadlocks":           KeyDeadlocks,         // MariaDB only
	"Innodb_history_list_length": KeyHistoryListLength, // MariaDB only
	// Galera nodes only (absent elsewhere): what replication cost. Certification failures are
	// transactions that committed locally but lost to a conflicting one from another node (the
	// client sees a deadlock error); flow control is the time replication paused the node's
	// writes because a peer fell behind (the _ns counter: wsrep_flow_control_paused is a fraction
	// since the last FLUSH STATUS).
	"wsrep_local_cert_failures":    "wsrep_local_cert_failures",
	"wsrep_local_bf_aborts":        "wsrep_local_bf_aborts",
	"wsrep_flow_control_paused_ns": "wsrep_flow_control_paused_ns",
	"wsrep_replicated_bytes":       "wsrep_replicated_bytes",
	"wsrep_local_recv_queue":       KeyRecvQueue,
}

func mysqlCounters(ctx context.Context, c sqldb.Conn) (map[string]int64, error) {
	names := make([]string, 0, len(mysqlStatus))
	for n := range mysqlStatus {
		names = append(names, n)
	}
	rows, err := c.Query(ctx, "SHOW GLOBAL STATUS WHERE Variable_name IN ("+sqlList(names)+")")
	if err != nil {
		return nil, fmt.Errorf("reading SHOW GLOBAL STATUS: %w", err)
	}
	out := map[string]int64{}
	for _, r := range rows {
		if len(r) < 2 {
			continue
		}
		key, ok := mysqlStatus[r[0]]
		if !ok {
			// Variable_name matching is case-insensitive on some versions; so is this.
			for n, k := range mysqlStatus {
				if strings.EqualFold(n, r[0]) {
					key, ok = k, true
				}
			}
		}
		if !ok {
			continue
		}
		v, err := parseInt(r[1])
		if err != nil {
			return nil, fmt.Errorf("SHOW GLOBAL STATUS %s: %w", r[0], err)
		}
		out[key] = v
	}
	if req, ok := out["innodb_buffer_pool_read_requests"]; ok {
		if rd, ok := out[KeyBufferReads]; ok {
			out[KeyBufferHits] = req - rd
		}
	}

	// MySQL has neither status variable above that is marked MariaDB only; its INNODB_METRICS
	// has both, enabled by default. The metric wins for the history length because it is the one
	// both engines have.
	metrics, err := c.Query(ctx, "SELECT name, count FROM information_schema.INNODB_METRICS WHERE name IN ('trx_rseg_history_len', 'lock_deadlocks')")
	if err == nil {
		for _, r := range metrics {
			if len(r) < 2 {
				continue
			}
			v, err := parseInt(r[1])
			if err != nil {
				continue
			}
			switch strings.ToLower(r[0]) {
			case "trx_rseg_history_len":
				out[KeyHistoryListLength] = v
			case "lock_deadlocks":
				if _, ok := out[KeyDeadlocks]; !ok {
					out[KeyDeadlocks] = v
				}
			}
		}
	}
	return out, nil
}

// QueryInts runs a one-row query and parses every column as an integer (NULL as 0): the shape
// of every statistics query the engines answer.
func QueryInts(ctx context.Context, c sqldb.Conn, q string) ([]int64, error) {
	rows, err := c.Query(ctx, q)
	if err != nil {
		return nil, err
	}
	if len(rows) != 1 {
		return nil, fmt.Errorf("%d rows, want 1", len(rows))
	}
	out := make([]int64, len(rows[0]))
	for i, s := range rows[0] {
		if out[i], err = parseInt(s); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Delta is after minus before for each counter in both; gauges keep their after-value. A counter
// that went down was reset (server restart, pg_stat_reset) during the run: what it counted since
// the reset, its after-value, is the best lower bound there is.
func Delta(before, after map[string]int64) map[string]int64 {
	out := make(map[string]int64, len(after))
	for k, a := range after {
		if gauges[k] {
			out[k] = a
			continue
		}
		b, ok := before[k]
		if !ok {
			continue // without a starting point the after-value would pass for the run's own count
		}
		if a < b {
			out[k] = a
		} else {
			out[k] = a - b
		}
	}
	return out
}

// PerTransaction divides each counter delta by the number of transactions (every value is 0 when
// there were none). Gauges are left out.
func PerTransaction(delta map[string]int64, transactions int64) map[string]float64 {
	out := make(map[string]float64, len(delta))
	for k, v := range delta {
		if gauges[k] {
			continue
		}
		if transactions > 0 {
			out[k] = float64(v) / float64(transactions)
		} else {
			out[k] = 0
		}
	}
	return out
}

// pgClientBackends lists the pids of client backends on the current database other than this
// connection's own, as a set of strings.
func pgClientBackends(ctx context.Context, c sqldb.Conn) (map[string]bool, error) {
	rows, err := c.Query(ctx, "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()")
	if err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(rows))
	for _, r := range rows {
		if len(r) > 0 {
			out[r[0]] = true
		}
	}
	return out, nil
}
