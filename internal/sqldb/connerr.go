package sqldb

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
)

// ConnectReason says why a connection could not be opened.
type ConnectReason int

const (
	ConnectFailed      ConnectReason = iota // none of the below
	Unreachable                             // refused, no route, unknown host
	NoAnswer                                // TCP connected but no answer within the connect timeout
	WrongProtocol                           // the server answered in another protocol
	BadCredentials                          // wrong user or password
	NoDatabase                              // the database does not exist
	TooManyConnections                      // the server has no connection slot left
	TLSFailed                               // the TLS the DSN asked for could not be set up
	Interrupted                             // the caller's context ended (Ctrl-C)
)

// ConnectError is a failed Open. Its message is one line that names the problem and the fix and
// never contains the password.
type ConnectError struct {
	Reason ConnectReason
	msg    string
	Err    error // the driver's error
}

func (e *ConnectError) Error() string { return e.msg }
func (e *ConnectError) Unwrap() error { return e.Err }

// IsTooManyConnections reports whether err is a connection refused for want of a free slot: an
// input problem (too many --threads for the server's max_connections), not a failed run.
func IsTooManyConnections(err error) bool {
	var ce *ConnectError
	return errors.As(err, &ce) && ce.Reason == TooManyConnections
}

// describeConnectError turns a driver's connection failure into one line that says what to fix.
// ctx is the caller's context (not the one bounded by the connect timeout).
func describeConnectError(ctx context.Context, t Target, timeout time.Duration, err error) error {
	addr := net.JoinHostPort(t.Host, strconv.Itoa(t.Port))
	reason, msg := classifyConnectError(ctx, t, addr, timeout, err)
	if t.Password != "" && t.Password != t.User && strings.Contains(msg, t.Password) {
		msg = strings.ReplaceAll(msg, t.Password, "****")
	}
	return &ConnectError{Reason: reason, msg: msg, Err: err}
}

func classifyConnectError(ctx context.Context, t Target, addr string, timeout time.Duration, err error) (ConnectReason, string) {
	proto, other := "PostgreSQL", "MySQL/MariaDB"
	if t.Kind.MySQLFamily() {
		proto, other = "MySQL", "PostgreSQL"
	}
	var netErr net.Error
	var parseErr *pgconn.ParseConfigError
	switch {
	case errors.As(err, &parseErr) && errors.Unwrap(parseErr) != nil:
		// pgconn quotes its whole connection string; the cause is what the user can act on.
		return ConnectFailed, fmt.Sprintf("bad --target %s: %v", t.Redacted(), errors.Unwrap(parseErr))
	case ctx.Err() != nil:
		return Interrupted, fmt.Sprintf("interrupted while connecting to %s (%v)", t.Redacted(), ctx.Err())
	case isTooManyConnections(err):
		return TooManyConnections, fmt.Sprintf("the server at %s has no connection slot left (%s): lower --threads, or raise the server's max_connections (or this user's connection limit)", addr, driverCode(err))
	case hasCode(err, nil, []uint16{3159}):
		return TLSFailed, fmt.Sprintf("the server at %s accepts only TLS connections (require_secure_transport): add ssl-mode=REQUIRED (or VERIFY_CA with ssl-ca=) to --target", addr)
	case hasCode(err, []string{"28000"}, nil):
		// pg_hba.conf refused the connection: the server's message says for which host, user,
		// database and encryption; TLS is off unless asked, so a hostssl-only server lands here.
		return BadCredentials, fmt.Sprintf("the server at %s refused the connection: %s; fix pg_hba.conf, or add sslmode=require to --target if the server accepts only TLS", addr, serverMessage(err))
	case hasCode(err, []string{"28P01"}, []uint16{1045, 1698}):
		return BadCredentials, fmt.Sprintf("the server at %s refused user %q: wrong user or password; fix the user:password in --target (or FAIRBENCH_PASSWORD, password_file=)", t.Redacted(), t.User)
	case hasCode(err, []string{"3D000"}, []uint16{1049}):
		return NoDatabase, fmt.Sprintf("database %q does not exist on %s: create it first (CREATE DATABASE %s)", t.Database, t.Redacted(), t.Database)
	case isTLSError(err):
		return TLSFailed, fmt.Sprintf("TLS to %s failed: %s; fix the DSN's TLS options (sslmode/sslrootcert, ssl-mode/ssl-ca) or the server's certificate", t.Redacted(), lastLine(err.Error()))
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &netErr) && netErr.Timeout()):
		return NoAnswer, fmt.Sprintf("no answer from %s within %s (connect_timeout): the server is stopped or overloaded, or it does not speak %s's protocol (is it %s?); raise connect_timeout= in --target if it is just slow", addr, timeout, proto, other)
	case errors.Is(err, syscall.ECONNREFUSED):
		return Unreachable, fmt.Sprintf("cannot reach %s: connection refused; is the server running and listening on %s?", t.Redacted(), addr)
	case isNetworkError(err):
		return Unreachable, fmt.Sprintf("cannot reach %s: %s; check the host and port", t.Redacted(), lastLine(err.Error()))
	case isWrongProtocol(t.Kind, err) && pgTLSRequired(t):
		return TLSFailed, fmt.Sprintf("the server at %s refused TLS, or does not speak PostgreSQL's protocol: turn ssl on in the server, or use sslmode=disable in --target", addr)
	case isWrongRole(err):
		// target_session_attrs: the node answered, but is not the kind asked for (a replica, or a
		// leader being demoted); Open goes on to the next host of a list.
		return ConnectFailed, fmt.Sprintf("the server at %s is not what target_session_attrs=%s asks for (%s): give the cluster's other nodes in --target, or wait for its failover", addr, t.Params.Get("target_session_attrs"), lastLine(err.Error()))
	case isWrongProtocol(t.Kind, err):
		return WrongProtocol, fmt.Sprintf("the server at %s does not speak %s's protocol; is it %s? Fix the scheme or the port in --target", addr, proto, other)
	}
	return ConnectFailed, fmt.Sprintf("cannot connect to %s: %s", t.Redacted(), lastLine(err.Error()))
}

