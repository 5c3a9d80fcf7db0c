package dialect_test

import (
	"context"
	"strings"
	"testing"

	"github.com/fairbench/fairbench/internal/dialect"
	"github.com/fairbench/fairbench/internal/testserver"
)

// The same statements explained on every engine give the same access paths in common words: a
// lookup by primary key, a scan of a column without an index, and a join of both.
func TestExplainOnRealServers(t *testing.T) {
	for _, kind := range testserver.Kinds() {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			c := testserver.Conn(t, kind)
			for _, s := range []string{
				"CREATE TABLE items (id int NOT NULL, name varchar(20) NOT NULL, PRIMARY KEY (id))",
				"CREATE TABLE notes (id int NOT NULL, item_id int NOT NULL, body varchar(20) NOT NULL, PRIMARY KEY (id))",
				"INSERT INTO items VALUES (1, 'a'), (2, 'b'), (3, 'c')",
				"INSERT INTO notes VALUES (1, 1, 'x'), (2, 2, 'y')",
			} {
				if err := c.Exec(ctx, s); err != nil {
					t.Fatal(err)
				}
			}
			id := "$1"
			if kind != "postgres" {
				id = "?"
			}
			for _, tc := range []struct{ sql, want string }{
				{"SELECT name FROM items WHERE id = " + id, "items: index lookup"},
				{"SELECT id FROM items WHERE name = 'b'", "items: full scan"},
				{"SELECT n.body FROM notes n JOIN items i ON i.id = n.item_id WHERE n.body = 'x'", "notes: full scan"},
			} {
				var args []any
				if strings.Contains(tc.sql, id) {
					args = []any{2}
				}
				steps, err := dialect.Explain(ctx, c, tc.sql, args...)
				if err != nil {
					t.Fatalf("%s: %v", tc.sql, err)
				}
				if got := dialect.PlanSummary(steps); !strings.Contains(got, tc.want) {
					t.Errorf("%s: plan %q, want %q in it (%+v)", tc.sql, got, tc.want, steps)
				}
			}
		})
	}
}
