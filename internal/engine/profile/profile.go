// Package profile is the fairness profile: the same settings for every engine (buffer pool,
// durability, redo size, connections), written in each engine's own names and translated for
// the versions that renamed or changed one; the modes (fair, defaults) and the knobs --explain
// flips. It is data and functions of an engine's kind and version: starting a server with it is
// internal/engine's.
package profile

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/fairbench/fairbench/internal/engine/discovery"
	"github.com/fairbench/fairbench/internal/result"
)

const (
	mib = int64(1) << 20
	gib = int64(1) << 30
)

// Profile is the fairness profile: the same settings applied to every engine.
// Zero fields mean "default" (see Default), so callers can override
// just the fields they care about.
type Profile struct {
	BufferPoolBytes int64 // shared_buffers = innodb_buffer_pool_size; default 25% of RAM capped at 2 GiB
	MaxConnections  int   // default 200
	RedoBytes       int64 // max_wal_size = innodb redo log capacity; default 1 GiB (large so checkpoints don't dominate)
	Binlog          bool  // binary log on both discovery.MySQL-family servers; default off
	// Mode is ModeFair ("" too) or ModeDefaults; Flip lists knobs (Knobs) flipped from it.
	Mode string
	Flip []string
	// CPUs, when above 0, confines the server to that many CPUs (the first ones fairbench may
	// run on) with its cgroup's cpuset controller: a condition of the run, not a fairness
	// setting, so no parity audit compares it; results record it as server.cpus.
	CPUs int
}

// Default sizes the buffer pool from this machine's memory (the
// smaller of physical RAM and the cgroup limit, since a container's limit is
// what actually bounds the server).
func Default() Profile {
	return Profile{
		BufferPoolBytes: defaultBufferPool(totalMemory()),
		MaxConnections:  200,
		RedoBytes:       gib,
	}
}

// defaultBufferPool is 25% of ram capped at 2 GiB, rounded down to a size no
// engine rounds up: InnoDB grows the pool to a whole number of chunks
// (128 MiB × instances, and MySQL uses several instances above 1 GiB), which
// would silently give MySQL more cache than PostgreSQL.
func defaultBufferPool(ram int64) int64 {
	bp := ram / 4
	if bp > 2*gib {
		bp = 2 * gib
	}
	if bp >= gib {
		bp = bp / gib * gib
	} else {
		bp = bp / (128 * mib) * (128 * mib)
	}
	if bp < 128*mib {
		bp = 128 * mib
	}
	return bp
}

// MachineMemory is the memory the servers can have: MemTotal, or the cgroup limit when lower.
func MachineMemory() int64 { return totalMemory() }

// totalMemory is MemTotal, lowered to the cgroup memory limit when there is one.
func totalMemory() int64 {
	mem := int64(8 * gib) // only used if /proc is unreadable
	if f, err := os.Open("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) >= 2 && fields[0] == "MemTotal:" {
				if kb, err := strconv.ParseInt(fields[1], 10, 64); err == nil {
					mem = kb * 1024
				}
				break
			}
		}
		f.Close()
	}
	for _, p := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// "max" (v2) or a huge number (v1) both mean unlimited and fail or
		// exceed MemTotal here, so they leave mem alone.
		if lim, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && lim > 0 && lim < mem {
			mem = lim
		}
	}
	return mem
}

// WithDefaults fills zero fields so that what is applied and what is reported
// are the same values.
func (p Profile) WithDefaults() Profile {
	d := Default()
	if p.BufferPoolBytes == 0 {
		p.BufferPoolBytes = d.BufferPoolBytes
	}
	if p.MaxConnections == 0 {
		p.MaxConnections = d.MaxConnections
	}
	if p.RedoBytes == 0 {
		p.RedoBytes = d.RedoBytes
	}
	return p.withKnobs()
}

// Validate rejects sizes some engine would refuse or silently change; sizes
// are whole MiB so that PostgreSQL's unit syntax states them exactly. A buffer
// pool may be as small as 16 MiB, above every engine's own minimum, so a run
// can show a working set that does not fit (InnoDB's chunk rule in knobs.go
// still asks MySQL and MariaDB for multiples of 128 MiB).
func (p Profile) Validate() error {
	if p.BufferPoolBytes < 16*mib || p.BufferPoolBytes%mib != 0 {
		return fmt.Errorf("buffer pool %d bytes: want a whole number of MiB, at least 16 MiB", p.BufferPoolBytes)
	}
	if p.RedoBytes < 32*mib || p.RedoBytes%mib != 0 {
		return fmt.Errorf("redo size %d bytes: want a whole number of MiB, at least 32 MiB (PostgreSQL needs two 16 MiB WAL segments)", p.RedoBytes)
	}
	if p.MaxConnections < 1 || p.MaxConnections > 100000 {
		return fmt.Errorf("max connections %d: want 1..100000", p.MaxConnections)
	}
	return nil
}

