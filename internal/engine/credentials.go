package engine

import (
	"crypto/rand"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/fairbench/fairbench/internal/engine/discovery"
)

// Every throwaway server (a cluster: every node) gets a password of its own, drawn when it starts
// and kept in memory only: its DSN carries it to fairbench's own clients, and nothing prints or
// stores it (results and messages use the redacted DSN; serve hands it on in a root-only file).
// A fixed password, or none, let any local user log in as the server's superuser on its loopback
// port: on PostgreSQL COPY ... TO PROGRAM then runs commands as the postgres user, on MySQL and
// MariaDB (running as root) SELECT ... INTO OUTFILE writes files as root.

// newPassword is 26 characters of base32 (128 bits of crypto/rand): safe in a URL's userinfo,
// inside SQL quotes and in YAML without escaping.
func newPassword() string { return rand.Text() }

// superuser is the account fairbench logs in as on a server it starts.
func (s *Server) superuser() string {
	if s.Kind == discovery.Postgres {
		return "fairbench"
	}
	return "root"
}

// dsnFor is a DSN for the fairbench database on the given host:port list, with this server's
// superuser and password.
func (s *Server) dsnFor(addrs []string, query string) string {
	u := url.URL{Scheme: s.Kind, User: url.UserPassword(s.superuser(), s.password), Host: strings.Join(addrs, ","), Path: "/fairbench", RawQuery: query}
	return u.String()
}

// sqlLiteral quotes a password (base32, so no quote or backslash) for an SQL statement.
func sqlLiteral(pw string) string { return "'" + strings.ReplaceAll(pw, "'", "''") + "'" }

// mysqlAccountsSQL is what a MySQL-family data directory runs once, before the server first
// listens: the superuser on TCP from 127.0.0.1 and on the socket, both behind the server's
// password, and no other root account (MariaDB's install adds root@::1 and root@HOSTNAME).
func mysqlAccountsSQL(kind, pw string) string {
	lit := sqlLiteral(pw)
	var b strings.Builder
	if kind == discovery.MariaDB {
		// mariadbd --bootstrap runs without the grant tables loaded; FLUSH PRIVILEGES loads them,
		// so that account statements work.
		b.WriteString("FLUSH PRIVILEGES;\n")
		b.WriteString("DELETE FROM mysql.global_priv WHERE User = 'root' AND Host NOT IN ('localhost', '127.0.0.1');\n")
		b.WriteString("FLUSH PRIVILEGES;\n")
	}
	fmt.Fprintf(&b, "ALTER USER 'root'@'localhost' IDENTIFIED BY %s;\n", lit)
	fmt.Fprintf(&b, "CREATE USER IF NOT EXISTS 'root'@'127.0.0.1' IDENTIFIED BY %s;\n", lit)
	fmt.Fprintf(&b, "ALTER USER 'root'@'127.0.0.1' IDENTIFIED BY %s;\n", lit)
	b.WriteString("GRANT ALL PRIVILEGES ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION;\n")
	return b.String()
}

// DSNWithPasswordFile is the server's DSN for someone else (serve prints it): the password left
// out and given instead as password_file=, a file beside the server's owner record that only this
// user can read. Stop removes the file with the record.
func (s *Server) DSNWithPasswordFile() (string, error) {
	s.mu.Lock()
	rec := s.record
	s.mu.Unlock()
	if rec == "" {
		return "", errors.New("the server has no owner record to keep its password beside")
	}
	path := passwordFileOf(rec)
	f, err := os.CreateTemp(RecordDir, ".password-*")
	if err != nil {
		return "", fmt.Errorf("password file: %w", err)
	}
	_, err = f.WriteString(s.password + "\n")
	if err = errors.Join(err, f.Close()); err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return "", fmt.Errorf("password file: %w", err)
	}
	query := "password_file=" + url.QueryEscape(path)
	if s.Kind == discovery.Postgres {
		query = "sslmode=disable&" + query
	}
	u := url.URL{Scheme: s.Kind, User: url.User(s.superuser()), Host: "127.0.0.1:" + itoa(s.Port), Path: "/fairbench", RawQuery: query}
	return u.String(), nil
}

// passwordFileOf is where DSNWithPasswordFile keeps the password of the server whose record is rec.
func passwordFileOf(rec string) string { return strings.TrimSuffix(rec, ".json") + ".password" }
