package dialect

import (
	"context"
	"strconv"
	"strings"

	"github.com/fairbench/fairbench/internal/sqldb"
)

// StatementStat is one statement's account on the server, counted since the engine began (a
// measured window is the difference of two reads): as BenchBase reads pg_stat_statements and
// MySQL's sys schema reads the statement digests.
type StatementStat struct {
	// ID is the engine's identifier of the normalized statement (PostgreSQL's queryid, the MySQL
	// family's digest), which Sighting.Statement names; "" where there is none (MariaDB's
	// prepared statements).
	ID string
	// Text is the statement as the engine keeps it: normalized, its constants and parameters
	// replaced ($1 on PostgreSQL, ? on MySQL and MariaDB).
	Text    string
	Calls   int64
	Rows    int64
	TotalMS float64 // server time executing it
	// BlocksHit and BlocksRead are the pages found in the buffer pool and read from outside it
	// (PostgreSQL's shared blocks); -1 where the engine does not count them per statement.
	BlocksHit, BlocksRead int64
}

// StatementSource is an engine's per-statement accounting.
type StatementSource interface {
	// Statements reads the accounts of the statements run in the connection's database; an
	// error says why there are none (pg_stat_statements not loaded, the performance schema off).
	Statements(ctx context.Context, c sqldb.Conn) ([]StatementStat, error)
	// StatementsView names where the accounts come from, for the results.
	StatementsView() string
}

func (postgres) StatementsView() string { return "pg_stat_statements" }

func (innodb) StatementsView() string {
	return "performance_schema.events_statements_summary_by_digest"
}

// StatementsFor is the statement accounting of an engine kind.
func StatementsFor(k sqldb.Kind) StatementSource { return byKind(k) }

// pgStatements is pg_stat_statements for this database, every user's statements alike: the
// measured clients are all of them on a benchmark's own database. total_exec_time is PostgreSQL
// 13's name (total_time before).
const pgStatements = "SELECT query, calls, rows, total_exec_time, shared_blks_hit, shared_blks_read, queryid FROM pg_stat_statements " +
	"WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())"

func (postgres) Statements(ctx context.Context, c sqldb.Conn) ([]StatementStat, error) {
	rows, err := c.Query(ctx, pgStatements)
	if err != nil {
		return nil, err
	}
	out := make([]StatementStat, 0, len(rows))
	for _, r := range rows {
		out = append(out, StatementStat{Text: r[0], Calls: atoi(r[1]), Rows: atoi(r[2]), TotalMS: atof(r[3]),
			BlocksHit: atoi(r[4]), BlocksRead: atoi(r[5]), ID: r[6]})
	}
	return out, nil
}

// innodbStatements is the performance schema's statement digests in this database; its timers
// are in picoseconds. Executions of server-side prepared statements are counted under the
// digest of their text on MySQL; MariaDB's are read apart (mariadbPrepared).
const innodbStatements = "SELECT digest_text, count_star, sum_rows_sent + sum_rows_affected, sum_timer_wait / 1000000000, digest " +
	"FROM performance_schema.events_statements_summary_by_digest WHERE schema_name = DATABASE() AND digest_text IS NOT NULL"

// mariadbPrepared is MariaDB's account of server-side prepared statements, which its digests
// leave out (their executions are statement/com/Execute, without a text): per statement the
// connection prepared, on the threads using this database. The instances go with their
// connection, so they are read before the clients disconnect (runner.Observer.MeasureEnd).
const mariadbPrepared = "SELECT p.sql_text, p.count_execute, p.sum_rows_sent + p.sum_rows_affected, p.sum_timer_execute / 1000000000, '' " +
	"FROM performance_schema.prepared_statements_instances p JOIN performance_schema.threads t ON t.thread_id = p.owner_thread_id " +
	"WHERE t.processlist_db = DATABASE()"

func (d innodb) Statements(ctx context.Context, c sqldb.Conn) ([]StatementStat, error) {
	rows, err := c.Query(ctx, innodbStatements)
	if err != nil {
		return nil, err
	}
	if d.kind == sqldb.MariaDB {
		prepared, err := c.Query(ctx, mariadbPrepared)
		if err != nil {
			return nil, err
		}
		rows = append(rows, prepared...)
	}
	out := make([]StatementStat, 0, len(rows))
	for _, r := range rows {
		out = append(out, StatementStat{Text: r[0], Calls: atoi(r[1]), Rows: atoi(r[2]), TotalMS: atof(r[3]), BlocksHit: -1, BlocksRead: -1, ID: r[4]})
	}
	return out, nil
}

func atoi(s string) int64 {
	v, _ := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	return v
}

func atof(s string) float64 {
	v, _ := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return v
}

// StatementsSetting is what turns an engine's statement accounting on, for a message.
func StatementsSetting(k sqldb.Kind) string {
	if k == sqldb.MySQL || k == sqldb.MariaDB {
		return "set performance_schema=ON in the server's configuration and restart it (MariaDB's default is OFF), then run the workload a while"
	}
	return "add pg_stat_statements to shared_preload_libraries, restart, run CREATE EXTENSION pg_stat_statements in this database, then run the workload a while"
}
