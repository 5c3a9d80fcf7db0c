// Package sqldb is fairbench's one door to a database server: it parses targets (DSNs), opens
// single connections through pgx (PostgreSQL) or go-sql-driver/mysql (MySQL, MariaDB), and hides
// each driver's differences behind a small Conn/Stmt interface tuned for the benchmark hot path.
package sqldb

import (
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
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

// DefaultConnectTimeout bounds connecting and the protocol handshake: a server that accepts TCP
// but never answers (a stopped process, another protocol on the port) must not hang fairbench.
// The DSN option connect_timeout (seconds, as libpq takes it, or a duration such as 2.5s)
// changes it.
const DefaultConnectTimeout = 10 * time.Second

// Target is a parsed DSN.
type Target struct {
	Kind Kind
	Host string
	Port int
	// Addrs is every host:port of a host list (mysql://h1:p1,h2:p2/db), Host and Port being the
	// first; nil for a single host. Open spreads connections over them.
	Addrs    []string
	User     string
	Password string
	Database string
	// Params are the DSN's options, validated; password and password_file are never among them.
	Params         url.Values
	ConnectTimeout time.Duration
	// passwordFile is the password_file option: read by ResolvePassword, never printed.
	passwordFile string
}

// Options a DSN may carry, per engine. Anything else is rejected, so no option is silently
// ignored (an ignored sslrootcert would turn verify-ca into a failure nobody can explain).
var (
	commonOptions   = []string{"connect_timeout", "password", "password_file"}
	postgresOptions = []string{"sslmode", "sslrootcert", "sslcert", "sslkey", "sslsni", "passfile", "application_name",
		// read-write: of a host list, only the node that takes writes (pgconn checks each one);
		// prefer-standby: a replica where one answers (compare --read-replicas).
		"target_session_attrs"}
	mysqlOptions = []string{"tls", "ssl-mode", "ssl-ca", "ssl-cert", "ssl-key"}
)

// ParseTarget accepts postgres://, postgresql://, mysql:// and mariadb:// URLs. No error it
// returns contains any part of the password, whatever the DSN's shape.
func ParseTarget(dsn string) (Target, error) {
	var t Target
	if dsn == "" {
		return t, fmt.Errorf("no target given: pass --target postgres://user:pass@host:port/db (or mysql://, mariadb://)")
	}
	if err := checkUserinfo(dsn); err != nil {
		return t, err
	}
	dsn, hosts := splitHostList(dsn)
	u, err := url.Parse(dsn)
	if err != nil || u.Scheme == "" || u.Host == "" {
		// The text is not echoed: an unparseable DSN may still hold a password.
		return t, fmt.Errorf("bad --target: expected a URL like postgres://user:pass@127.0.0.1:5432/db or mysql://user:pass@127.0.0.1:3306/db (percent-encode special characters in the password)")
	}
	switch strings.ToLower(u.Scheme) {
	case "postgres", "postgresql":
		t.Kind, t.Port = Postgres, 5432
	case "mysql":
		t.Kind, t.Port = MySQL, 3306
	case "mariadb":
		t.Kind, t.Port = MariaDB, 3306
	default:
		return t, fmt.Errorf("bad --target scheme: use postgres://, mysql:// or mariadb://")
	}
	if hosts == "" {
		hosts = u.Host
	}
	if err := t.takeHosts(hosts); err != nil {
		return t, err
	}
	if u.User != nil {
		t.User = u.User.Username()
		t.Password, _ = u.User.Password()
	}
	t.Database = strings.TrimPrefix(u.Path, "/")
	if err := t.takeOptions(u.Query()); err != nil {
		return Target{}, err
	}
	if t.Database == "" {
		return t, fmt.Errorf("--target %s names no database: add one, e.g. %s://%s:%d/fairbench", t.Redacted(), t.Kind, t.Host, t.Port)
	}
	return t, nil
}

// splitHostList takes a host list (h1:p1,h2:p2) out of the DSN, which url.Parse would reject,
// leaving its first host in place; hosts is "" for a single host.
func splitHostList(dsn string) (rest, hosts string) {
	scheme, after, ok := strings.Cut(dsn, "://")
	if !ok {
		return dsn, ""
	}
	end := strings.IndexAny(after, "/?#")
	if end < 0 {
		end = len(after)
	}
	at := strings.LastIndex(after[:end], "@") + 1
	hosts = after[at:end]
	first, _, list := strings.Cut(hosts, ",")
	if !list {
		return dsn, ""
	}
	return scheme + "://" + after[:at] + first + after[end:], hosts
}

// takeHosts reads the host, or a comma-separated host list, with optional ports.
func (t *Target) takeHosts(hosts string) error {
	list := strings.Split(hosts, ",")
	defPort := t.Port
	for i, h := range list {
		hu := url.URL{Host: h}
		host, port := hu.Hostname(), defPort
		if p := hu.Port(); p != "" {
			// The port is not echoed either: with a stray ':' it may be part of a password.
			n, err := strconv.Atoi(p)
			if err != nil || n <= 0 || n > 65535 {
				return fmt.Errorf("bad --target port: use a number from 1 to 65535 after the host")
			}
			port = n
		}
		if host == "" {
			return fmt.Errorf("bad --target: an empty host in the host list: write host:port,host:port")
		}
		if i == 0 {
			t.Host, t.Port = host, port
		}
		if len(list) > 1 {
			t.Addrs = append(t.Addrs, net.JoinHostPort(host, strconv.Itoa(port)))
		}
	}
	return nil
}

// checkUserinfo rejects a DSN whose user:password holds an unescaped '/', '?' or '#': a URL
// parser would take the password's tail for the path, query or fragment and its head for a
// host and port, and any message about those would show it.
func checkUserinfo(dsn string) error {
	_, rest, ok := strings.Cut(dsn, "://")
	if !ok {
		return nil
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		return nil
	}
	if !strayAt(rest[:end], rest[end:]) {
		return nil
	}
	return fmt.Errorf("bad --target: an '@' follows the host, so the user or password seems to hold '/', '?' or '#': percent-encode them (%%2F, %%3F, %%23, '@' as %%40), or give the password in FAIRBENCH_PASSWORD or password_file=PATH")
}

// strayAt says whether the DSN's text after its host (after, from the first '/', '?' or '#')
// holds an '@' that can only be the rest of a password holding '/', '?' or '#'. One rule: an
// '@' after the host is an option value's own (?password=p@ss, ?application_name=a@b) only when
// the host part had its own '@' (user@host), the '@' is in the options (after the '?', before
// any '#': a DSN has no use for a fragment), and no '/' follows it (a real option value is a
// name or a number; a path such as sslrootcert's holds no '@' before its slashes). Anything
// else ("u:@000/@h/db", "u:a?b@h/db", "u:@x#/@h/db") would show the password's head as the host
// or its tail as the database or an option's value.
func strayAt(authority, after string) bool {
	first, last := strings.IndexByte(after, '@'), strings.LastIndexByte(after, '@')
	if first < 0 {
		return false
	}
	options := strings.IndexByte(after, '?')
	fragment := strings.IndexByte(after, '#')
	inOptions := options >= 0 && options < first && (fragment < 0 || fragment > last)
	return !strings.Contains(authority, "@") || !inOptions || strings.Contains(after[first:], "/")
}

// takeOptions validates the DSN's options and moves the ones sqldb handles itself out of Params.
func (t *Target) takeOptions(q url.Values) error {
	allowed := slices.Concat(commonOptions, postgresOptions)
	if t.Kind.MySQLFamily() {
		allowed = slices.Concat(commonOptions, mysqlOptions)
	}
	for name, vals := range q {
		if !slices.Contains(allowed, name) {
			return unknownOption(t.Kind, name, allowed)
		}
		if len(vals) > 1 {
			return fmt.Errorf("--target gives option %s more than once: give it once", optionName(name))
		}
	}
	if pw := q.Get("password"); q.Has("password") {
		if t.Password != "" {
			return fmt.Errorf("--target gives the password twice (user:password@ and password=): give it once")
		}
		t.Password = pw
	}
	t.passwordFile = q.Get("password_file")
	if q.Has("password_file") && t.passwordFile == "" {
		return fmt.Errorf("--target option password_file is empty: give the path of a file holding the password")
	}
	t.ConnectTimeout = DefaultConnectTimeout
	if q.Has("connect_timeout") {
		d, err := parseTimeout(q.Get("connect_timeout"))
		if err != nil {
			return err
		}
		t.ConnectTimeout = d
	}
	for _, own := range commonOptions {
		q.Del(own)
	}
	t.Params = q
	return checkTLSOptions(t.Kind, q)
}

func parseTimeout(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		var secs float64
		secs, err = strconv.ParseFloat(s, 64)
		d = time.Duration(secs * float64(time.Second))
	}
	if err != nil || d <= 0 || d > 24*time.Hour {
		return 0, fmt.Errorf("bad --target connect_timeout %q: give seconds (e.g. 10) or a duration (e.g. 2.5s), more than 0", s)
	}
	return d, nil
}

