package engine

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

const (
	mib = int64(1) << 20
	gib = int64(1) << 30
)

// Profile is the fairness profile: the same settings applied to every engine.
// Zero fields mean "default" (see DefaultProfile), so callers can override
// just the fields they care about.
type Profile struct {
	BufferPoolBytes int64 // shared_buffers = innodb_buffer_pool_size; default 25% of RAM capped at 2 GiB
	MaxConnections  int   // default 200
	RedoBytes       int64 // max_wal_size = innodb redo log capacity; default 1 GiB (large so checkpoints don't dominate)
	Binlog          bool  // binary log on both MySQL-family servers; default off
	// Mode is ModeFair ("" too) or ModeDefaults; Flip lists knobs (Knobs) flipped from it.
	Mode string
	Flip []string
}

// DefaultProfile sizes the buffer pool from this machine's memory (the
// smaller of physical RAM and the cgroup limit, since a container's limit is
// what actually bounds the server).
func DefaultProfile() Profile {
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

// withDefaults fills zero fields so that what is applied and what is reported
// are the same values.
func (p Profile) withDefaults() Profile {
	d := DefaultProfile()
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

// validate rejects sizes some engine would refuse or silently change; sizes
// are whole MiB so that PostgreSQL's unit syntax states them exactly.
func (p Profile) validate() error {
	if p.BufferPoolBytes < 32*mib || p.BufferPoolBytes%mib != 0 {
		return fmt.Errorf("buffer pool %d bytes: want a whole number of MiB, at least 32 MiB", p.BufferPoolBytes)
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
	return p.withDefaults().settingsFor(kind, "")
}

// Settings keys that PostgreSQL takes from initdb rather than -c: they are
// fixed when the cluster is created.
var pgInitKeys = map[string]bool{"server_encoding": true, "lc_collate": true, "lc_ctype": true}

// fairSettings is the fair profile for a particular server version ("" =
// current), because MySQL renamed its redo option in 8.0.30; settingsFor
// (knobs.go) derives the other modes from it.
func (p Profile) fairSettings(kind, version string) map[string]string {
	switch kind {
	case Postgres:
		return map[string]string{
			"listen_addresses":   "127.0.0.1",
			"shared_buffers":     pgSize(p.BufferPoolBytes),
			"max_connections":    strconv.Itoa(p.MaxConnections),
			"max_wal_size":       pgSize(p.RedoBytes),
			"fsync":              "on",
			"synchronous_commit": "on",
			"full_page_writes":   "on",
			// UTF-8 everywhere keeps the bytes stored per row comparable with
			// utf8mb4 on the MySQL family; C collation avoids locale-dependent
			// comparison costs that differ between machines.
			"server_encoding": "UTF8",
			"lc_collate":      "C",
			"lc_ctype":        "C",
		}
	case MySQL, MariaDB:
		m := map[string]string{
			"bind_address":                   "127.0.0.1",
			"innodb_buffer_pool_size":        strconv.FormatInt(p.BufferPoolBytes, 10),
			"max_connections":                strconv.Itoa(p.MaxConnections),
			"innodb_flush_log_at_trx_commit": "1",
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
		ma, mi := majorMinor(version)
		if kind == MariaDB {
			// Since 10.5 MariaDB has a single redo file, so its size is the
			// whole redo capacity.
			m["innodb_log_file_size"] = strconv.FormatInt(p.RedoBytes, 10)
		} else if version == "" || ma > 8 || (ma == 8 && mi >= 1) || (ma == 8 && mi == 0 && patchOf(version) >= 30) {
			m["innodb_redo_log_capacity"] = strconv.FormatInt(p.RedoBytes, 10)
		} else {
			m["innodb_log_file_size"] = strconv.FormatInt(p.RedoBytes/2, 10)
			m["innodb_log_files_in_group"] = "2"
		}
		return m
	}
	return nil
}

func patchOf(v string) int {
	parts := strings.Split(v, ".")
	if len(parts) < 3 {
		return 0
	}
	n, _ := strconv.Atoi(parts[2])
	return n
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
