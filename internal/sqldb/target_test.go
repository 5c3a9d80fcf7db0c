package sqldb

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseTarget(t *testing.T) {
	cases := []struct {
		dsn      string
		kind     Kind
		port     int
		redacted string
		errHas   string
	}{
		{dsn: "postgres://bob:s3cret@db.local:6543/bench", kind: Postgres, port: 6543, redacted: "postgres://bob@db.local:6543/bench"},
		{dsn: "postgresql://bob@127.0.0.1/bench", kind: Postgres, port: 5432, redacted: "postgres://bob@127.0.0.1:5432/bench"},
		{dsn: "mysql://root:pw@127.0.0.1:3307/fb", kind: MySQL, port: 3307, redacted: "mysql://root@127.0.0.1:3307/fb"},
		{dsn: "mariadb://root@127.0.0.1/fb", kind: MariaDB, port: 3306, redacted: "mariadb://root@127.0.0.1:3306/fb"},
		{dsn: "", errHas: "no target given"},
		{dsn: "oracle://x@h/db", errHas: "scheme"},
		{dsn: "postgres://u:pw@h:99999/db", errHas: "port"},
		{dsn: "postgres://u:pw@h:5432", errHas: "names no database"},
		{dsn: "not a url", errHas: "expected a URL"},
		// A cluster's node list: the first is Host/Port, the rest are spread over by Open.
		{dsn: "mariadb://root:pw@127.0.0.1:3401,127.0.0.1:3402,127.0.0.2/fb", kind: MariaDB, port: 3401,
			redacted: "mariadb://root@127.0.0.1:3401,127.0.0.1:3402,127.0.0.2:3306/fb"},
		{dsn: "mysql://root:pw@127.0.0.1:3401,127.0.0.1:99999/fb", errHas: "port"},
		{dsn: "mysql://root:pw@127.0.0.1:3401,/fb", errHas: "empty host"},
		// A postgres-ha cluster: pgconn's target_session_attrs picks the leader among the nodes.
		{dsn: "postgres://u:pw@h1:5432,h2:5433/db?target_session_attrs=read-write", kind: Postgres, port: 5432,
			redacted: "postgres://u@h1:5432,h2:5433/db?target_session_attrs=read-write"},
	}
	for _, c := range cases {
		t.Run(c.dsn, func(t *testing.T) {
			tg, err := ParseTarget(c.dsn)
			if c.errHas != "" {
				wantParseError(t, err, c.errHas, "pw", "s3cret")
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tg.Kind != c.kind || tg.Port != c.port || tg.Redacted() != c.redacted {
				t.Fatalf("got kind %s port %d redacted %s", tg.Kind, tg.Port, tg.Redacted())
			}
		})
	}
}

// wantParseError fails unless err contains has and none of secrets.
func wantParseError(t *testing.T, err error, has string, secrets ...string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), has) {
		t.Fatalf("err = %v, want one containing %q", err, has)
	}
	for _, s := range secrets {
		if strings.Contains(err.Error(), s) {
			t.Fatalf("the error shows %q: %v", s, err)
		}
	}
}

func TestDollarPlaceholders(t *testing.T) {
	cases := map[string]string{
		"SELECT c FROM t WHERE id=?":                    "SELECT c FROM t WHERE id=$1",
		"SELECT ? , '?' FROM t WHERE a BETWEEN ? AND ?": "SELECT $1 , '?' FROM t WHERE a BETWEEN $2 AND $3",
		"BEGIN": "BEGIN",
	}
	for in, want := range cases {
		if got := dollarPlaceholders(in); got != want {
			t.Errorf("%q -> %q, want %q", in, got, want)
		}
	}
}

