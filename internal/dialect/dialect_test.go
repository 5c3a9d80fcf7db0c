package dialect

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/testserver"
)

// TestMain stops the shared servers the tests started (testserver.Database), also when one fails.
func TestMain(m *testing.M) { testserver.Main(m) }

// Each dialect's administration on a real server: dirty pages written and flushed to about
// none, the backlog read, a table maintained, the data directory named.
func TestAdministrationOnRealServers(t *testing.T) {
	for _, kind := range []string{"postgres", "mariadb", "mysql"} {
		t.Run(kind, func(t *testing.T) {
			tg := testserver.Database(t, kind)
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			c, err := sqldb.Open(ctx, tg)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			d := Of(c)
			if d.Kind() != c.Kind() {
				t.Fatalf("Of(%s) is %s's dialect", c.Kind(), d.Kind())
			}
			for _, q := range []string{"CREATE TABLE fb_dialect (id INT PRIMARY KEY, v VARCHAR(100))",
				"INSERT INTO fb_dialect SELECT n, 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx' FROM (" + numbers(kind) + ") AS s"} {
				if err := c.Exec(ctx, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			if err := d.Maintain(ctx, c, "fb_dialect"); err != nil {
				t.Errorf("Maintain: %v", err)
			}
			before := flushSettings(ctx, t, c)
			t0 := time.Now()
			done, err := d.Flush(ctx, c)
			if err != nil || (done != "checkpoint" && done != "dirty pages flushed") {
				t.Errorf("Flush = %q, %v", done, err)
			}
			t.Logf("Flush: %q in %s", done, time.Since(t0).Round(time.Millisecond))
			if after := flushSettings(ctx, t, c); after != before {
				t.Errorf("Flush left the settings %s, they were %s", after, before)
			}
			dirty, redo := d.Backlog(ctx, c)
			if redo == nil {
				t.Error("no WAL/redo backlog read after a flush")
			}
			if kind != "postgres" && (dirty == nil || *dirty > 1000) {
				t.Errorf("InnoDB dirty pages after Flush: %v", dirty)
			}
			dir := d.DataDirectory(ctx, c)
			if dir == "" || !strings.HasPrefix(dir, "/") {
				t.Errorf("DataDirectory = %q", dir)
			} else if kind != "mysql" { // MySQL's is inside its chroot
				if _, err := os.Stat(dir); err != nil {
					t.Errorf("DataDirectory %s: %v", dir, err)
				}
			}
		})
	}
}

// flushSettings are the settings an InnoDB flush changes for its time, as one string.
func flushSettings(ctx context.Context, t *testing.T, c sqldb.Conn) string {
	if c.Kind() == sqldb.Postgres {
		return ""
	}
	rows, err := c.Query(ctx, "SELECT @@GLOBAL.innodb_max_dirty_pages_pct, @@GLOBAL.innodb_max_dirty_pages_pct_lwm, "+
		"@@GLOBAL.innodb_io_capacity, @@GLOBAL.innodb_io_capacity_max")
	if err != nil || len(rows) != 1 {
		t.Fatalf("reading the flush settings: %v", err)
	}
	return strings.Join(rows[0], " ")
}

// numbers is a query of 1..20000 in the engine's SQL.
func numbers(kind string) string {
	if kind == "postgres" {
		return "SELECT generate_series(1, 20000) AS n"
	}
	// A cross join of digits: recursive CTEs stop at 1,000 rows by default on both.
	d := "(SELECT 0 AS d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9)"
	return "SELECT 1 + a.d + 10 * b.d + 100 * c.d + 1000 * e.d + 10000 * f.d AS n FROM " + d + " a, " + d + " b, " + d + " c, " + d + " e, (SELECT 0 AS d UNION ALL SELECT 1) f"
}

// A flush that its context cuts short says it was interrupted.
func TestFlushInterrupted(t *testing.T) {
	tg := testserver.Database(t, "postgres")
	c, err := sqldb.Open(context.Background(), tg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Of(c).Flush(ctx, c); err == nil {
		t.Error("a cancelled flush reported success")
	}
}

// Each real server's settings read into every facet the parity audit compares: the family's own
// setting names are the ones the server reports, and the fair profile's durability reads as the
// same on every engine.
func TestFacetsOnRealServers(t *testing.T) {
	all := []string{result.FacetDurability, result.FacetBinaryLog, result.FacetBufferPool, result.FacetRedoSize,
		result.FacetTornPage, result.FacetIsolation, result.FacetPageSize, result.FacetPageChecksums,
		result.FacetMaxConnections, result.FacetCharset, result.FacetFlushMethod, result.FacetStatementAccounting}
	for _, kind := range []string{"postgres", "mariadb", "mysql"} {
		t.Run(kind, func(t *testing.T) {
			ctx, c := realConn(t, kind, time.Minute)
			s, err := Of(c).Settings(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			f := Of(c).Facets(s)
			for _, k := range all {
				if _, ok := f[k]; !ok {
					t.Errorf("facet %s not read from %v", k, s)
				}
			}
			if d := f[result.FacetDurability]; d.Value != "on" {
				t.Errorf("durability %+v under the fair profile, want on", d)
			}
			if n, err := strconv.ParseInt(f[result.FacetBufferPool].Value, 10, 64); err != nil || n <= 0 {
				t.Errorf("buffer pool %+v is not a size", f[result.FacetBufferPool])
			}
		})
	}
}

// realConn is a connection to the shared test server of kind, closed when the test ends, and a
// context that bounds the test's statements.
func realConn(t *testing.T, kind string, limit time.Duration) (context.Context, sqldb.Conn) {
	t.Helper()
	tg := testserver.Database(t, kind)
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	t.Cleanup(cancel)
	c, err := sqldb.Open(ctx, tg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return ctx, c
}