// Settings returns, per engine kind, the exact configuration keys/values that
// Start applies (for the report), assuming a current server version. Keys
// are the server's own variable names, so each one can be checked with SHOW
// (PostgreSQL) or SELECT @@key (MySQL family). Per-instance plumbing (port,
// paths, socket, user) is left out: it differs on every run and does not
// affect performance. An unknown kind gives nil.
func (p Profile) Settings(kind string) map[string]string {
	return p.WithDefaults().settingsFor(kind, "")
}

// ForServer is the profile as a server of kind and version takes it, translated where that
// version renamed or changed a setting: what Start gives it, and what compare --apply-profile
// sets on a running server of the user's.
func (p Profile) ForServer(kind, version string) map[string]string {
	return p.WithDefaults().settingsFor(kind, version)
}

// Translations lists, for a server version, the profile settings that version takes under
// another name or in another form, and why: what Start applies to it in their place. Empty
// when the version takes the profile as written, and for settings the profile's mode leaves
// to the engine (--profile defaults).
func (p Profile) Translations(kind, version string) []Translation {
	p = p.WithDefaults()
	final := p.settingsFor(kind, version)
	_, all := p.translatedSettings(kind, version)
	var out []Translation
	for _, t := range all {
		for _, k := range translationKeys[t.Setting+"\x00"+kind] {
			if _, ok := final[k]; ok {
				out = append(out, t)
				break
			}
		}
	}
	return out
}

// InitdbKeys are the settings that PostgreSQL takes from initdb rather than -c: they are
// fixed when the cluster is created.
var InitdbKeys = map[string]bool{"server_encoding": true, "lc_collate": true, "lc_ctype": true, "data_checksums": true}

// Translation records how one profile setting reached a version that renamed, dropped or
// changed it, so that every version gets the profile's meaning and a reader can check how.
type Translation = result.Translation

// translation is one rule of the table: for the versions it covers, it rewrites the settings
// map (and initdb flags) and says what it did.
type translation struct {
	kind    string
	covers  func(version string) bool
	setting string
	apply   func(p Profile, m map[string]string) string
	why     string
}

// translations is every renamed, dropped or changed setting among the versions fairbench runs.
// A setting no version renamed needs no row; a version a row does not cover takes the setting
// as written. The table is tested version by version (TestTranslations).
var translations = []translation{
	{
		kind: discovery.MySQL, covers: func(v string) bool { return v != "" && versionBefore(v, "8.0.30") }, setting: "innodb_redo_log_capacity",
		apply: func(p Profile, m map[string]string) string {
			delete(m, "innodb_redo_log_capacity")
			m["innodb_log_file_size"] = strconv.FormatInt(p.RedoBytes/2, 10)
			m["innodb_log_files_in_group"] = "2"
			return "innodb_log_file_size=" + m["innodb_log_file_size"] + ", innodb_log_files_in_group=2"
		},
		why: "MySQL before 8.0.30 has no innodb_redo_log_capacity; two redo files of half the size hold the same redo",
	},
	{
		kind: discovery.MariaDB, covers: func(string) bool { return true }, setting: "innodb_redo_log_capacity",
		apply: func(p Profile, m map[string]string) string {
			delete(m, "innodb_redo_log_capacity")
			m["innodb_log_file_size"] = strconv.FormatInt(p.RedoBytes, 10)
			return "innodb_log_file_size=" + m["innodb_log_file_size"]
		},
		why: "MariaDB has no innodb_redo_log_capacity; since 10.5 its redo log is one file, so the file size is the capacity",
	},
	{
		kind: discovery.Postgres, covers: since("16"), setting: "lc_collate",
		apply: func(Profile, map[string]string) string { return "pg_database.datcollate = C (initdb --locale=C)" },
		why:   "PostgreSQL 16 dropped the lc_collate server setting; the collation is the database's, set by initdb as before",
	},
	{
		kind: discovery.Postgres, covers: since("16"), setting: "lc_ctype",
		apply: func(Profile, map[string]string) string { return "pg_database.datctype = C (initdb --locale=C)" },
		why:   "PostgreSQL 16 dropped the lc_ctype server setting; the character classes are the database's, set by initdb as before",
	},
	{
		kind: discovery.Postgres, covers: since("18"), setting: "data_checksums",
		apply: func(p Profile, m map[string]string) string { return "initdb --no-data-checksums" },
		why:   "PostgreSQL 18's initdb turns page checksums on by default, 15 and 17 leave them off: 18 is told to match",
	},
}

// InitdbFlags are initdb's flags for the translated init-time settings of a version.
func InitdbFlags(tr []Translation) []string {
	var flags []string
	for _, t := range tr {
		if f, ok := strings.CutPrefix(t.As, "initdb "); ok {
			flags = append(flags, f)
		}
	}
	return flags
}

// FairSettings is the fair profile for a particular server version ("" = current), translated
// where that version renamed or changed a setting; settingsFor (knobs.go) derives the other
// modes from it.
func (p Profile) FairSettings(kind, version string) map[string]string {
	m, _ := p.translatedSettings(kind, version)
	return m
}

