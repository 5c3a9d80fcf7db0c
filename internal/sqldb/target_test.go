package sqldb

import (
	"strings"
	"testing"
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
	}
	for _, c := range cases {
		t.Run(c.dsn, func(t *testing.T) {
			tg, err := ParseTarget(c.dsn)
			if c.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), c.errHas) {
					t.Fatalf("err = %v, want one containing %q", err, c.errHas)
				}
				if strings.Contains(err.Error(), "pw") || strings.Contains(err.Error(), "s3cret") {
					t.Fatalf("error leaks the password: %v", err)
				}
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
