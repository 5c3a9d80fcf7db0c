package sqldb

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
)

func TestIsConnectionLost(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"deadlock", &mysql.MySQLError{Number: 1213}, false},
		{"duplicate key", &pgconn.PgError{Code: "23505"}, false},
		{"syntax", &pgconn.PgError{Code: "42601"}, false},
		{"plain", errors.New("crediting account 3 changed 0 rows"), false},
		{"admin shutdown", &pgconn.PgError{Code: "57P01"}, true},
		{"connection exception", &pgconn.PgError{Code: "08006"}, true},
		{"read-only replica", fmt.Errorf("commit: %w", &pgconn.PgError{Code: "25006"}), true},
		{"galera non-primary", &mysql.MySQLError{Number: 1047}, true},
		{"galera commit outside the primary component", &mysql.MySQLError{Number: 1180}, true},
		{"server shutdown", &mysql.MySQLError{Number: 1053}, true},
		{"bad conn", driver.ErrBadConn, true},
		{"invalid conn", fmt.Errorf("x: %w", mysql.ErrInvalidConn), true},
		{"eof", io.ErrUnexpectedEOF, true},
		{"reset", &net.OpError{Op: "read", Err: syscall.ECONNRESET}, true},
		{"refused", fmt.Errorf("dial: %w", syscall.ECONNREFUSED), true},
		{"closed", fmt.Errorf("x: %w", pgconn.ErrConnClosed), true},
		{"connect", &ConnectError{Reason: Unreachable, msg: "cannot reach"}, true},
	} {
		if got := IsConnectionLost(c.err); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
