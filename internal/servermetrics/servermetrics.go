// Package servermetrics measures the server side of a run: what the engine says about itself
// (settings, cumulative counters, data size) over SQL, and, for a server on this machine, what
// its processes cost (CPU, memory, disk I/O) from /proc. Engine figures work for any target;
// process figures need the server's pids.
package servermetrics

import (
	"context"
	"fmt"
	"strconv"
	"strings"

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

// Settings returns the server's own view of the settings that matter for fairness. PostgreSQL
// values are shown as SHOW shows them ("128MB", "5min"), the form the fairness profile writes;
// MySQL-family values are as SHOW GLOBAL VARIABLES gives them (sizes in bytes), which is again
// the form the profile uses. Keys the server does not have are absent.
func Settings(ctx context.Context, c sqldb.Conn) (map[string]string, error) {
	var q string
	if c.Kind().MySQLFamily() {
		q = "SHOW GLOBAL VARIABLES WHERE Variable_name IN (" + sqlList(mySettingKeys) + ")"
	} else {
		// current_setting resolves pg_settings' setting+unit pair (16384, 8kB) the way the server
		// itself prints it, so no unit table has to be kept in step with PostgreSQL here.
		q = "SELECT name, current_setting(name) FROM pg_settings WHERE name IN (" + sqlList(pgSettingKeys) + ")"
	}
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

// DataSize is the bytes of tables and their indexes (and TOAST, on PostgreSQL) in the
// connection's current schema/database.
//
// On the MySQL family the figure comes from InnoDB's persistent statistics, which are refreshed
// in the background after about 10% of a table changes, so it can trail the truth by that much;
// MySQL 8 also caches it for a day unless information_schema_stats_expiry is 0, which is set here.
func DataSize(ctx context.Context, c sqldb.Conn) (int64, error) {
	var q string
	if c.Kind().MySQLFamily() {
		// MariaDB has no such variable; the error is the answer "nothing to do".
		_ = c.Exec(ctx, "SET SESSION information_schema_stats_expiry = 0")
		q = "SELECT COALESCE(SUM(data_length + index_length), 0) FROM information_schema.tables WHERE table_schema = DATABASE()"
	} else {
		q = `SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0) FROM pg_class c
			WHERE c.relkind IN ('r', 'm') AND c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())`
	}
	rows, err := c.Query(ctx, q)
	if err != nil {
		return 0, fmt.Errorf("reading data size: %w", err)
	}
	if len(rows) != 1 || len(rows[0]) != 1 {
		return 0, fmt.Errorf("reading data size: unexpected result %v", rows)
	}
	return parseInt(rows[0][0])
}

// sqlList quotes fixed, trusted names for an IN list; SHOW ... WHERE takes no parameters.
func sqlList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = "'" + n + "'"
	}
	return strings.Join(q, ", ")
}

// parseInt accepts the text of a bigint or of a numeric without fraction (PostgreSQL's sum() and
// wal_bytes are numeric); an empty string is NULL, i.e. nothing counted.
func parseInt(s string) (int64, error) {
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
