package engine

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func TestModeAndKnobSettings(t *testing.T) {
	base := Profile{BufferPoolBytes: 512 * mib, MaxConnections: 150, RedoBytes: gib}
	with := func(mode string, flip ...string) Profile {
		p := base
		p.Mode, p.Flip = mode, flip
		return p
	}
	cases := []struct {
		name    string
		prof    Profile
		kind    string
		want    map[string]string // "" = the key must be absent
		bufPool int64             // the profile's resolved buffer pool
	}{
		{"fair mysql", with(""), MySQL, map[string]string{"log_bin": "OFF", "innodb_buffer_pool_size": "536870912"}, 512 * mib},
		{"defaults mysql keeps its binlog and pool", with(ModeDefaults), MySQL,
			map[string]string{"log_bin": "", "innodb_buffer_pool_size": "", "max_connections": "", "innodb_redo_log_capacity": "", "bind_address": "127.0.0.1", "character_set_server": "utf8mb4"}, 512 * mib},
		{"defaults mariadb as Debian ships it", with(ModeDefaults), MariaDB,
			map[string]string{"log_bin": "", "collation_server": "utf8mb4_general_ci", "innodb_log_file_size": ""}, 512 * mib},
		{"defaults postgres", with(ModeDefaults), Postgres,
			map[string]string{"shared_buffers": "", "max_wal_size": "", "listen_addresses": "127.0.0.1", "server_encoding": "UTF8"}, 512 * mib},
		{"fair binlog flipped on", with("", "binlog"), MariaDB, map[string]string{"log_bin": "ON", "sync_binlog": "1", "server_id": "1"}, 512 * mib},
		{"defaults mysql binlog flipped off", with(ModeDefaults, "binlog"), MySQL, map[string]string{"log_bin": "OFF", "sync_binlog": ""}, 512 * mib},
		{"defaults mariadb binlog flipped on", with(ModeDefaults, "binlog"), MariaDB, map[string]string{"log_bin": "ON", "sync_binlog": "1"}, 512 * mib},
		{"binlog does not touch postgres", with("", "binlog"), Postgres, map[string]string{"log_bin": "", "full_page_writes": "on"}, 512 * mib},
		{"doublewrite postgres", with("", "doublewrite"), Postgres, map[string]string{"full_page_writes": "off"}, 512 * mib},
		{"doublewrite innodb", with("", "doublewrite"), MySQL, map[string]string{"innodb_doublewrite": "OFF"}, 512 * mib},
		{"doublewrite under defaults", with(ModeDefaults, "doublewrite"), MariaDB, map[string]string{"innodb_doublewrite": "OFF"}, 512 * mib},
		{"flush method", with("", "flush-method"), MariaDB, map[string]string{"innodb_flush_method": "fsync"}, 512 * mib},
		{"synchronous commit pg", with("", "synchronous-commit"), Postgres, map[string]string{"synchronous_commit": "off", "fsync": "on"}, 512 * mib},
		{"synchronous commit innodb", with("", "synchronous-commit"), MySQL, map[string]string{"innodb_flush_log_at_trx_commit": "2"}, 512 * mib},
		{"buffer pool under fair is the packages'", with("", "buffer-pool"), Postgres, map[string]string{"shared_buffers": "128MB"}, 128 * mib},
		{"buffer pool under defaults is fair's", with(ModeDefaults, "buffer-pool"), MySQL, map[string]string{"innodb_buffer_pool_size": "536870912", "max_connections": ""}, 512 * mib},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := c.prof.Settings(c.kind)
			for k, want := range c.want {
				v, ok := got[k]
				if want == "" && ok {
					t.Errorf("%s = %q, want it unset (the engine's own default)", k, v)
				}
				if want != "" && v != want {
					t.Errorf("%s = %q, want %q", k, v, want)
				}
			}
			if bp := c.prof.withDefaults().BufferPoolBytes; bp != c.bufPool {
				t.Errorf("resolved buffer pool %d MiB, want %d MiB", bp>>20, c.bufPool>>20)
			}
		})
	}
}