// TestTargetOptions: every option is honoured or rejected in one line, and none is dropped.
func TestTargetOptions(t *testing.T) {
	cases := []struct {
		dsn     string
		errHas  string
		timeout time.Duration
		pw      string
		params  string
	}{
		{dsn: "postgres://u:pw@h/db", timeout: DefaultConnectTimeout, pw: "pw"},
		{dsn: "postgres://u@h/db?connect_timeout=3", timeout: 3 * time.Second},
		{dsn: "mysql://u@h/db?connect_timeout=2.5s", timeout: 2500 * time.Millisecond},
		{dsn: "postgres://u@h/db?connect_timeout=0", errHas: "connect_timeout"},
		{dsn: "postgres://u@h/db?password=pw", pw: "pw", timeout: DefaultConnectTimeout},
		{dsn: "postgres://u:pw@h/db?password=pw", errHas: "password twice"},
		{dsn: "postgres://u@h/db?sslmode=verify-full&sslrootcert=/ca.pem", params: "sslmode=verify-full&sslrootcert=%2Fca.pem", timeout: DefaultConnectTimeout},
		{dsn: "postgres://u@h/db?sslmode=sometimes", errHas: "sslmode"},
		{dsn: "postgres://u@h/db?tls=true", errHas: "option tls is not one fairbench takes for postgres"},
		{dsn: "mariadb://u@h/db?ssl-mode=REQUIRED", params: "ssl-mode=REQUIRED", timeout: DefaultConnectTimeout},
		{dsn: "mariadb://u@h/db?ssl-mode=REQUIRED&tls=true", errHas: "both tls= and ssl-mode="},
		{dsn: "mysql://u@h/db?ssl-mode=maybe", errHas: "ssl-mode"},
		{dsn: "mysql://u@h/db?tls=custom", errHas: "bad --target tls"},
		{dsn: "mysql://u@h/db?ssl-cert=/c.pem&ssl-mode=REQUIRED", errHas: "ssl-cert and ssl-key"},
		{dsn: "mysql://u@h/db?ssl-ca=/ca.pem&ssl-mode=DISABLED", errHas: "ssl-ca/ssl-cert with TLS disabled"},
		{dsn: "mysql://u@h/db?sslmode=require", errHas: "option sslmode is not one fairbench takes for mysql"},
		{dsn: "mysql://u@h/db?hunter2secret=1", errHas: "(name not shown)"},
		{dsn: "mysql://u@h/db?tls=true&tls=false", errHas: "more than once"},
	}
	for _, c := range cases {
		t.Run(c.dsn, func(t *testing.T) {
			tg, err := ParseTarget(c.dsn)
			if c.errHas != "" {
				wantParseError(t, err, c.errHas, "hunter2")
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tg.ConnectTimeout != c.timeout || tg.Password != c.pw || tg.Params.Encode() != c.params {
				t.Fatalf("timeout %v password %q params %q", tg.ConnectTimeout, tg.Password, tg.Params.Encode())
			}
			if strings.Contains(tg.Redacted(), "password") {
				t.Fatalf("Redacted shows the password option: %s", tg.Redacted())
			}
		})
	}
}

func TestResolvePassword(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "pw")
	if err := os.WriteFile(file, []byte("from-file\nignored\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"FAIRBENCH_PASSWORD": "", "PGPASSWORD": "pg-env", "MYSQL_PWD": "my-env"}
	getenv := func(k string) string { return env[k] }
	cases := []struct {
		dsn, fbEnv, want, errHas string
	}{
		{dsn: "postgres://u:inline@h/db", fbEnv: "fb-env", want: "inline"},
		{dsn: "postgres://u@h/db?password_file=" + file, fbEnv: "fb-env", want: "from-file"},
		{dsn: "postgres://u@h/db", fbEnv: "fb-env", want: "fb-env"},
		{dsn: "postgres://u@h/db", want: "pg-env"},
		{dsn: "mariadb://u@h/db", want: "my-env"},
		{dsn: "postgres://u:inline@h/db?password_file=" + file, errHas: "password and password_file"},
		{dsn: "postgres://u@h/db?password_file=" + filepath.Join(dir, "missing"), errHas: "cannot read"},
	}
	for _, c := range cases {
		t.Run(c.dsn, func(t *testing.T) {
			env["FAIRBENCH_PASSWORD"] = c.fbEnv
			tg, err := ParseTarget(c.dsn)
			if err != nil {
				t.Fatal(err)
			}
			err = tg.ResolvePassword(getenv)
			if c.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), c.errHas) {
					t.Fatalf("err = %v, want %q", err, c.errHas)
				}
				return
			}
			if err != nil || tg.Password != c.want {
				t.Fatalf("password %q, err %v; want %q", tg.Password, err, c.want)
			}
		})
	}
}

// FuzzParseTarget: whatever the DSN's shape, no part of the password reaches an error message or
// the redacted target. The password goes in raw (unescaped), in the userinfo or as ?password=.
func FuzzParseTarget(f *testing.F) {
	f.Add("postgres", "bob", "s3cr/et", "db.local", "5432", "bench", "sslmode=disable", false)
	f.Add("mysql", "root", "pa:ss@w?rd", "127.0.0.1", "99999", "fb", "", false)
	f.Add("mariadb", "u", "p#w0rd", "h", "x", "db", "tls=true", true)
	f.Add("postgresql", "", "hunter22", "h", "", "", "password=x", true)
	f.Fuzz(func(t *testing.T, scheme, user, password, host, port, db, query string, inQuery bool) {
		build := func(password string) string {
			dsn := scheme + "://" + user
			if !inQuery {
				dsn += ":" + password
			}
			dsn += "@" + host
			if port != "" {
				dsn += ":" + port
			}
			dsn += "/" + db
			q := query
			if inQuery {
				q += "&password=" + password
			}
			if q != "" {
				dsn += "?" + q
			}
			return dsn
		}
		dsn := build(password)
		shown := shownFor(dsn)
		// The same DSN with the password's letters and digits swapped shows the same fixed text:
		// a piece of the password found in both comes from that text, not from the password.
		control := shownFor(build(swapAlnum(password)))
		others := scheme + "://" + user + "@" + host + ":" + port + "/" + db + "?" + query
		if leak := leakedPart(password, others+control, shown); leak != "" {
			t.Fatalf("DSN %q: %q shows %q of the password", dsn, shown, leak)
		}
	})
}

