package dialect

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/testserver"
)

// Every statement the layer writes, run on each engine: each must be taken as written and do
// what its comment says; the digests must agree across engines on the same values.
func TestLayerSQLOnRealServers(t *testing.T) {
	hashes := map[string]string{}
	for _, kind := range []string{"postgres", "mariadb", "mysql"} {
		t.Run(kind, func(t *testing.T) {
			tg := testserver.Database(t, kind)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			open := func() sqldb.Conn {
				c, err := sqldb.Open(ctx, tg)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { c.Close() })
				return c
			}
			c := open()
			d := Of(c)
			exec := func(q string) {
				t.Helper()
				if err := c.Exec(ctx, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			one := func(q string, args ...any) string {
				t.Helper()
				rows, err := c.Query(ctx, q, args...)
				if err != nil || len(rows) != 1 || len(rows[0]) == 0 {
					t.Fatalf("%s: %v %v", q, rows, err)
				}
				return rows[0][0]
			}

			// A table of every name the workloads use, created with its mark and its options.
			create := "CREATE TABLE fb_layer (id " + d.TypeName("serial", 0, 0) + ", t " + d.TypeName("tinyint", 0, 0) +
				", at " + d.TypeName("datetime", 0, 0) + ", v varchar(20), PRIMARY KEY (id))" + d.TableOptions()
			exec(d.CreateCommented(create, "fb_layer", "it's ours"))
			if got := one(d.TableCommentQuery(), "fb_layer"); got != "it's ours" {
				t.Errorf("comment = %q", got)
			}
			exec(d.CommentOn("fb_layer", "mark"))
			if got := one(d.TableCommentQuery(), "fb_layer"); got != "mark" {
				t.Errorf("comment after CommentOn = %q", got)
			}
			exec("INSERT INTO fb_layer (id, t, at, v) VALUES (1, 1, '2026-01-02 03:04:05', 'a'), (2, 2, '2026-01-02 03:04:05', 'b')")
			if q := d.AfterExplicitIDs("fb_layer", "id", 2); q != "" {
				exec(q)
			}
			exec("INSERT INTO fb_layer (t, at, v) VALUES (3, '2026-01-02 03:04:05', 'c')")
			if got := one("SELECT max(id) FROM fb_layer"); got != "3" {
				t.Errorf("a generated id after explicit ones = %s, want 3", got)
			}
			for _, q := range d.CreateIndexes("fb_layer", []Index{{Name: "fb_layer_v", Columns: "v"}, {Name: "fb_layer_tv", Columns: "t, v"}}) {
				exec(q)
			}
			ixs, err := CatalogFor(c.Kind()).Indexes(ctx, c)
			if err != nil || len(ixs) != 3 {
				t.Errorf("indexes = %+v, %v; want the key and two", ixs, err)
			}

			// Literals and identifiers that carry their own quote characters.
			for _, s := range []string{`it's`, `back\slash`, `\'`, ``} {
				if got := one("SELECT " + d.Literal(s)); got != s {
					t.Errorf("Literal(%q) reads back %q", s, got)
				}
			}
			if got := one("SELECT 7 AS " + d.Quote(`we"ird`+"`n")); got != "7" {
				t.Errorf("quoted alias: %s", got)
			}

			// The digests: one text and hash per value, the same on every engine.
			h := one("SELECT " + d.Hash60("CONCAT_WS('|', "+d.ValueText(d.Quote("v"), "character varying")+", "+
				d.ValueText(d.Quote("id"), "integer")+")") + " FROM fb_layer WHERE id = 1")
			hashes[kind] = h

			// Session settings are taken; cancelling an idle session does nothing.
			exec(d.Isolation("REPEATABLE READ"))
			if rows, err := c.Query(ctx, d.IsolationQuery()); err != nil || len(rows) == 0 ||
				strings.ToUpper(strings.ReplaceAll(rows[0][len(rows[0])-1], "-", " ")) != "REPEATABLE READ" {
				t.Errorf("%s: %v, %v: want the level just set", d.IsolationQuery(), rows, err)
			}
			for _, q := range d.LoadingSession() {
				exec(q)
			}
			if q := d.PublishStatistics(); q != "" {
				exec(q)
			}
			taken := slices.ContainsFunc(d.StatementTimeout(1500*time.Millisecond), func(q string) bool { return c.Exec(ctx, q) == nil })
			if !taken {
				t.Errorf("no statement timeout taken of %v", d.StatementTimeout(1500*time.Millisecond))
			}
			id, err := SamplerFor(c.Kind()).SessionID(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			other := open()
			if err := other.Exec(ctx, d.CancelStatement(id)); err != nil {
				t.Errorf("%s: %v", d.CancelStatement(id), err)
			}
			if size, err := strconv.Atoi(one(d.PageSizeQuery())); err != nil || size < 4096 {
				t.Errorf("page size %d, %v", size, err)
			}

			// What the server says about itself.
			if err := d.Maintain(ctx, c, "fb_layer"); err != nil {
				t.Fatal(err)
			}
			// Old row versions: removed from the table, and the background cleaner turned off and
			// on again, where they stay in the table; refused with a reason elsewhere.
			inTable := d.Caps().OldVersionsInTable
			if err := d.RemoveOldVersions(ctx, c, "fb_layer"); (err == nil) != inTable {
				t.Errorf("RemoveOldVersions: %v (old versions in the table: %v)", err, inTable)
			}
			if v, err := d.TableVersions(ctx, c, "fb\\_layer%"); (err == nil) != inTable {
				t.Errorf("TableVersions = %+v, %v (old versions in the table: %v)", v, err, inTable)
			}
			for _, on := range []bool{false, true} {
				if err := d.SetBackgroundCleanup(ctx, c, on); (err == nil) != inTable {
					t.Errorf("SetBackgroundCleanup(%v): %v (old versions in the table: %v)", on, err, inTable)
				}
			}
			if tb, ib, err := d.TableSizes(ctx, c, "fb\\_layer%"); err != nil || tb <= 0 || ib <= 0 {
				t.Errorf("TableSizes = %d, %d, %v", tb, ib, err)
			}
			if n, err := d.DataSize(ctx, c); err != nil || n <= 0 {
				t.Errorf("DataSize = %d, %v", n, err)
			}
			if s, err := d.Settings(ctx, c); err != nil || s["max_connections"] == "" {
				t.Errorf("Settings = %v, %v", s, err)
			}
			if cs, err := d.Counters(ctx, c); err != nil || cs[result.CounterBufferHits] <= 0 {
				t.Errorf("Counters = %v, %v", cs, err)
			}
			sessions, err := d.ClientSessions(ctx, c)
			if err != nil || d.Caps().StatisticsAtExit != (len(sessions) > 0) {
				t.Errorf("ClientSessions = %v, %v (the other connection is open)", sessions, err)
			}
		})
	}
	if len(hashes) == 3 && (hashes["postgres"] != hashes["mariadb"] || hashes["postgres"] != hashes["mysql"]) {
		t.Errorf("one row's digest differs between engines: %v", hashes)
	}
}

// The capabilities name replication in the results' terms.
func TestReplicationNames(t *testing.T) {
	for _, d := range []Dialect{For("postgres"), For("mysql"), For("mariadb")} {
		if r := d.Caps().Replication; r != result.ReplicationGalera && r != result.ReplicationStreaming {
			t.Errorf("%s: replication %q is not a result name", d.Kind(), r)
		}
	}
}
