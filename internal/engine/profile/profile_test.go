package profile

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/fairbench/fairbench/internal/engine/discovery"
)

func TestDefaultProfile(t *testing.T) {
	p := Default()
	if p.MaxConnections != 200 || p.RedoBytes != gib || p.Binlog {
		t.Errorf("DefaultProfile() = %+v, want 200 connections, 1 GiB redo, binlog off", p)
	}
	if p.BufferPoolBytes < 128*mib || p.BufferPoolBytes > 2*gib {
		t.Errorf("default buffer pool %d outside [128 MiB, 2 GiB]", p.BufferPoolBytes)
	}
	if err := p.Validate(); err != nil {
		t.Errorf("default profile does not validate: %v", err)
	}
	for _, c := range []struct{ ram, want int64 }{
		{24 * gib, 2 * gib},          // capped
		{6 * gib, gib},               // 1.5 GiB rounded down to whole GiB
		{2 * gib, 512 * mib},         // exact quarter
		{1500 * mib, 256 * mib},      // 375 MiB down to a 128 MiB multiple
		{256 * mib, 128 * mib},       // floor
		{8*gib + 4*mib, 2 * gib},     // cap
		{4*gib - 1, 896 * mib},       // just under 1 GiB stays in 128 MiB steps
		{4 * gib, gib},               // exactly 1 GiB
		{7*gib + 900*mib, gib},       // 1.97 GiB -> 1 GiB
		{8 * gib, 2 * gib},           // exactly the cap
		{5*gib + 512*mib, gib},       // 1.375 GiB -> 1 GiB
		{3*gib + 512*mib, 896 * mib}, // 896 MiB
	} {
		if got := defaultBufferPool(c.ram); got != c.want {
			t.Errorf("defaultBufferPool(%d MiB) = %d MiB, want %d MiB", c.ram/mib, got/mib, c.want/mib)
		}
	}
	// Zero fields mean default, so a partial profile is usable as is.
	if got := (Profile{BufferPoolBytes: 128 * mib}).WithDefaults(); got.MaxConnections != 200 || got.RedoBytes != gib || got.BufferPoolBytes != 128*mib {
		t.Errorf("WithDefaults = %+v", got)
	}
	if err := (Profile{BufferPoolBytes: 16 * mib, MaxConnections: 10, RedoBytes: gib}).Validate(); err != nil {
		t.Errorf("a 16 MiB buffer pool (the smallest allowed) does not validate: %v", err)
	}
	for _, bad := range []Profile{
		{BufferPoolBytes: 1000, MaxConnections: 10, RedoBytes: gib},
		{BufferPoolBytes: 8 * mib, MaxConnections: 10, RedoBytes: gib},
		{BufferPoolBytes: gib, MaxConnections: 10, RedoBytes: 16 * mib},
		{BufferPoolBytes: gib, MaxConnections: -1, RedoBytes: gib},
	} {
		if bad.Validate() == nil {
			t.Errorf("Validate(%+v) = nil, want error", bad)
		}
	}
}

