package dialect

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/sqldb"
)

// Settings keys that decide whether two runs are comparable: memory, durability, checkpointing.
var (
	pgSettingKeys = []string{
		"shared_buffers", "max_connections", "max_wal_size", "fsync", "synchronous_commit",
		"full_page_writes", "wal_level", "checkpoint_timeout", "effective_cache_size", "work_mem",
		"autovacuum", "server_version",
		// What the parity audit puts side by side besides memory and durability.
		"default_transaction_isolation", "block_size", "data_checksums", "server_encoding", "wal_sync_method",
		// Whether a commit waits for a replica: Patroni's synchronous mode names the standby here
		// (postgres-ha); empty on a single server and in asynchronous mode.
		"synchronous_standby_names",
		// Per-statement accounting (pg_stat_statements), the parity audit's counterpart of the
		// performance schema.
		"shared_preload_libraries",
	}
	mySettingKeys = []string{
		"innodb_buffer_pool_size", "max_connections", "innodb_flush_log_at_trx_commit", "sync_binlog",
		"log_bin", "innodb_log_file_size", "innodb_redo_log_capacity", "innodb_doublewrite",
		"innodb_flush_method", "transaction_isolation", "tx_isolation", "version",
		"innodb_page_size", "innodb_checksum_algorithm", "character_set_server", "binlog_format",
		// Statement and wait instrumentation: on in the fair profile on both (MySQL ships it on,
		// MariaDB off).
		"performance_schema",
	}
)

// ServerFigures are what an engine says about itself over SQL, read the same way for every engine.
type ServerFigures interface {
	// Settings is the server's own view of the settings that decide whether two runs are
	// comparable (memory, durability, checkpointing); keys the server does not have are absent.
	Settings(ctx context.Context, c sqldb.Conn) (map[string]string, error)
	// Facets reads those settings into the names every engine shares (result.Facet), and
	// SettingsFamily names the family whose setting names they are in.
	Facets(settings map[string]string) map[string]result.Facet
	SettingsFamily() string
	// Counters reads the engine's cumulative counters, under the Key names where a figure means
	// the same on every engine and the engine's own (lower-cased) name elsewhere. The secondary
	// sources (views that depend on the version, InnoDB metrics) are best-effort: a key that
	// cannot be read is absent. Where the engine publishes statistics late
	// (Capabilities.StatisticsAtExit), read the after-counters once the run's sessions ended.
	Counters(ctx context.Context, c sqldb.Conn) (map[string]int64, error)
	// DataSize is the bytes of tables and their indexes in the connection's current
	// schema/database.
	DataSize(ctx context.Context, c sqldb.Conn) (int64, error)
	// ClientSessions are the other client sessions on this database now, by id, where the
	// engine publishes their statistics when they end (nil elsewhere).
	ClientSessions(ctx context.Context, c sqldb.Conn) (map[string]bool, error)
}

func (postgres) Counters(ctx context.Context, c sqldb.Conn) (map[string]int64, error) {
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
			out[result.CounterBufferReads] = vals[i]
		case "blks_hit":
			out[result.CounterBufferHits] = vals[i]
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
		out[result.CounterPagesWritten] = r[0]
	}
	if v >= 140000 {
		if r, err := QueryInts(ctx, c, "SELECT wal_bytes FROM pg_stat_wal"); err == nil {
			out[result.CounterWALBytes] = r[0]
		}
		if r, err := QueryInts(ctx, c, "SELECT (active_time * 1000)::bigint FROM pg_stat_database WHERE datname = current_database()"); err == nil {
			out[result.CounterActiveUS] = r[0]
		}
	}
	if r, err := QueryInts(ctx, c, "SELECT COALESCE(SUM(n_dead_tup), 0), COALESCE(SUM(autovacuum_count), 0) FROM pg_stat_user_tables"); err == nil {
		out[result.CounterDeadTuples] = r[0]
		out["autovacuum_count"] = r[1]
	}
	return out, nil
}

// mysqlStatus maps SHOW GLOBAL STATUS names to counter keys.
var mysqlStatus = map[string]string{
	"Innodb_buffer_pool_read_requests": "innodb_buffer_pool_read_requests",
	"Innodb_buffer_pool_reads":         result.CounterBufferReads,
	"Innodb_pages_written":             result.CounterPagesWritten,
	"Innodb_os_log_written":            result.CounterWALBytes,
	"Innodb_row_lock_waits":            result.CounterRowLockWaits,
	"Innodb_data_read":                 "innodb_data_read",
	// Not the same figure on both engines: MySQL counts its redo log writes in it (a short
	// oltp_read_write run writes only redo, ~4.5 KB per transaction), MariaDB (10.5 on) counts
	// data-file writes only, page flushes and doublewrite, and with innodb_max_dirty_pages_pct_lwm
	// at 0 its page cleaner flushes nothing until 90% of the pool is dirty, so over a short run it
	// reads 0 while the redo log (wal_bytes) and the cgroup's disk writes show the real writing.
	"Innodb_data_written":        "innodb_data_written",
	"Com_commit":                 "com_commit",
	"Com_rollback":               "com_rollback",
	"Innodb_deadlocks":           result.CounterDeadlocks,         // MariaDB only
	"Innodb_history_list_length": result.CounterHistoryListLength, // MariaDB only
	// Galera nodes only (absent elsewhere): what replication cost. Certification failures are
	// transactions that committed locally but lost to a conflicting one from another node (the
	// client sees a deadlock error); flow control is the time replication paused the node's
	// writes because a peer fell behind (the _ns counter: wsrep_flow_control_paused is a fraction
	// since the last FLUSH STATUS).
	"wsrep_local_cert_failures":    "wsrep_local_cert_failures",
	"wsrep_local_bf_aborts":        "wsrep_local_bf_aborts",
	"wsrep_flow_control_paused_ns": "wsrep_flow_control_paused_ns",
	"wsrep_replicated_bytes":       "wsrep_replicated_bytes",
	"wsrep_local_recv_queue":       result.CounterRecvQueue,
}