// serverMessage is the server's own message text (which never holds the password).
func serverMessage(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Message
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Message
	}
	return lastLine(err.Error())
}

func driverCode(err error) string {
	if t, ok := engineName(err); ok {
		return t + " " + ErrorCode(err)
	}
	return "no free slot"
}

func engineName(err error) (string, bool) {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return "SQLSTATE", true
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return "error", true
	}
	return "", false
}

func isNetworkError(err error) bool {
	var oe *net.OpError
	var dnsErr *net.DNSError
	return errors.As(err, &oe) || errors.As(err, &dnsErr)
}

func isTLSError(err error) bool {
	var ua x509.UnknownAuthorityError
	var he x509.HostnameError
	var ci x509.CertificateInvalidError
	var cv *tls.CertificateVerificationError
	var ra tls.RecordHeaderError
	var alert tls.AlertError
	return errors.Is(err, mysql.ErrNoTLS) || errors.As(err, &ua) || errors.As(err, &he) || errors.As(err, &ci) ||
		errors.As(err, &cv) || errors.As(err, &ra) || errors.As(err, &alert)
}

// pgTLSRequired: the DSN forbids plaintext, so pgconn's untyped "server refused TLS connection"
// is the likely reason for an answer that is not PostgreSQL's.
func pgTLSRequired(t Target) bool {
	m := t.Params.Get("sslmode")
	return t.Kind == Postgres && (m == "require" || m == "verify-ca" || m == "verify-full")
}

// isWrongProtocol: an answer that is neither an error of the engine nor a network failure. A
// MySQL server greets first, so pgconn reads a message it does not know; a PostgreSQL server
// answers go-sql-driver/mysql's first packet with bytes that are no MySQL packet.
func isWrongRole(err error) bool {
	for _, e := range []error{pgconn.ErrReadOnlyConnection, pgconn.ErrReadWriteConnection, pgconn.ErrPrimaryConnection, pgconn.ErrStandbyConnection} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

func isWrongProtocol(k Kind, err error) bool {
	if _, ok := engineName(err); ok {
		return false
	}
	if k.MySQLFamily() {
		return errors.Is(err, mysql.ErrMalformPkt) || errors.Is(err, mysql.ErrInvalidConn) || errors.Is(err, mysql.ErrOldProtocol)
	}
	var ce *pgconn.ConnectError
	return errors.As(err, &ce)
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndex(s, "\n"); i >= 0 {
		return s[i+1:]
	}
	return s
}
