// Package dialect is fairbench's one home for what differs between engines in SQL and in their
// administration: each engine family is a type here, with what it can do as data, and the rest
// of fairbench asks it instead of testing which engine it is. The model is CockroachDB's
// workload dialects and BenchBase's per-database files: engine knowledge in one place, so that a
// new engine (another PostgreSQL-wire server) is a new type here plus its start and stop in
// internal/engine (docs/architecture.md, "Add an engine").
//
// It holds, so far, the administrative SQL a measured step needs (flushing dirty pages,
// the backlog the step starts with, statistics maintenance, the data directory); the branches on
// sqldb.Kind that remain elsewhere are listed in docs/architecture.md and move here as they are
// touched.
package dialect

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/fairbench/fairbench/internal/sqldb"
)

// Capabilities is what an engine family has, as data: code asks these instead of the engine's
// name.
type Capabilities struct {
	// Flush says how its dirty pages are written out on demand, for the start state's record.
	Flush string
	// BulkLoad is its fastest loading path from a client.
	BulkLoad string
	// IndexesText says whether a text column can be in a key or index as it is (InnoDB needs a
	// prefix length, so a portable schema uses varchar there).
	IndexesText bool
	// PrimaryKeyAtCreate says whether a table's primary key is best declared when the table is
	// created (InnoDB clusters rows by it, so adding it later rebuilds the table) rather than
	// built once after the load (PostgreSQL's heap does not depend on it).
	PrimaryKeyAtCreate bool
	// OneTripParameters says whether a query with parameters costs one round trip (PostgreSQL's
	// extended protocol sends parse, bind and execute at once). The MySQL protocol prepares,
	// executes and closes (three), so a statement whose values a transaction reads is sent with
	// its arguments written into the text as literals there (workload.ValueQuery).
	OneTripParameters bool
	// OldVersionsInTable says where an update leaves the row's old version: in the table until
	// VACUUM removes it (PostgreSQL: dead tuples, counted per table), or in undo logs that a
	// background purge empties (InnoDB: the history list, counted server-wide).
	OldVersionsInTable bool
	// StatisticsAtExit says whether a busy session publishes its statistics late (PostgreSQL:
	// at most once a second, and at exit), so that a run's counters are whole only once its
	// sessions have ended.
	StatisticsAtExit bool
	// Replication is how a cluster of this family's servers replicates, in the results' terms
	// (result.ReplicationGalera, result.ReplicationStreaming): fairbench's MySQL-family clusters
	// are MariaDB Galera, its PostgreSQL clusters Patroni's WAL streaming.
	Replication string
}

// Dialect is one engine family's SQL and administration.
type Dialect interface {
	Kind() sqldb.Kind
	Caps() Capabilities
	Objects
	Digests
	DDL
	SessionControl
	ServerFigures
	RunTimeSettings
	// Flush writes the server's dirty data pages to disk now and waits until they are written and
	// counted, so that the next measured step pays for none of them. It returns what was done
	// ("checkpoint", "dirty pages flushed"), or an error that says why not ("not permitted: ...",
	// "interrupted"), which a start state records as it is.
	Flush(ctx context.Context, c sqldb.Conn) (string, error)
	// Backlog is the dirty pages and the WAL/redo written since the last checkpoint, where the
	// engine tells this connection; nil where it does not.
	Backlog(ctx context.Context, c sqldb.Conn) (dirty, redo *int64)
	// SetBackgroundCleanup turns the server's background removal of old row versions on or off
	// (PostgreSQL's autovacuum), for a study on a throwaway server; an error where the engine
	// cannot (InnoDB's purge always runs).
	SetBackgroundCleanup(ctx context.Context, c sqldb.Conn, on bool) error
	// RemoveOldVersions removes a table's old row versions now (VACUUM), where they stay in the
	// table (Caps().OldVersionsInTable); an error elsewhere.
	RemoveOldVersions(ctx context.Context, c sqldb.Conn, table string) error
	// TableVersions is what the engine counts of updates and old row versions in the tables
	// LIKE pattern, where old versions stay in the table; an error elsewhere.
	TableVersions(ctx context.Context, c sqldb.Conn, pattern string) (TableVersions, error)
	// ReplicationStatus is this node's replication, as the family's clusters replicate
	// (Caps().Replication).
	ReplicationStatus(ctx context.Context, c sqldb.Conn) (ReplicationStatus, error)
	// Maintain brings a table's planner statistics up to date (and, where the engine keeps dead
	// row versions in the table, removes them).
	Maintain(ctx context.Context, c sqldb.Conn, table string) error
	// TableSizes is the bytes of the tables whose names are LIKE pattern, and of their indexes,
	// in the connection's database (PostgreSQL: its current schema).
	TableSizes(ctx context.Context, c sqldb.Conn, pattern string) (table, index int64, err error)
	// DataDirectory is the server's data directory as its own process names it; "" where this
	// connection may not read it.
	DataDirectory(ctx context.Context, c sqldb.Conn) string
	// TypeName is the engine's column type for a portable one (Types; length and scale where
	// the type takes them: varchar(length), decimal(length, scale)), or for one of the names the
	// built-in workloads use as their reference tools do: tinyint, datetime (to the second on
	// the MySQL family), serial and bigserial (numbered rows).
	TypeName(portable string, length, scale int) string
	// ProductName is the engine as a reader knows it, with its storage engine where that is what
	// a comparison turns on: "PostgreSQL", "MySQL (InnoDB)", "MariaDB (InnoDB)".
	ProductName() string
	// Family is the SQL family the engine reads: workloads key their per-engine text (a routine's
	// body, a statement spelled otherwise) by it, as BenchBase's per-database dialect files do.
	Family() Family
}

