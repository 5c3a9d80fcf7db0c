package sqldb

import (
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
)

// Errors that end a connection rather than a statement: the server went away (crashed, killed,
// shut down, its node left the cluster's primary component or was demoted to a replica), so an
// application reconnects, to the same node or the next one in its list, and tries again. Classified
// by codes and error types, as errors.go does.
var (
	// lostPostgres: class 08 (connection exception) by prefix, and these.
	lostPostgres = map[string]bool{
		"57P01": true, // admin_shutdown
		"57P02": true, // crash_shutdown
		"57P03": true, // cannot_connect_now (starting up, or in recovery)
		"25006": true, // read_only_sql_transaction: connected to a node that is (now) a replica
	}
	lostMySQL = map[uint16]bool{
		1047: true, // ER_UNKNOWN_COM_ERROR: Galera's "WSREP has not yet prepared node for application use"
		1053: true, // ER_SERVER_SHUTDOWN
		// ER_ERROR_DURING_COMMIT: a Galera node that left the primary component fails a COMMIT in
		// flight with it ("Not connected to Primary Component"); the client moves to another node,
		// and the runner counts that COMMIT as in doubt, never as acknowledged.
		1180: true,
		1077: true, // ER_NORMAL_SHUTDOWN
		1927: true, // ER_CONNECTION_KILLED
		2006: true, // CR_SERVER_GONE_ERROR
		2013: true, // CR_SERVER_LOST
	}
)

// IsConnectionLost reports whether err means the connection is gone or its server cannot serve
// it any more, so the client must reconnect before its next transaction.
func IsConnectionLost(err error) bool {
	if err == nil {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return lostPostgres[pe.Code] || strings.HasPrefix(pe.Code, "08")
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return lostMySQL[me.Number]
	}
	var ce *ConnectError
	var ne net.Error
	return errors.As(err, &ce) || errors.As(err, &ne) ||
		errors.Is(err, driver.ErrBadConn) || errors.Is(err, mysql.ErrInvalidConn) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, syscall.ETIMEDOUT) || errors.Is(err, syscall.EHOSTUNREACH) ||
		pgconn.Timeout(err) || errors.Is(err, pgconn.ErrConnClosed)
}