// shownFor is what fairbench may print about dsn: the parse error, or the redacted target.
func shownFor(dsn string) string {
	tg, err := ParseTarget(dsn)
	if err != nil {
		return err.Error()
	}
	return tg.Redacted()
}

// swapAlnum changes every letter and digit and keeps the rest, so the DSN keeps its shape.
func swapAlnum(s string) string {
	b := []byte(s)
	for i, c := range b {
		switch {
		case c >= 'a' && c <= 'z':
			b[i] = 'a' + (c-'a'+13)%26
		case c >= 'A' && c <= 'Z':
			b[i] = 'A' + (c-'A'+13)%26
		case c >= '0' && c <= '9':
			b[i] = '0' + (c-'0'+5)%10
		}
	}
	return string(b)
}

// leakedPart returns a piece of password (4 bytes or more) that shown contains and that
// explained (the rest of the DSN, the fixed text) does not, or "".
func leakedPart(password, explained, shown string) string {
	const minLen = 4
	for i := 0; i+minLen <= len(password); i++ {
		piece := password[i : i+minLen]
		for _, form := range []string{piece, url.QueryEscape(piece), url.PathEscape(piece)} {
			if strings.Contains(shown, form) && !strings.Contains(explained, piece) && !strings.Contains(explained, form) {
				return piece
			}
		}
	}
	return ""
}

// TestOptionErrors: options pgconn or the TLS set-up refuse when connecting come back in one
// line that names the option, without pgconn's quoted connection string.
func TestOptionErrors(t *testing.T) {
	for _, dsn := range []string{
		"postgres://u:pw@127.0.0.1:1/db?sslmode=verify-ca&sslrootcert=/nonexistent/ca.pem",
		"mysql://u:pw@127.0.0.1:1/db?ssl-mode=VERIFY_CA&ssl-ca=/nonexistent/ca.pem",
	} {
		tg, err := ParseTarget(dsn)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Open(context.Background(), tg)
		if err == nil || !strings.Contains(err.Error(), "/nonexistent/ca.pem") || strings.Contains(err.Error(), "cannot parse") {
			t.Fatalf("%s: %v", dsn, err)
		}
		t.Log(err)
	}
}

// A password holding '@' and then '?' or '#' is refused before any of it can be taken for the
// host; an '@' in the options after the path is not.
func TestUserinfoWithSpecialCharacters(t *testing.T) {
	for _, tc := range []struct {
		dsn    string
		refuse bool
	}{
		{"mysql://u:@000?@h:3306/db", true},
		{"postgres://u:a@b#c@h/db", true},
		{"postgres://u:a/b@h/db", true},
		{"postgres://u@h/db?password=p@ss", false},
		{"mysql://u:p%40ss%3F@h:3306/db", false},
		// A password holding "@" and "/": its head would be the host, its tail the database.
		{"postgres://0:@000/@0:0/0", true},
		{"postgres://u:p@h/db%40x", false},
		{"postgres://u:p@h/db?application_name=a@b", false},
		// A password holding '@', '/' and '?' whose tail reads as an option's value.
		{"postgres://u:@h/x?application_name=a@host:5432/db", true},
		{"postgres://u@h/db?password=p@ss/word", true},
		{"postgres://u@h/db?sslrootcert=/etc/ssl/ca.pem&password=p@ss", false},
		{"postgres://0:@000#/@0:0/0", true},
		// No '@' before the host's end: every later '@' is the password's ("u:12?34@h").
		{"mysql://u:12?34@h", true},
		{"postgres://h/db?password=p@ss", true},
		// An '@' after a '#' in the options, or in the database name.
		{"postgres://u@h/db?password=a@b#c@d", true},
		{"postgres://u:p@h/d@b", true},
	} {
		_, err := ParseTarget(tc.dsn)
		if refused := err != nil && strings.Contains(err.Error(), "percent-encode them"); refused != tc.refuse {
			t.Errorf("%s: %v, want refused %v", tc.dsn, err, tc.refuse)
		}
	}
}

func TestOnLoopback(t *testing.T) {
	for host, want := range map[string]bool{"127.0.0.1": true, "::1": true, "localhost": true, "10.0.0.5": false, "db.example": false} {
		if got := (Target{Host: host}).OnLoopback(); got != want {
			t.Errorf("%s: %v, want %v", host, got, want)
		}
	}
}
