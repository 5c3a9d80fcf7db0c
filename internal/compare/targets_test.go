package compare

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fairbench/fairbench/internal/engine/profile"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/suite"
	"github.com/fairbench/fairbench/internal/testserver"
)

func TestParseTargets(t *testing.T) {
	for _, tc := range []struct {
		in      []string
		names   []string
		wantErr string
	}{
		{[]string{"pg15=postgres://u:secret@127.0.0.1:5432/db,maria=mariadb://u@127.0.0.1:3306/db"}, []string{"pg15", "maria"}, ""},
		// A host list keeps its commas inside one target.
		{[]string{"ha=postgres://u@10.0.0.1:5432,10.0.0.2:5432/db?target_session_attrs=read-write", "my=mysql://u@h/db"}, []string{"ha", "my"}, ""},
		{[]string{"a=postgres://u@h/db,A=postgres://u@h2/db"}, nil, "used twice"},
		{[]string{"postgres://u:secret@h/db"}, nil, "NAME=DSN"},
		{[]string{"x=postgres://u:secret@h"}, nil, "names no database"},
		{[]string{"x=ftp://u:secret@h/db"}, nil, "scheme"},
	} {
		got, err := ParseTargets(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || strings.Contains(err.Error(), "secret") {
				t.Errorf("%v: error %v, want one line with %q and no password", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%v: %v", tc.in, err)
			continue
		}
		var names []string
		for _, g := range got {
			names = append(names, g.Name)
		}
		if strings.Join(names, ",") != strings.Join(tc.names, ",") {
			t.Errorf("%v: names %v, want %v", tc.in, names, tc.names)
		}
	}
	ts, _ := ParseTargets([]string{"a=postgres://u@h/db,b=mysql://u@h/db"})
	if err := ParseNodeExporters("b=http://h:9100/metrics", ts); err != nil || ts[1].NodeExporter != "http://h:9100/metrics" {
		t.Errorf("node exporter of b: %v %+v", err, ts[1])
	}
	if err := ParseNodeExporters("c=http://h:9100/metrics", ts); err == nil || !strings.Contains(err.Error(), "no target is named c") {
		t.Errorf("a node exporter of no target: %v", err)
	}
}

// compare --targets over two servers fairbench did not start for the comparison, one of them
// configured unlike the profile (MariaDB's commits not flushed): the rounds run on them under
// the names given, the report names the difference before its verdicts, fairbench's tables are
// gone after and the user's own table is untouched.
func TestCompareTargets(t *testing.T) {
	testserver.Integration(t)
	ctx := context.Background()
	pg, maria := testserver.Database(t, "postgres"), testserver.Database(t, "mariadb")
	mine := map[string]sqldb.Conn{}
	for name, tg := range map[string]sqldb.Target{"pg": pg, "maria": maria} {
		c, err := sqldb.Open(ctx, tg)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := c.Exec(ctx, "CREATE TABLE orders_mine (id INTEGER PRIMARY KEY)"); err != nil {
			t.Fatal(err)
		}
		if err := c.Exec(ctx, "INSERT INTO orders_mine VALUES (7)"); err != nil {
			t.Fatal(err)
		}
		mine[name] = c
	}
	if err := mine["maria"].Exec(ctx, "SET GLOBAL innodb_flush_log_at_trx_commit = 2"); err != nil {
		t.Fatal(err)
	}
	defer mine["maria"].Exec(ctx, "SET GLOBAL innodb_flush_log_at_trx_commit = 1")

	s, err := suite.Parse([]byte(tinySuite), "tiny.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s.Repeat = 2
	o := &Options{Suite: s, OutDir: t.TempDir(), Seed: 1, Command: "go test",
		Targets: []Target{{Name: "pgmine", DSN: pg}, {Name: "mariamine", DSN: maria}}}
	var log strings.Builder
	o.Log = &log
	if err := Run(ctx, o); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	files, _ := filepath.Glob(filepath.Join(o.OutDir, "results", "*.json"))
	if len(files) != 2*2*2 {
		t.Fatalf("%d results, want 8: %v", len(files), files)
	}
	for _, f := range files {
		r, err := result.Read(f)
		if err != nil {
			t.Fatal(err)
		}
		if (r.Engine.Alias != "pgmine" && r.Engine.Alias != "mariamine") || !r.Engine.AsConfigured || r.Profile != AsConfigured || r.Server == nil || len(r.Server.Settings) == 0 {
			t.Errorf("%s: engine %+v, profile %q: want the target's name, as configured, its settings read", filepath.Base(f), r.Engine, r.Profile)
		}
		if !strings.HasPrefix(filepath.Base(f), r.Engine.Alias+"-") {
			t.Errorf("%s is not named after its target", filepath.Base(f))
		}
	}
	md, err := os.ReadFile(filepath.Join(o.OutDir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	decision := string(md)[strings.Index(string(md), "## Quick decision"):]
	if w := strings.Index(decision, "⚠ Before the verdicts: durability"); w < 0 || w > strings.Index(decision, "| Use case |") || !strings.Contains(decision[w:], "innodb_flush_log_at_trx_commit=2 on mariamine") {
		t.Errorf("the durability difference is not named before the verdicts:\n%s", decision[:min(2000, len(decision))])
	}
	for name, c := range mine {
		rows, err := c.Query(ctx, "SELECT COUNT(*) FROM information_schema.tables WHERE table_name LIKE 'sbtest%' OR table_name LIKE 'fairbench%'")
		if err != nil || rows[0][0] != "0" {
			t.Errorf("%s: fairbench's tables left behind: %v %v", name, rows, err)
		}
		rows, err = c.Query(ctx, "SELECT id FROM orders_mine")
		if err != nil || len(rows) != 1 || rows[0][0] != "7" {
			t.Errorf("%s: the user's own table was touched: %v %v", name, rows, err)
		}
	}
}

// What can be known before any work is refused then, one line each: a DSN that refuses, an
// account that may not create tables, a name used by --engines too, an option that needs a
// server fairbench starts.
func TestTargetsBadInput(t *testing.T) {
	testserver.Integration(t)
	ctx := context.Background()
	pg := testserver.Database(t, "postgres")
	admin, err := sqldb.Open(ctx, pg)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	role := fmt.Sprintf("fbnocreate_%d", os.Getpid())
	if err := admin.Exec(ctx, "CREATE ROLE "+role+" LOGIN PASSWORD 'pw-not-shown'"); err != nil {
		t.Fatal(err)
	}
	defer admin.Exec(ctx, "DROP ROLE "+role)
	_ = admin.Exec(ctx, "REVOKE CREATE ON SCHEMA public FROM PUBLIC")
	noCreate := pg
	noCreate.User, noCreate.Password = role, "pw-not-shown"
	refused := pg
	refused.Port = 1 // nothing listens there
	s, err := suite.Parse([]byte(tinySuite), "tiny.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		o    Options
		want string
	}{
		{"refuses", Options{Targets: []Target{{Name: "down", DSN: refused}}}, "--targets down"},
		{"no create", Options{Targets: []Target{{Name: "ro", DSN: noCreate}}}, "may not create tables"},
		{"explain", Options{Targets: []Target{{Name: "pg", DSN: pg}}, Explain: []string{"durability"}}, "--explain needs servers fairbench starts"},
	} {
		tc.o.Suite = s
		_, err := Plan(ctx, &tc.o)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") || strings.Contains(err.Error(), "pw-not-shown") ||
			strings.Contains(err.Error(), url.QueryEscape(pg.Password)) && pg.Password != "" {
			t.Errorf("%s: %v; want one line with %q and no password", tc.name, err, tc.want)
		}
	}
}

// --apply-profile sets the profile's run-time settings on a target for its rounds and puts them
// back exactly: a MariaDB whose commits were not flushed runs flushed, and is unflushed again
// after. A PostgreSQL that fairbench started has every profile setting on its command line,
// which ALTER SYSTEM cannot override: those are named as left as configured, and none changed.
func TestApplyProfile(t *testing.T) {
	testserver.Integration(t)
	ctx := context.Background()
	pg, maria := testserver.Database(t, "postgres"), testserver.Database(t, "mariadb")
	mc, err := sqldb.Open(ctx, maria)
	if err != nil {
		t.Fatal(err)
	}
	defer mc.Close()
	if err := mc.Exec(ctx, "SET GLOBAL innodb_flush_log_at_trx_commit = 2"); err != nil {
		t.Fatal(err)
	}
	defer mc.Exec(ctx, "SET GLOBAL innodb_flush_log_at_trx_commit = 1")

	s, err := suite.Parse([]byte(tinySuite), "tiny.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s.Repeat = 1
	o := &Options{Suite: s, OutDir: t.TempDir(), Seed: 1, Command: "go test", Profile: profile.Default(), ApplyProfile: true,
		Targets: []Target{{Name: "pgmine", DSN: pg}, {Name: "mariamine", DSN: maria}}}
	var log strings.Builder
	o.Log = &log
	if err := Run(ctx, o); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	files, _ := filepath.Glob(filepath.Join(o.OutDir, "results", "mariamine-*.json"))
	if len(files) == 0 {
		t.Fatal("no results of mariamine")
	}
	for _, f := range files {
		r, err := result.Read(f)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Server.Settings["innodb_flush_log_at_trx_commit"]; got != "1" || r.Profile != AsConfiguredWithProfile || r.Server.Profile["innodb_flush_log_at_trx_commit"] != "1" {
			t.Errorf("%s ran with innodb_flush_log_at_trx_commit=%s, profile %q, applied %v: want the profile's durable commit", filepath.Base(f), got, r.Profile, r.Server.Profile)
		}
	}
	if rows, err := mc.Query(ctx, "SELECT @@GLOBAL.innodb_flush_log_at_trx_commit"); err != nil || rows[0][0] != "2" {
		t.Errorf("MariaDB not restored: %v %v", rows, err)
	}
	env, err := os.ReadFile(filepath.Join(o.OutDir, "environment.json"))
	if err != nil || !strings.Contains(string(env), "pgmine: --apply-profile could not set") || !strings.Contains(string(env), "synchronous_commit=on") {
		t.Errorf("the settings a running PostgreSQL cannot take are not named: %s %v", env, err)
	}
}