// translationKeys are, per translated setting and kind, the keys that carry it after the
// translation: where none is applied (the mode left it to the engine), nothing was translated.
var translationKeys = map[string][]string{
	"innodb_redo_log_capacity\x00" + discovery.MySQL:   {"innodb_log_file_size"},
	"innodb_redo_log_capacity\x00" + discovery.MariaDB: {"innodb_log_file_size"},
	"lc_collate\x00" + discovery.Postgres:              {"lc_collate"},
	"lc_ctype\x00" + discovery.Postgres:                {"lc_ctype"},
	"data_checksums\x00" + discovery.Postgres:          {"data_checksums"},
}

// translatedSettings is the fair profile for a particular server version ("" = current), with
// the translations that version needed.
func (p Profile) translatedSettings(kind, version string) (map[string]string, []Translation) {
	m := p.baseSettings(kind)
	if m == nil {
		return nil, nil
	}
	var done []Translation
	for _, t := range translations {
		if t.kind == kind && t.covers(version) {
			done = append(done, Translation{Setting: t.setting, As: t.apply(p, m), Why: t.why})
		}
	}
	return m, done
}

// baseSettings is the profile under the names current versions use.
func (p Profile) baseSettings(kind string) map[string]string {
	switch kind {
	case discovery.Postgres:
		return map[string]string{
			"listen_addresses":   "127.0.0.1",
			"shared_buffers":     pgSize(p.BufferPoolBytes),
			"max_connections":    strconv.Itoa(p.MaxConnections),
			"max_wal_size":       pgSize(p.RedoBytes),
			"fsync":              "on",
			"synchronous_commit": "on",
			"full_page_writes":   "on",
			// Per-statement accounting, the counterpart of the performance schema's statement
			// digests that MySQL and MariaDB keep under this profile (internal/statements).
			"shared_preload_libraries": "pg_stat_statements",
			// Page checksums cost CPU on every read and write; every version runs
			// without, as 15 and 17 do by default.
			"data_checksums": "off",
			// initdb picks this from what works where it runs (sysv in a Debian
			// root); every version gets the host's POSIX shared memory.
			"dynamic_shared_memory_type": "posix",
			// UTF-8 everywhere keeps the bytes stored per row comparable with
			// utf8mb4 on the MySQL family; C collation avoids locale-dependent
			// comparison costs that differ between machines.
			"server_encoding": "UTF8",
			"lc_collate":      "C",
			"lc_ctype":        "C",
		}
	case discovery.MySQL, discovery.MariaDB:
		m := map[string]string{
			"bind_address":                   "127.0.0.1",
			"innodb_buffer_pool_size":        strconv.FormatInt(p.BufferPoolBytes, 10),
			"max_connections":                strconv.Itoa(p.MaxConnections),
			"innodb_flush_log_at_trx_commit": "1",
			"innodb_redo_log_capacity":       strconv.FormatInt(p.RedoBytes, 10),
			// Doublewrite is InnoDB's counterpart of full_page_writes.
			"innodb_doublewrite": "ON",
			// MariaDB 10.11 still defaults to latin1; MySQL to utf8mb4.
			"character_set_server": "utf8mb4",
			// A DNS lookup per connection would be pure overhead that
			// PostgreSQL does not pay.
			"skip_name_resolve": "ON",
			// Each client prepares its statements on every table. PostgreSQL
			// has no server-wide cap on prepared statements; InnoDB engines
			// stop at 16,382 by default, which 512 clients on 16 tables pass
			// (the thread-scaling study). The maximum lifts a limit only one
			// family has.
			"max_prepared_stmt_count": "1048576",
			// Statement and wait instrumentation alike on both: MySQL ships the performance
			// schema on and MariaDB off, so a run on defaults would pay its cost on one engine
			// only; fairbench's wait sampling reads the waits in progress from it.
			"performance_schema": "ON",
			"performance_schema_consumer_events_waits_current": "ON",
			// MySQL's default; MariaDB counts prepared statements' executions only with it.
			"performance_schema_consumer_events_statements_current": "ON",
		}
		if p.Binlog {
			m["log_bin"] = "ON"
			m["server_id"] = "1"
			// The defaults differ (sync_binlog 0 and MIXED on MariaDB, 1 and
			// ROW on MySQL), so both are pinned to the durable, ROW setting.
			m["sync_binlog"] = "1"
			m["binlog_format"] = "ROW"
		} else {
			m["log_bin"] = "OFF"
		}
		return m
	}
	return nil
}

// since covers version ref and later, and "" (the current version).
func since(ref string) func(string) bool {
	return func(v string) bool { return v == "" || !versionBefore(v, ref) }
}

// versionBefore says whether dotted version v is older than ref.
func versionBefore(v, ref string) bool {
	return result.CompareVersions(result.VersionNumber(v), ref) < 0
}

// pgSize writes bytes in PostgreSQL's unit syntax (where MB means MiB).
func pgSize(b int64) string {
	switch {
	case b%gib == 0:
		return strconv.FormatInt(b/gib, 10) + "GB"
	case b%mib == 0:
		return strconv.FormatInt(b/mib, 10) + "MB"
	}
	return strconv.FormatInt(b/1024, 10) + "kB"
}