// TableVersions counts, over some tables, updates and the old row versions they left: all
// updates, those made in place on the page without touching an index (PostgreSQL's HOT), the old
// versions not yet removed (dead tuples), and the background cleaner's runs (autovacuum).
type TableVersions struct {
	Updates, InPlaceUpdates, OldVersions, CleanerRuns int64
}

// Family names the engines that read the same SQL.
type Family string

const (
	PostgresFamily Family = "postgres"
	MySQLFamily    Family = "mysql"
)

// Types are the portable column types a workload file may use: each maps to a type every engine
// stores and compares alike.
var Types = []string{"smallint", "int", "bigint", "decimal", "varchar", "text", "bool", "date", "timestamp"}

// NotNullByType reports whether a portable type is NOT NULL on every engine by its name alone: the
// numbered-row types (PostgreSQL's serial implies it; InnoDB's type text carries it, where MySQL
// wants it, before AUTO_INCREMENT), so a column of one needs no NOT NULL of its own.
func NotNullByType(portable string) bool { return portable == "serial" || portable == "bigserial" }

// typeName is the mapping the two families share; each overrides what it spells otherwise.
func typeName(portable string, length, scale int, override map[string]string) string {
	if t, ok := override[portable]; ok {
		return t
	}
	switch portable {
	case "decimal":
		return "decimal(" + strconv.Itoa(length) + "," + strconv.Itoa(scale) + ")"
	case "varchar":
		return "varchar(" + strconv.Itoa(length) + ")"
	}
	return portable
}

// For is the dialect of an engine kind: PostgreSQL's, or InnoDB's for MySQL and MariaDB.
func For(k sqldb.Kind) Dialect { return byKind(k) }

// engineDialect is everything one engine family's type answers.
type engineDialect interface {
	Dialect
	Loader
	Catalog
	StatementSource
	TransactionWatcher
	planFormat() planFormat
}

// The dialects, made once as interface values: a workload asks for one per statement, and an
// innodb value turned into an interface afresh would be allocated each time.
var (
	postgresDialect engineDialect = postgres{}
	mysqlDialect    engineDialect = innodb{kind: sqldb.MySQL}
	mariadbDialect  engineDialect = innodb{kind: sqldb.MariaDB}
)

// byKind is the one dialect value of a kind: InnoDB's for MySQL and MariaDB, PostgreSQL's for
// PostgreSQL. A kind with no dialect is a defect of the caller (sqldb parses only these three
// from a DSN), named rather than served as PostgreSQL.
func byKind(k sqldb.Kind) engineDialect {
	d, err := lookup(k)
	if err != nil {
		panic(err)
	}
	return d
}

func lookup(k sqldb.Kind) (engineDialect, error) {
	switch k {
	case sqldb.MySQL:
		return mysqlDialect, nil
	case sqldb.MariaDB:
		return mariadbDialect, nil
	case sqldb.Postgres:
		return postgresDialect, nil
	}
	return nil, fmt.Errorf("engine kind %q has no dialect in this fairbench: it knows postgres, mysql and mariadb", string(k))
}

// Lookup is the dialect of a kind read from outside (a results file), or an error that names it.
func Lookup(k sqldb.Kind) (Dialect, error) {
	d, err := lookup(k)
	if err != nil {
		return nil, err
	}
	return d, nil
}

// Of is the dialect of the server c is connected to.
func Of(c sqldb.Conn) Dialect { return For(c.Kind()) }

// errInterrupted is a flush cut short by its context (Ctrl-C).
var errInterrupted = errors.New("interrupted")

// firstInt is the first column of the first row as an integer; nil where the query fails (a
// missing extension, no privilege) or returns nothing.
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

// firstString is the first column of the first row; "" where the query fails.
func firstString(ctx context.Context, c sqldb.Conn, q string) string {
	rows, err := c.Query(ctx, q)
	if err != nil || len(rows) == 0 || len(rows[0]) == 0 {
		return ""
	}
	return rows[0][0]
}

// Loader is an engine's fastest way to load rows from a client: PostgreSQL's COPY FROM STDIN,
// MySQL's and MariaDB's LOAD DATA LOCAL INFILE, both reading tab-separated text lines with
// backslash escapes and \N for NULL.
type Loader interface {
	// StartLoading readies the server (LOAD DATA LOCAL needs local_infile on, which it turns on
	// where this user may) and returns how the rows will go in, for the data set's record
	// (Caps().BulkLoad, or InsertMethod where the server refuses the bulk path), and what undoes
	// the readying.
	StartLoading(ctx context.Context, c sqldb.Conn) (method string, restore func())
	// Load streams r's lines into table's columns: through the bulk path, or as multi-row
	// INSERTs of the same rows where the server refuses it. Every workload loads through it.
	Load(ctx context.Context, c sqldb.Conn, table string, columns []string, r io.Reader) error
}

// InsertMethod is the load's method where the engine's bulk path is refused.
const InsertMethod = "multi-row INSERT"

// LoaderFor is the loader of an engine kind.
func LoaderFor(k sqldb.Kind) Loader { return byKind(k) }
