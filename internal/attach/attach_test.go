package attach

import (
	"strings"
	"testing"

	"github.com/fairbench/fairbench/internal/sqldb"
)

// A host list's node is its one host, with target_session_attrs dropped so that a replica is
// read too; the list's other options stay.
func TestNodeTarget(t *testing.T) {
	for _, tc := range []struct{ dsn, addr, want string }{
		{"postgres://u@127.0.0.1:5001,127.0.0.1:5002/db?sslmode=disable&target_session_attrs=read-write", "127.0.0.1:5002", "postgres://u@127.0.0.1:5002/db?sslmode=disable"},
		{"mariadb://root@127.0.0.1:3301,127.0.0.1:3302,127.0.0.1:3303/fb", "127.0.0.1:3303", "mariadb://root@127.0.0.1:3303/fb"},
	} {
		tg, err := sqldb.ParseTarget(tc.dsn)
		if err != nil {
			t.Fatal(err)
		}
		one := NodeTarget(tg, tc.addr)
		if got := one.Redacted(); got != tc.want || len(one.Addrs) != 0 {
			t.Errorf("%s, node %s: %s, want %s", tc.dsn, tc.addr, got, tc.want)
		}
		if strings.Contains(tc.dsn, "target_session_attrs") && tg.Params.Get("target_session_attrs") == "" {
			t.Errorf("%s: the host list lost its target_session_attrs", tc.dsn)
		}
	}
}
