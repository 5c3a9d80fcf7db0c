package dialect

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/testserver"
)

// loaderLines are text rows with what a loader must carry through unchanged: a NULL, an empty
// string, escapes (a tab, a newline, a backslash), a quote, and text beyond ASCII.
const loaderLines = "1\tplain\t\\N\n" +
	"2\t\t10.50\n" +
	"3\ttab\\there, newline\\nthere\t-3\n" +
	"4\tit's a back\\\\slash\t0\n" +
	"5\tZürich 東京\t7.25\n"

var loaderWant = [][]string{
	{"1", "plain", ""},
	{"2", "", "10.50"},
	{"3", "tab\there, newline\nthere", "-3.00"},
	{"4", `it's a back\slash`, "0.00"},
	{"5", "Zürich 東京", "7.25"},
}

// The loader takes the same text rows on every engine through its bulk path, and on the MySQL
// family also where the server refuses LOAD DATA LOCAL (local_infile off): then as INSERTs, with
// the same rows as the result. StartLoading names the way the rows will go.
func TestLoaderOnRealServers(t *testing.T) {
	for _, kind := range testserver.Kinds() {
		t.Run(kind, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			c, err := sqldb.Open(ctx, testserver.Database(t, kind))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			modes := []string{"bulk"}
			if c.Kind().MySQLFamily() {
				modes = append(modes, "refused")
			}
			for _, mode := range modes {
				table := "fb_loader_" + mode
				if err := c.Exec(ctx, "CREATE TABLE "+table+" (id INT PRIMARY KEY, s VARCHAR(64), n DECIMAL(6,2))"); err != nil {
					t.Fatal(err)
				}
				var restore func()
				if mode == "refused" {
					restore = refuseLocalInfile(t, ctx, c)
				} else {
					var method string
					if method, restore = LoaderFor(c.Kind()).StartLoading(ctx, c); method != Of(c).Caps().BulkLoad {
						t.Errorf("StartLoading says %q for a server that takes the bulk path", method)
					}
				}
				err := LoaderFor(c.Kind()).Load(ctx, c, table, []string{"id", "s", "n"}, strings.NewReader(loaderLines))
				restore()
				if err != nil {
					t.Fatalf("%s load: %v", mode, err)
				}
				got, err := c.Query(ctx, "SELECT id, s, n FROM "+table+" ORDER BY id")
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, loaderWant) {
					t.Errorf("%s load: rows\n%q\nwant\n%q", mode, got, loaderWant)
				}
				if err := c.Exec(ctx, "DROP TABLE "+table); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// refuseLocalInfile turns local_infile off, as a server whose user may not turn it on has it,
// and returns what puts the server's own value back.
func refuseLocalInfile(t *testing.T, ctx context.Context, c sqldb.Conn) func() {
	t.Helper()
	rows, err := c.Query(ctx, "SELECT @@GLOBAL.local_infile")
	if err != nil || len(rows) != 1 {
		t.Fatalf("local_infile: %v %v", rows, err)
	}
	if err := c.Exec(ctx, "SET GLOBAL local_infile = 0"); err != nil {
		t.Fatal(err)
	}
	return func() { _ = c.Exec(context.WithoutCancel(ctx), "SET GLOBAL local_infile = "+rows[0][0]) }
}