func (innodb) Counters(ctx context.Context, c sqldb.Conn) (map[string]int64, error) {
	names := make([]string, 0, len(mysqlStatus))
	for n := range mysqlStatus {
		names = append(names, n)
	}
	rows, err := c.Query(ctx, "SHOW GLOBAL STATUS WHERE Variable_name IN ("+NameList(names)+")")
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
		v, err := ParseCount(r[1])
		if err != nil {
			return nil, fmt.Errorf("SHOW GLOBAL STATUS %s: %w", r[0], err)
		}
		out[key] = v
	}
	if req, ok := out["innodb_buffer_pool_read_requests"]; ok {
		if rd, ok := out[result.CounterBufferReads]; ok {
			out[result.CounterBufferHits] = req - rd
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
			v, err := ParseCount(r[1])
			if err != nil {
				continue
			}
			switch strings.ToLower(r[0]) {
			case "trx_rseg_history_len":
				out[result.CounterHistoryListLength] = v
			case "lock_deadlocks":
				if _, ok := out[result.CounterDeadlocks]; !ok {
					out[result.CounterDeadlocks] = v
				}
			}
		}
	}
	return out, nil
}

// Settings: PostgreSQL's values as SHOW shows them ("128MB", "5min"), the form the fairness
// profile writes; current_setting resolves pg_settings' setting+unit pair (16384, 8kB) the way
// the server itself prints it, so no unit table has to be kept in step with PostgreSQL here.
func (postgres) Settings(ctx context.Context, c sqldb.Conn) (map[string]string, error) {
	return readSettings(ctx, c, "SELECT name, current_setting(name) FROM pg_settings WHERE name IN ("+NameList(pgSettingKeys)+")")
}

// Settings: the MySQL family's values as SHOW GLOBAL VARIABLES gives them (sizes in bytes), again
// the form the profile uses.
func (innodb) Settings(ctx context.Context, c sqldb.Conn) (map[string]string, error) {
	return readSettings(ctx, c, "SHOW GLOBAL VARIABLES WHERE Variable_name IN ("+NameList(mySettingKeys)+")")
}

// readSettings reads name-value rows; keys the server does not have are absent.
func readSettings(ctx context.Context, c sqldb.Conn, q string) (map[string]string, error) {
	rows, err := c.Query(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("reading server settings: %w", err)
	}
	out := make(map[string]string, len(rows))
	for _, r := range rows {
		if len(r) >= 2 {
			out[strings.ToLower(r[0])] = r[1]
		}
	}
	// MariaDB before 11.1 and MySQL before 5.7.20 only know the old name; one key lets a report
	// put the engines side by side.
	if v, ok := out["tx_isolation"]; ok {
		if _, has := out["transaction_isolation"]; !has {
			out["transaction_isolation"] = v
		}
		delete(out, "tx_isolation")
	}
	return out, nil
}

// DataSize: tables, their indexes and TOAST, and materialized views.
func (postgres) DataSize(ctx context.Context, c sqldb.Conn) (int64, error) {
	return readDataSize(ctx, c, `SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0) FROM pg_class c
			WHERE c.relkind IN ('r', 'm') AND c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())`)
}

// DataSize: the figure comes from InnoDB's persistent statistics, which are refreshed in the
// background after about 10% of a table changes, so it can trail the truth by that much; MySQL 8
// also caches it for a day unless information_schema_stats_expiry is 0, which is set here
// (MariaDB has no such variable; the error is the answer "nothing to do").
func (innodb) DataSize(ctx context.Context, c sqldb.Conn) (int64, error) {
	_ = c.Exec(ctx, "SET SESSION information_schema_stats_expiry = 0")
	return readDataSize(ctx, c, "SELECT COALESCE(SUM(data_length + index_length), 0) FROM information_schema.tables WHERE table_schema = DATABASE()")
}

func readDataSize(ctx context.Context, c sqldb.Conn, q string) (int64, error) {
	rows, err := c.Query(ctx, q)
	if err != nil {
		return 0, fmt.Errorf("reading data size: %w", err)
	}
	if len(rows) != 1 || len(rows[0]) != 1 {
		return 0, fmt.Errorf("reading data size: unexpected result %v", rows)
	}
	return ParseCount(rows[0][0])
}

// ClientSessions: the pids of client backends on the current database other than this
// connection's own.
func (postgres) ClientSessions(ctx context.Context, c sqldb.Conn) (map[string]bool, error) {
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

// ClientSessions: nil, as the MySQL family's counters need no waiting for sessions to end.
func (innodb) ClientSessions(context.Context, sqldb.Conn) (map[string]bool, error) { return nil, nil }

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
		if out[i], err = ParseCount(s); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// NameList quotes fixed, trusted names for an IN list; SHOW ... WHERE takes no parameters.
func NameList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = "'" + n + "'"
	}
	return strings.Join(q, ", ")
}

// parseInt accepts the text of a bigint or of a numeric without fraction (PostgreSQL's sum() and
// wal_bytes are numeric); an empty string is NULL, i.e. nothing counted.
// ParseCount reads an engine's figure: an integer, a float (truncated), or empty as 0.
func ParseCount(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		return v, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("not a number: %q", s)
	}
	return int64(f), nil
}