func TestCheckProfileErrors(t *testing.T) {
	my := Installation{Kind: MySQL}
	pg := Installation{Kind: Postgres}
	cases := []struct {
		name string
		inst Installation
		prof Profile
		want string // "" = accepted
	}{
		{"fair", my, Profile{BufferPoolBytes: gib}, ""},
		{"defaults", pg, Profile{Mode: ModeDefaults}, ""},
		{"unknown mode", pg, Profile{Mode: "tuned"}, `unknown profile "tuned" in --profile: use fair or defaults`},
		{"unknown knob", pg, Profile{Flip: []string{"fsync"}}, `unknown knob "fsync" in --explain: use binlog, doublewrite, flush-method, synchronous-commit, buffer-pool`},
		{"binlog contradicts defaults", my, Profile{Mode: ModeDefaults, Binlog: true}, "--binlog contradicts --profile defaults"},
		{"innodb cannot take 200 MiB", my, Profile{BufferPoolBytes: 200 * mib}, "mysql cannot take a buffer pool of 200 MiB"},
		{"innodb cannot take 1.5 GiB", Installation{Kind: MariaDB}, Profile{BufferPoolBytes: 1536 * mib}, "mariadb cannot take a buffer pool of 1536 MiB"},
		{"postgres can take 200 MiB", pg, Profile{BufferPoolBytes: 200 * mib}, ""},
		{"innodb takes a pool below one chunk", Installation{Kind: MariaDB}, Profile{BufferPoolBytes: 16 * mib}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := CheckProfile(c.inst, c.prof)
			switch {
			case c.want == "" && err != nil:
				t.Errorf("CheckProfile = %v, want nil", err)
			case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)):
				t.Errorf("CheckProfile = %v, want an error starting %q", err, c.want)
			case err != nil && strings.Contains(err.Error(), "\n"):
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
}

// TestModesOnRealServers starts each engine under --profile defaults and with knobs flipped, and
// asks the server what it runs with: the settings a report will claim must be the server's own.
func TestModesOnRealServers(t *testing.T) {
	integration(t)
	found := map[string]Installation{}
	for _, in := range Discover("") {
		found[in.Kind] = in
	}
	fair := Profile{BufferPoolBytes: 256 * mib, MaxConnections: 50, RedoBytes: 256 * mib}
	with := func(mode string, flip ...string) Profile {
		p := fair
		p.Mode, p.Flip = mode, flip
		return p
	}
	cases := []struct {
		name string
		kind string
		prof Profile
		want map[string]string // variable → the server's own value
	}{
		{"mysql defaults", MySQL, with(ModeDefaults), map[string]string{"log_bin": "1", "sync_binlog": "1", "innodb_buffer_pool_size": "134217728", "max_connections": "151"}},
		{"mariadb defaults", MariaDB, with(ModeDefaults), map[string]string{"log_bin": "0", "innodb_buffer_pool_size": "134217728", "character_set_server": "utf8mb4"}},
		{"postgres defaults", Postgres, with(ModeDefaults), map[string]string{"shared_buffers": "128MB", "max_connections": "100"}},
		{"mysql defaults, binlog flipped", MySQL, with(ModeDefaults, "binlog"), map[string]string{"log_bin": "0"}},
		{"mariadb fair, binlog and doublewrite flipped", MariaDB, with("", "binlog", "doublewrite"), map[string]string{"log_bin": "1", "sync_binlog": "1", "innodb_doublewrite": "0", "innodb_buffer_pool_size": "268435456"}},
		{"mysql fair, flush method and commit flipped", MySQL, with("", "flush-method", "synchronous-commit"), map[string]string{"innodb_flush_method": "fsync", "innodb_flush_log_at_trx_commit": "2"}},
		{"postgres fair, buffer pool and full_page_writes flipped", Postgres, with("", "buffer-pool", "doublewrite"), map[string]string{"shared_buffers": "128MB", "full_page_writes": "off"}},
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
	if srv.Kind == Postgres {
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