// knownAnywhere are option names worth echoing in an error: a name outside this list is not
// shown, since a mistyped DSN can put a password where an option's name belongs.
var knownAnywhere = slices.Concat(commonOptions, postgresOptions, mysqlOptions,
	[]string{"ssl", "sslMode", "sslmode", "ssl_mode", "ssl_ca", "ssl_cert", "ssl_key", "sslca", "sslpassword",
		"readTimeout", "writeTimeout", "timeout", "charset", "collation", "parseTime", "loc", "statement_timeout"})

func optionName(name string) string {
	if slices.Contains(knownAnywhere, name) {
		return name
	}
	return "(name not shown)"
}

func unknownOption(k Kind, name string, allowed []string) error {
	shown := slices.Clone(allowed)
	shown = slices.DeleteFunc(shown, func(s string) bool { return s == "password" })
	return fmt.Errorf("--target option %s is not one fairbench takes for %s: use %s", optionName(name), k, strings.Join(shown, ", "))
}

// OnLoopback says whether the target's (first) host is this machine's loopback: a server whose
// processes and cgroup fairbench can look at.
func (t Target) OnLoopback() bool {
	ip := net.ParseIP(t.Host)
	return (ip != nil && ip.IsLoopback()) || t.Host == "localhost"
}

// Redacted is the target as a URL without its password: the only form fairbench prints or stores.
func (t Target) Redacted() string {
	u := url.URL{Scheme: string(t.Kind), Host: net.JoinHostPort(t.Host, strconv.Itoa(t.Port)), Path: "/" + t.Database}
	if len(t.Addrs) > 1 {
		u.Host = strings.Join(t.Addrs, ",")
	}
	if t.User != "" {
		u.User = url.User(t.User)
	}
	if len(t.Params) > 0 {
		u.RawQuery = t.Params.Encode()
	}
	return u.String()
}

// Through is t as a URL to addr instead (a relay that forwards its bytes), without its password
// or options; TLS is off where the protocol would otherwise try it first (PostgreSQL's sslmode
// prefer), since the relay's end is the server's plain port.
func (t Target) Through(addr string) string {
	u := &url.URL{Scheme: string(t.Kind), Host: addr, Path: "/" + t.Database}
	u.User = url.User(t.User)
	if !t.Kind.MySQLFamily() {
		u.RawQuery = "sslmode=disable"
	}
	return u.String()
}

// WithSessionAttrs is t with target_session_attrs set to attrs (read-write, prefer-standby,
// standby...), its other options untouched.
func (t Target) WithSessionAttrs(attrs string) Target {
	params := url.Values{}
	for k, v := range t.Params {
		params[k] = append([]string(nil), v...)
	}
	params.Set("target_session_attrs", attrs)
	t.Params = params
	return t
}
