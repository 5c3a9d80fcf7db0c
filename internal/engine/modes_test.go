package engine

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/engine/discovery"
	"github.com/fairbench/fairbench/internal/engine/profile"
	"github.com/jackc/pgx/v5"
)

// TestModesOnRealServers starts each engine under --profile defaults and with knobs flipped, and
// asks the server what it runs with: the settings a report will claim must be the server's own.
func TestModesOnRealServers(t *testing.T) {
	integration(t)
	found := map[string]discovery.Installation{}
	for _, in := range discovery.Discover("") {
		found[in.Kind] = in
	}
	fair := profile.Profile{BufferPoolBytes: 256 * mib, MaxConnections: 50, RedoBytes: 256 * mib}
	with := func(mode string, flip ...string) profile.Profile {
		p := fair
		p.Mode, p.Flip = mode, flip
		return p
	}
	cases := []struct {
		name string
		kind string
		prof profile.Profile
		want map[string]string // variable → the server's own value
	}{
		{"mysql defaults", discovery.MySQL, with(profile.ModeDefaults), map[string]string{"log_bin": "1", "sync_binlog": "1", "innodb_buffer_pool_size": "134217728", "max_connections": "151"}},
		{"mariadb defaults", discovery.MariaDB, with(profile.ModeDefaults), map[string]string{"log_bin": "0", "innodb_buffer_pool_size": "134217728", "character_set_server": "utf8mb4"}},
		{"postgres defaults", discovery.Postgres, with(profile.ModeDefaults), map[string]string{"shared_buffers": "128MB", "max_connections": "100"}},
		{"mysql defaults, binlog flipped", discovery.MySQL, with(profile.ModeDefaults, "binlog"), map[string]string{"log_bin": "0"}},
		{"mariadb fair, binlog and doublewrite flipped", discovery.MariaDB, with("", "binlog", "doublewrite"), map[string]string{"log_bin": "1", "sync_binlog": "1", "innodb_doublewrite": "0", "innodb_buffer_pool_size": "268435456"}},
		{"mysql fair, flush method and commit flipped", discovery.MySQL, with("", "flush-method", "synchronous-commit"), map[string]string{"innodb_flush_method": "fsync", "innodb_flush_log_at_trx_commit": "2"}},
		{"postgres fair, buffer pool and full_page_writes flipped", discovery.Postgres, with("", "buffer-pool", "doublewrite"), map[string]string{"shared_buffers": "128MB", "full_page_writes": "off"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			inst, ok := found[c.kind]
			if !ok {
				t.Skipf("%s is not installed", c.kind)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			srv, err := Start(ctx, inst, c.prof, workDir(t, ""))
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Stop()
			for k, want := range c.want {
				// MariaDB 11.8 reports innodb_doublewrite as a word (it became an enum with
				// "fast"), 10.11 as a number: both mean the same.
				if got := serverSetting(ctx, t, srv, k); !strings.EqualFold(boolWord(got), boolWord(want)) {
					t.Errorf("%s %s runs with %s = %q, want %q", c.kind, c.prof.Name(), k, got, want)
				}
			}
		})
	}
}

// serverSetting asks a running server for one variable, as its own SHOW reports it.
func serverSetting(ctx context.Context, t *testing.T, srv *Server, name string) string {
	t.Helper()
	var v string
	if srv.Kind == discovery.Postgres {
		conn, err := pgx.Connect(ctx, srv.DSN)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(context.Background())
		if err := conn.QueryRow(ctx, "SELECT current_setting($1)", name).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	db := srv.mysqlDB("")
	defer db.Close()
	var raw sql.NullString
	if err := db.QueryRowContext(ctx, fmt.Sprintf("SELECT @@%s", name)).Scan(&raw); err != nil {
		t.Fatalf("SELECT @@%s: %v", name, err)
	}
	return raw.String
}

// boolWord writes a boolean variable's numeric form as the word, other values unchanged.
func boolWord(v string) string {
	switch v {
	case "0":
		return "OFF"
	case "1":
		return "ON"
	}
	return v
}