func TestSettings(t *testing.T) {
	p := Profile{BufferPoolBytes: 512 * mib, MaxConnections: 150, RedoBytes: gib}
	pg := p.Settings(discovery.Postgres)
	for k, want := range map[string]string{
		"shared_buffers": "512MB", "max_connections": "150", "max_wal_size": "1GB",
		"fsync": "on", "synchronous_commit": "on", "full_page_writes": "on", "listen_addresses": "127.0.0.1",
	} {
		if pg[k] != want {
			t.Errorf("postgres %s = %q, want %q", k, pg[k], want)
		}
	}
	my := p.Settings(discovery.MySQL)
	ma := p.Settings(discovery.MariaDB)
	for _, m := range []map[string]string{my, ma} {
		for k, want := range map[string]string{
			"innodb_buffer_pool_size": "536870912", "max_connections": "150",
			"innodb_flush_log_at_trx_commit": "1", "log_bin": "OFF", "bind_address": "127.0.0.1",
		} {
			if m[k] != want {
				t.Errorf("%s = %q, want %q", k, m[k], want)
			}
		}
		if _, ok := m["sync_binlog"]; ok {
			t.Error("sync_binlog set with binlog off")
		}
	}
	if my["innodb_redo_log_capacity"] != "1073741824" {
		t.Errorf("mysql redo = %q", my["innodb_redo_log_capacity"])
	}
	if ma["innodb_log_file_size"] != "1073741824" || ma["innodb_redo_log_capacity"] != "" {
		t.Errorf("mariadb redo = %q / %q", ma["innodb_log_file_size"], ma["innodb_redo_log_capacity"])
	}
	// Before 8.0.30 MySQL only knows the two-file redo log.
	old := p.settingsFor(discovery.MySQL, "8.0.29")
	if old["innodb_log_file_size"] != "536870912" || old["innodb_log_files_in_group"] != "2" || old["innodb_redo_log_capacity"] != "" {
		t.Errorf("mysql 8.0.29 redo settings = %v", old)
	}
	if p.settingsFor(discovery.MySQL, "8.0.30")["innodb_redo_log_capacity"] == "" {
		t.Error("mysql 8.0.30 should use innodb_redo_log_capacity")
	}

	p.Binlog = true
	for _, kind := range []string{discovery.MySQL, discovery.MariaDB} {
		m := p.Settings(kind)
		if m["log_bin"] != "ON" || m["sync_binlog"] != "1" || m["binlog_format"] != "ROW" || m["server_id"] != "1" {
			t.Errorf("%s binlog settings = %v", kind, m)
		}
	}
	if p.Settings("oracle") != nil {
		t.Error("unknown kind should give nil settings")
	}
	if got := pgSize(1536 * mib); got != "1536MB" {
		t.Errorf("pgSize(1.5 GiB) = %q", got)
	}
	if got := pgSize(mib + 8192); got != "1032kB" {
		t.Errorf("pgSize(1 MiB + 8 KiB) = %q", got)
	}
}

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
		{"fair mysql", with(""), discovery.MySQL, map[string]string{"log_bin": "OFF", "innodb_buffer_pool_size": "536870912"}, 512 * mib},
		{"defaults mysql keeps its binlog and pool", with(ModeDefaults), discovery.MySQL,
			map[string]string{"log_bin": "", "innodb_buffer_pool_size": "", "max_connections": "", "innodb_redo_log_capacity": "", "bind_address": "127.0.0.1", "character_set_server": "utf8mb4"}, 512 * mib},
		{"defaults mariadb as Debian ships it", with(ModeDefaults), discovery.MariaDB,
			map[string]string{"log_bin": "", "collation_server": "utf8mb4_general_ci", "innodb_log_file_size": ""}, 512 * mib},
		{"defaults postgres", with(ModeDefaults), discovery.Postgres,
			map[string]string{"shared_buffers": "", "max_wal_size": "", "listen_addresses": "127.0.0.1", "server_encoding": "UTF8"}, 512 * mib},
		{"fair binlog flipped on", with("", "binlog"), discovery.MariaDB, map[string]string{"log_bin": "ON", "sync_binlog": "1", "server_id": "1"}, 512 * mib},
		{"defaults mysql binlog flipped off", with(ModeDefaults, "binlog"), discovery.MySQL, map[string]string{"log_bin": "OFF", "sync_binlog": ""}, 512 * mib},
		{"defaults mariadb binlog flipped on", with(ModeDefaults, "binlog"), discovery.MariaDB, map[string]string{"log_bin": "ON", "sync_binlog": "1"}, 512 * mib},
		{"binlog does not touch postgres", with("", "binlog"), discovery.Postgres, map[string]string{"log_bin": "", "full_page_writes": "on"}, 512 * mib},
		{"doublewrite postgres", with("", "doublewrite"), discovery.Postgres, map[string]string{"full_page_writes": "off"}, 512 * mib},
		{"doublewrite innodb", with("", "doublewrite"), discovery.MySQL, map[string]string{"innodb_doublewrite": "OFF"}, 512 * mib},
		{"doublewrite under defaults", with(ModeDefaults, "doublewrite"), discovery.MariaDB, map[string]string{"innodb_doublewrite": "OFF"}, 512 * mib},
		{"flush method", with("", "flush-method"), discovery.MariaDB, map[string]string{"innodb_flush_method": "fsync"}, 512 * mib},
		{"synchronous commit pg", with("", "synchronous-commit"), discovery.Postgres, map[string]string{"synchronous_commit": "off", "fsync": "on"}, 512 * mib},
		{"synchronous commit innodb", with("", "synchronous-commit"), discovery.MySQL, map[string]string{"innodb_flush_log_at_trx_commit": "2"}, 512 * mib},
		{"buffer pool under fair is the packages'", with("", "buffer-pool"), discovery.Postgres, map[string]string{"shared_buffers": "128MB"}, 128 * mib},
		{"buffer pool under defaults is fair's", with(ModeDefaults, "buffer-pool"), discovery.MySQL, map[string]string{"innodb_buffer_pool_size": "536870912", "max_connections": ""}, 512 * mib},
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
			if bp := c.prof.WithDefaults().BufferPoolBytes; bp != c.bufPool {
				t.Errorf("resolved buffer pool %d MiB, want %d MiB", bp>>20, c.bufPool>>20)
			}
		})
	}
}

