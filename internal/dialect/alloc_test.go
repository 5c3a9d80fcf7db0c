package dialect

import (
	"testing"

	"github.com/fairbench/fairbench/internal/sqldb"
)

// A workload asks for its dialect on every statement (workload.ValueQuery): the answer must cost
// no allocation.
func TestForDoesNotAllocate(t *testing.T) {
	for _, k := range []sqldb.Kind{sqldb.Postgres, sqldb.MySQL, sqldb.MariaDB} {
		if n := testing.AllocsPerRun(100, func() { _ = For(k).Caps().OneTripParameters }); n != 0 {
			t.Errorf("For(%s).Caps(): %v allocations per call", k, n)
		}
	}
}
