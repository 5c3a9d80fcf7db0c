package sqldb_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/sqldb/fakeconn"
)

// InsertLines turns the loaders' text rows into INSERTs: NULL for \N, escapes undone, a value
// that would need an escape sent as a hex literal, and a new statement about every mebibyte.
func TestInsertLines(t *testing.T) {
	c := fakeconn.New(sqldb.MySQL)
	lines := "1\tplain\t\\N\n2\tit's\\\\ok\t\\t\n"
	if err := sqldb.InsertLines(context.Background(), c, "t", []string{"id", "s", "x"}, strings.NewReader(lines)); err != nil {
		t.Fatal(err)
	}
	want := `INSERT INTO t (id, s, x) VALUES ('1','plain',NULL),('2',X'697427735c6f6b',X'09')`
	if len(c.Calls) != 1 || c.Calls[0].SQL != want {
		t.Fatalf("sent %+v\nwant %s", c.Calls, want)
	}

	c = fakeconn.New(sqldb.MySQL)
	var b strings.Builder
	const rows = 30000
	for i := 1; i <= rows; i++ {
		fmt.Fprintf(&b, "%d\t%s\n", i, strings.Repeat("x", 60))
	}
	if err := sqldb.InsertLines(context.Background(), c, "t", []string{"id", "s"}, strings.NewReader(b.String())); err != nil {
		t.Fatal(err)
	}
	sent := 0
	for _, call := range c.Calls {
		if len(call.SQL) > 1<<20+200 {
			t.Errorf("a statement of %d bytes, over the batch", len(call.SQL))
		}
		sent += strings.Count(call.SQL, "),(") + 1
	}
	if len(c.Calls) < 2 || sent != rows {
		t.Errorf("%d statements carrying %d rows, want several carrying %d", len(c.Calls), sent, rows)
	}
}

func TestLocalInfileRefusedIsNarrow(t *testing.T) {
	if sqldb.LocalInfileRefused(fmt.Errorf("connection reset")) {
		t.Error("an error that is not the server's refusal counted as one")
	}
}
