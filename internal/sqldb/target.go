// Package sqldb is fairbench's one door to a database server: it parses targets (DSNs), opens
// single connections through pgx (PostgreSQL) or go-sql-driver/mysql (MySQL, MariaDB), and hides
// each driver's differences behind a small Conn/Stmt interface tuned for the benchmark hot path.
package sqldb

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// Kind is the engine family a target speaks to. MySQL and MariaDB share a wire protocol but are
// different engines, so the scheme the user wrote is recorded.
type Kind string

const (
	Postgres Kind = "postgres"
	MySQL    Kind = "mysql"
	MariaDB  Kind = "mariadb"
)

// Dialect is the SQL family: MySQL and MariaDB share one.
func (k Kind) MySQLFamily() bool { return k == MySQL || k == MariaDB }

// Target is a parsed DSN.
type Target struct {
	Kind     Kind
	Host     string
	Port     int
	User     string
	Password string
	Database string
	Params   url.Values
}

// ParseTarget accepts postgres://, postgresql://, mysql:// and mariadb:// URLs.
func ParseTarget(dsn string) (Target, error) {
	var t Target
	if dsn == "" {
		return t, fmt.Errorf("no target given: pass --target postgres://user:pass@host:port/db (or mysql://, mariadb://)")
	}
	u, err := url.Parse(dsn)
	if err != nil || u.Scheme == "" || u.Host == "" {
		// The text is not echoed: an unparseable DSN may still hold a password.
		return t, fmt.Errorf("bad --target: expected a URL like postgres://user:pass@127.0.0.1:5432/db or mysql://user:pass@127.0.0.1:3306/db")
	}
	switch strings.ToLower(u.Scheme) {
	case "postgres", "postgresql":
		t.Kind, t.Port = Postgres, 5432
	case "mysql":
		t.Kind, t.Port = MySQL, 3306
	case "mariadb":
		t.Kind, t.Port = MariaDB, 3306
	default:
		return t, fmt.Errorf("bad --target scheme %q: use postgres://, mysql:// or mariadb://", u.Scheme)
	}
	t.Host = u.Hostname()
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n <= 0 || n > 65535 {
			return t, fmt.Errorf("bad --target port %q: use a number from 1 to 65535", p)
		}
		t.Port = n
	}
	if u.User != nil {
		t.User = u.User.Username()
		t.Password, _ = u.User.Password()
	}
	t.Database = strings.TrimPrefix(u.Path, "/")
	if t.Database == "" {
		return t, fmt.Errorf("--target %s names no database: add one, e.g. %s://%s:%d/fairbench", t.Redacted(), u.Scheme, t.Host, t.Port)
	}
	t.Params = u.Query()
	return t, nil
}

// Redacted is the target as a URL without its password: the only form fairbench prints or stores.
func (t Target) Redacted() string {
	u := url.URL{Scheme: string(t.Kind), Host: fmt.Sprintf("%s:%d", t.Host, t.Port), Path: "/" + t.Database}
	if t.User != "" {
		u.User = url.User(t.User)
	}
	if len(t.Params) > 0 {
		u.RawQuery = t.Params.Encode()
	}
	return u.String()
}
