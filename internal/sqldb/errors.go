package sqldb

import (
	"errors"
	"strconv"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
)

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
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == "42P01"
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number == 1146
	}
	return false
}
