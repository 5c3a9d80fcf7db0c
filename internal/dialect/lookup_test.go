package dialect

import (
	"strings"
	"testing"

	"github.com/fairbench/fairbench/internal/sqldb"
)

// A kind with no dialect is refused by name, never served as PostgreSQL's.
func TestUnknownKindRefused(t *testing.T) {
	for _, k := range []sqldb.Kind{sqldb.Postgres, sqldb.MySQL, sqldb.MariaDB} {
		if d, err := Lookup(k); err != nil || d.Kind() != k {
			t.Errorf("Lookup(%s) = %v, %v", k, d, err)
		}
	}
	if _, err := Lookup("cockroach"); err == nil || !strings.Contains(err.Error(), `engine kind "cockroach" has no dialect`) {
		t.Errorf("Lookup(cockroach) = %v, want it refused by name", err)
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(error).Error(), "cockroach") {
			t.Errorf("For(cockroach) recovered %v, want a panic naming the kind", r)
		}
	}()
	For("cockroach")
}
