package dialect

import (
	"context"

	"github.com/fairbench/fairbench/internal/sqldb"
)

// Sighting is one statement seen inside one open transaction: which session, which of its
// transactions, which statement (StatementStat.ID), and how far into the transaction it started
// (milliseconds on PostgreSQL, statements on the MySQL family: only the order matters).
type Sighting struct {
	Session, Transaction, Statement string
	Offset                          float64
}

// TransactionWatcher tells which statements run together in a transaction, which the statement
// accounts do not: capture groups its statements into transactions by what it sees here.
type TransactionWatcher interface {
	// Sightings are the statements seen in open transactions of the connection's database now,
	// other sessions only. Where the engine keeps no such view, an error says what turns it on.
	Sightings(ctx context.Context, c sqldb.Conn) ([]Sighting, error)
	// TransactionsSetting is what makes the transactions visible, for a message.
	TransactionsSetting() string
}

// TransactionWatcherFor is the transaction view of an engine kind.
func TransactionWatcherFor(k sqldb.Kind) TransactionWatcher { return byKind(k) }

// pgSightings are the sessions of this database inside a transaction and the statement each runs
// or ran last (query_id is pg_stat_statements' queryid; compute_query_id sets it once the
// extension is loaded). A session idle in its transaction still shows its last statement, so a
// statement is seen from its start until the next one starts.
const pgSightings = "SELECT pid, xact_start, query_id, EXTRACT(EPOCH FROM query_start - xact_start) * 1000 FROM pg_stat_activity " +
	"WHERE datid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND pid <> pg_backend_pid() " +
	"AND xact_start IS NOT NULL AND query_id IS NOT NULL AND query_start >= xact_start"

func (postgres) Sightings(ctx context.Context, c sqldb.Conn) ([]Sighting, error) {
	return sightings(ctx, c, pgSightings)
}

// innodbSightings are the last statements of each thread (events_statements_history, 10 a thread
// by default) that ran inside a transaction the performance schema recorded: their
// NESTING_EVENT_ID is the transaction's event. The transaction instrument and its consumers are
// on by default in MySQL 8 and later; MariaDB's are off, and then no statement is seen.
const innodbSightings = "SELECT thread_id, nesting_event_id, digest, event_id - nesting_event_id FROM performance_schema.events_statements_history " +
	"WHERE nesting_event_type = 'TRANSACTION' AND digest IS NOT NULL AND current_schema = DATABASE() " +
	"AND thread_id <> (SELECT thread_id FROM performance_schema.threads WHERE processlist_id = CONNECTION_ID())"

func (innodb) Sightings(ctx context.Context, c sqldb.Conn) ([]Sighting, error) {
	return sightings(ctx, c, innodbSightings)
}

func sightings(ctx context.Context, c sqldb.Conn, q string) ([]Sighting, error) {
	rows, err := c.Query(ctx, q)
	if err != nil {
		return nil, err
	}
	out := make([]Sighting, 0, len(rows))
	for _, r := range rows {
		out = append(out, Sighting{Session: r[0], Transaction: r[1], Statement: r[2], Offset: atof(r[3])})
	}
	return out, nil
}

// TransactionsSetting is what makes an engine's transactions visible to Sightings, for a message.
func (postgres) TransactionsSetting() string {
	return "compute_query_id = auto (the default) with pg_stat_statements loaded"
}

func (innodb) TransactionsSetting() string {
	return "the performance schema's transaction instrument and its consumers: UPDATE performance_schema.setup_instruments SET enabled = 'YES' " +
		"WHERE name = 'transaction'; UPDATE performance_schema.setup_consumers SET enabled = 'YES' WHERE name LIKE 'events_transactions%' OR name = 'events_statements_history'"
}
