package dialect

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/fairbench/fairbench/internal/sqldb"
)

// Index is a secondary index: its name and its columns as SQL ("a, b").
type Index struct{ Name, Columns string }

// DDL is how a table is declared and built, beyond the column types (TypeName).
type DDL interface {
	// TableOptions follows CREATE TABLE's closing parenthesis: on InnoDB the storage engine and a
	// binary collation, so that text compares and sorts byte by byte as in PostgreSQL's C
	// collation (the fairness profile's); nothing on PostgreSQL.
	TableOptions() string
	// CreateIndexes builds a table's secondary indexes: a CREATE INDEX each on PostgreSQL, one
	// ALTER TABLE on InnoDB, which then builds them all in one pass over the table.
	CreateIndexes(table string, indexes []Index) []string
	// StorageEngine is the table option that picks a storage engine by name (sysbench's
	// --mysql-storage-engine), where the engine has more than one; "" elsewhere.
	StorageEngine(name string) string
	// FillFactor is the table option that leaves (100 - percent)% of each page free for updates
	// (pgbench's --fillfactor), where a table has one; "" elsewhere.
	FillFactor(percent int) string
	// AfterExplicitIDs moves a serial column's counter past max once rows were loaded with their
	// ids given, so that the next generated id does not collide; "" where the counter follows the
	// column's largest value on its own (AUTO_INCREMENT).
	AfterExplicitIDs(table, column string, max int64) string
}

// SessionControl is what a connection sets for itself, and how one connection stops another's
// statement.
type SessionControl interface {
	// Isolation sets the session's transaction isolation level ("REPEATABLE READ").
	Isolation(level string) string
	// IsolationQuery reads the session's isolation level: the last column of its one row, in
	// the engine's spelling ("read committed", "REPEATABLE-READ").
	IsolationQuery() string
	// StatementTimeout are the settings that make the server cancel a statement running longer
	// than d, to try in order until one is taken: the MySQL pair is offered both ways because a
	// target's kind says which protocol it speaks, not which product answers.
	StatementTimeout(d time.Duration) []string
	// CancelStatement stops what session id runs now (nothing when it is idle), from another
	// connection.
	CancelStatement(id int64) string
	// LoadingSession is what a connection that bulk-loads empty tables sets first: InnoDB's bulk
	// path (no undo, sorted index build) needs unique and foreign-key checks off; the rows'
	// consistency is checked afterwards on every engine.
	LoadingSession() []string
	// ReadYourWrites makes a Galera node wait for the cluster's earlier writes before reading,
	// where the server is a Galera node; elsewhere the setting is refused and means nothing.
	ReadYourWrites() string
	// PageSizeQuery reads the size of a data page in bytes.
	PageSizeQuery() string
	// PublishStatistics makes this session's statistics (buffer hits and reads) visible to
	// others now, where the server publishes them late; "" where they are visible at once.
	PublishStatistics() string
	// ReadOnlySession makes every later transaction of the session read-only, autocommitted
	// single statements included: the server then refuses a write however the statement hides
	// it (a data-modifying WITH, SELECT ... INTO, a function that writes).
	ReadOnlySession() string
}

func (postgres) TableOptions() string { return "" }

func (postgres) CreateIndexes(table string, indexes []Index) []string {
	out := make([]string, len(indexes))
	for i, ix := range indexes {
		out[i] = fmt.Sprintf("CREATE INDEX %s ON %s (%s)", ix.Name, table, ix.Columns)
	}
	return out
}

func (postgres) StorageEngine(string) string { return "" }

func (postgres) FillFactor(percent int) string {
	return " with (fillfactor=" + strconv.Itoa(percent) + ")"
}

func (postgres) AfterExplicitIDs(table, column string, max int64) string {
	return fmt.Sprintf("SELECT setval(pg_get_serial_sequence('%s', '%s'), %d)", table, column, max)
}

// StorageEngine: in a version comment, as sysbench writes it, so that a MySQL-protocol server
// without the option reads none.
func (innodb) StorageEngine(name string) string { return " /*! ENGINE = " + name + " */" }

func (innodb) FillFactor(int) string { return "" }

func (innodb) AfterExplicitIDs(string, string, int64) string { return "" }

func (innodb) TableOptions() string {
	return " ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin"
}

func (innodb) CreateIndexes(table string, indexes []Index) []string {
	if len(indexes) == 0 {
		return nil
	}
	adds := make([]string, len(indexes))
	for i, ix := range indexes {
		adds[i] = fmt.Sprintf("ADD INDEX %s (%s)", ix.Name, ix.Columns)
	}
	return []string{fmt.Sprintf("ALTER TABLE %s %s", table, strings.Join(adds, ", "))}
}

func (postgres) Isolation(level string) string {
	return "SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL " + level
}

func (postgres) IsolationQuery() string { return "SHOW transaction_isolation" }

// StatementTimeout: statement_timeout, in milliseconds, applies to every statement.
func (postgres) StatementTimeout(d time.Duration) []string {
	return []string{"SET statement_timeout = " + strconv.FormatInt(d.Milliseconds(), 10)}
}

func (postgres) CancelStatement(id int64) string {
	return "SELECT pg_cancel_backend(" + strconv.FormatInt(id, 10) + ")"
}

func (postgres) LoadingSession() []string { return nil }

func (postgres) ReadYourWrites() string { return "" }

func (postgres) PageSizeQuery() string { return "SELECT current_setting('block_size')" }

// PublishStatistics: a backend publishes its statistics at most once a second unless told to.
func (postgres) PublishStatistics() string { return "SELECT pg_stat_force_next_flush()" }

func (postgres) ReadOnlySession() string { return "SET default_transaction_read_only = on" }

func (innodb) Isolation(level string) string {
	return "SET SESSION TRANSACTION ISOLATION LEVEL " + level
}

// IsolationQuery: MySQL 8 named the variable transaction_isolation and dropped tx_isolation;
// MariaDB before 11.1 has only tx_isolation. Both names mean the same level.
func (innodb) IsolationQuery() string {
	return "SHOW SESSION VARIABLES WHERE Variable_name IN ('transaction_isolation', 'tx_isolation')"
}

// StatementTimeout: MariaDB's max_statement_time (seconds, any statement), MySQL's
// max_execution_time (milliseconds, SELECT only); the product's own first.
func (d innodb) StatementTimeout(t time.Duration) []string {
	maria := "SET SESSION max_statement_time = " + strconv.FormatFloat(t.Seconds(), 'f', 3, 64)
	mysql := "SET SESSION max_execution_time = " + strconv.FormatInt(t.Milliseconds(), 10)
	if d.kind == sqldb.MariaDB {
		return []string{maria, mysql}
	}
	return []string{mysql, maria}
}

func (innodb) CancelStatement(id int64) string { return "KILL QUERY " + strconv.FormatInt(id, 10) }

func (innodb) LoadingSession() []string {
	return []string{"SET SESSION unique_checks = 0", "SET SESSION foreign_key_checks = 0"}
}

// ReadYourWrites: wsrep_sync_wait = 15 makes every kind of statement wait for causality.
func (innodb) ReadYourWrites() string { return "SET SESSION wsrep_sync_wait = 15" }

func (innodb) PageSizeQuery() string { return "SELECT @@innodb_page_size" }

func (innodb) PublishStatistics() string { return "" }

func (innodb) ReadOnlySession() string { return "SET SESSION TRANSACTION READ ONLY" }