func TestCheckProfileErrors(t *testing.T) {
	my, pg := discovery.MySQL, discovery.Postgres
	cases := []struct {
		name string
		kind string
		prof Profile
		want string // "" = accepted
	}{
		{"fair", my, Profile{BufferPoolBytes: gib}, ""},
		{"defaults", pg, Profile{Mode: ModeDefaults}, ""},
		{"unknown mode", pg, Profile{Mode: "tuned"}, `unknown profile "tuned" in --profile: use fair or defaults`},
		{"unknown knob", pg, Profile{Flip: []string{"fsync"}}, `unknown knob "fsync" in --explain: use binlog, doublewrite, flush-method, synchronous-commit, buffer-pool`},
		{"binlog contradicts defaults", my, Profile{Mode: ModeDefaults, Binlog: true}, "--binlog contradicts --profile defaults"},
		{"innodb cannot take 200 MiB", my, Profile{BufferPoolBytes: 200 * mib}, "mysql cannot take a buffer pool of 200 MiB"},
		{"innodb cannot take 1.5 GiB", discovery.MariaDB, Profile{BufferPoolBytes: 1536 * mib}, "mariadb cannot take a buffer pool of 1536 MiB"},
		{"postgres can take 200 MiB", pg, Profile{BufferPoolBytes: 200 * mib}, ""},
		{"innodb takes a pool below one chunk", discovery.MariaDB, Profile{BufferPoolBytes: 16 * mib}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.prof.Check(c.kind, c.kind)
			switch {
			case c.want == "" && err != nil:
				t.Errorf("Check = %v, want nil", err)
			case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want)):
				t.Errorf("Check = %v, want an error starting %q", err, c.want)
			case err != nil && strings.Contains(err.Error(), "\n"):
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
}

// TestTranslations checks the translation table version by version: what each version is
// given for every renamed or changed setting, and that each translation is recorded.
func TestTranslations(t *testing.T) {
	p := Profile{BufferPoolBytes: 512 * mib, MaxConnections: 100, RedoBytes: gib}
	for _, c := range []struct {
		kind, version string
		want          map[string]string // settings that must hold ("" = must be absent)
		translated    []string          // the profile settings recorded as translated
		initFlags     []string
	}{
		{discovery.Postgres, "15.18", map[string]string{"data_checksums": "off", "lc_collate": "C", "shared_buffers": "512MB"}, nil, nil},
		{discovery.Postgres, "17.6", map[string]string{"data_checksums": "off", "lc_collate": "C"}, []string{"lc_collate", "lc_ctype"}, nil},
		{discovery.Postgres, "18.1", map[string]string{"data_checksums": "off", "max_wal_size": "1GB"}, []string{"lc_collate", "lc_ctype", "data_checksums"}, []string{"--no-data-checksums"}},
		{discovery.MariaDB, "10.11.19", map[string]string{"innodb_log_file_size": "1073741824", "innodb_redo_log_capacity": ""}, []string{"innodb_redo_log_capacity"}, nil},
		{discovery.MariaDB, "11.8.3", map[string]string{"innodb_log_file_size": "1073741824", "innodb_redo_log_capacity": ""}, []string{"innodb_redo_log_capacity"}, nil},
		{discovery.MySQL, "8.0.29", map[string]string{"innodb_log_file_size": "536870912", "innodb_log_files_in_group": "2", "innodb_redo_log_capacity": ""}, []string{"innodb_redo_log_capacity"}, nil},
		{discovery.MySQL, "8.4.6", map[string]string{"innodb_redo_log_capacity": "1073741824", "innodb_log_file_size": ""}, nil, nil},
		{discovery.MySQL, "9.7.4", map[string]string{"innodb_redo_log_capacity": "1073741824", "innodb_log_file_size": ""}, nil, nil},
	} {
		m, tr := p.translatedSettings(c.kind, c.version)
		for k, want := range c.want {
			if got, ok := m[k]; got != want || (want == "" && ok) {
				t.Errorf("%s %s: %s = %q (set %v), want %q", c.kind, c.version, k, got, ok, want)
			}
		}
		var settings []string
		for _, x := range tr {
			settings = append(settings, x.Setting)
			if x.As == "" || x.Why == "" {
				t.Errorf("%s %s: translation of %s records no form or reason: %+v", c.kind, c.version, x.Setting, x)
			}
		}
		if !reflect.DeepEqual(settings, c.translated) {
			t.Errorf("%s %s: translated %v, want %v", c.kind, c.version, settings, c.translated)
		}
		if got := InitdbFlags(tr); !reflect.DeepEqual(got, c.initFlags) {
			t.Errorf("%s %s: initdb flags %v, want %v", c.kind, c.version, got, c.initFlags)
		}
		// Nothing the profile sets is skipped: every base setting is applied or translated.
		for k := range p.baseSettings(c.kind) {
			_, applied := m[k]
			if !applied && !slices.Contains(settings, k) {
				t.Errorf("%s %s: %s neither applied nor translated", c.kind, c.version, k)
			}
		}
	}
}

// Under --profile defaults the engine keeps what its package ships: nothing is translated, and
// PostgreSQL 18 keeps its checksums.
func TestTranslationsFollowTheMode(t *testing.T) {
	fair := Profile{BufferPoolBytes: 512 * mib}
	if tr := fair.Translations(discovery.Postgres, "18.1"); len(tr) != 3 || len(InitdbFlags(tr)) != 1 {
		t.Errorf("fair postgres 18 translations %+v", tr)
	}
	def := Profile{BufferPoolBytes: 512 * mib, Mode: ModeDefaults}
	tr := def.Translations(discovery.Postgres, "18.1")
	if len(InitdbFlags(tr)) != 0 {
		t.Errorf("defaults: initdb flags %v, want none (the package's checksums)", InitdbFlags(tr))
	}
	if tr := def.Translations(discovery.MySQL, "8.0.29"); len(tr) != 0 {
		t.Errorf("defaults: mysql 8.0.29 translations %+v, want none", tr)
	}
}
