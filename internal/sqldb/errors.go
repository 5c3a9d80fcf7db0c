package sqldb

import (
	"errors"
	"strconv"
	"strings"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
)

// Errors are classified by the engines' own codes (SQLSTATE, MySQL error numbers) and Go's error
// types, never by message text: a server's message can contain any words.

// Errors a benchmark client must expect under concurrency and answer by running the transaction
// again (sysbench 1.0.20 ignores and restarts the same set): deadlocks, lock-wait timeouts,
// serialization failures, and the duplicate key that two threads' delete+insert of the same id
// can race into.
var (
	retryablePostgres = map[string]bool{
		"40001": true, // serialization_failure
		"40P01": true, // deadlock_detected
		"55P03": true, // lock_not_available
		"23505": true, // unique_violation
	}
	retryableMySQL = map[uint16]bool{
		1213: true, // ER_LOCK_DEADLOCK
		1205: true, // ER_LOCK_WAIT_TIMEOUT
		1062: true, // ER_DUP_ENTRY
		1020: true, // ER_CHECKREAD (record changed since last read)
	}
)

// IsRetryable reports whether err is a transient concurrency conflict.
func IsRetryable(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return retryablePostgres[pe.Code]
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return retryableMySQL[me.Number]
	}
	return false
}

// ErrorCode is the engine's own code for err (SQLSTATE or MySQL error number), "" if none.
func ErrorCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return strconv.Itoa(int(me.Number))
	}
	return ""
}

// IsUndefinedTable reports whether err says a table does not exist.
func IsUndefinedTable(err error) bool {
	return hasCode(err, []string{"42P01"}, []uint16{1146})
}

// IsReadOnlyTransaction reports whether err is the server refusing a write in a read-only
// transaction (PostgreSQL 25006, MySQL and MariaDB 1792).
func IsReadOnlyTransaction(err error) bool {
	return hasCode(err, []string{"25006"}, []uint16{1792})
}

// hasCode reports whether err is a PostgreSQL error with one of pgCodes or a MySQL/MariaDB error
// with one of myNumbers.
func hasCode(err error, pgCodes []string, myNumbers []uint16) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		for _, c := range pgCodes {
			if pe.Code == c {
				return true
			}
		}
		return false
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		for _, n := range myNumbers {
			if me.Number == n {
				return true
			}
		}
	}
	return false
}

// isTooManyConnections: PostgreSQL's too_many_connections (max_connections, a role's CONNECTION
// LIMIT, "remaining connection slots are reserved"); MySQL's ER_CON_COUNT_ERROR (max_connections),
// ER_TOO_MANY_USER_CONNECTIONS (max_user_connections) and ER_USER_LIMIT_REACHED (an account's
// MAX_USER_CONNECTIONS; when connecting, its only other cause is an hourly connection limit).
func isTooManyConnections(err error) bool {
	return hasCode(err, []string{"53300"}, []uint16{1040, 1203, 1226})
}

// isDiskFull: PostgreSQL's disk_full; MySQL's ER_DISK_FULL, ER_RECORD_FILE_FULL (InnoDB's "table
// is full" when its files cannot grow), and errno 28 (ENOSPC) reported through ER_ERROR_ON_WRITE
// or ER_GET_ERRNO, whose only structured carrier is the number in the message.
func isDiskFull(err error) bool {
	if hasCode(err, []string{"53100"}, []uint16{1021, 1114}) {
		return true
	}
	var me *mysql.MySQLError
	return errors.As(err, &me) && (me.Number == 3 || me.Number == 1030) && strings.Contains(me.Message, "28")
}

// DiskFullError is a statement the server refused because its disk is full: the user must free
// space (or load less), so the command line treats it as input to fix.
type DiskFullError struct{ Err error }

func (e *DiskFullError) Error() string {
	return "the server ran out of disk space (" + e.Err.Error() + "): free space where its data is, or load less data"
}
func (e *DiskFullError) Unwrap() error { return e.Err }

// statementError gives a statement's error its type; it runs only when a statement failed.
func statementError(err error) error {
	if err != nil && isDiskFull(err) {
		return &DiskFullError{Err: err}
	}
	return err
}
