package profile

import (
	"fmt"
	"sort"
	"strings"

	"github.com/fairbench/fairbench/internal/engine/discovery"
)

// Profile modes: the fairness profile, or each engine as its Debian package ships it.
const (
	ModeFair     = "fair"
	ModeDefaults = "defaults"
)

// Modes lists the profile modes, default first.
var Modes = []string{ModeFair, ModeDefaults}

// packageBufferPool is the buffer pool every engine ships with: InnoDB's compiled default
// innodb_buffer_pool_size and the shared_buffers initdb writes on a machine of any size.
const packageBufferPool = 128 * mib

// Knob is one setting that --explain flips, alone, to measure its share of a gap.
type Knob struct {
	Name    string
	Engines []string // the kinds it applies to
	Doc     string   // what flipping it does, for --help and the report
	// flip changes the settings of one engine of kind (m is the profile's map for it).
	flip func(p Profile, kind string, m map[string]string)
	// expect gives the sign of the throughput change the flip's physics allows, from the
	// settings it led to: +1 when it removes work (no log flush at commit), -1 when it adds
	// work, 0 when either way is possible.
	expect func(kind string, to map[string]string) int
}

// Expect gives the sign of the throughput change flipping k to the settings to can cause: +1
// when the flip only removes work (commit without a log flush), -1 when it only adds work (a
// synced binary log), 0 when it may go either way. A measured effect of the other sign is noise.
func (k Knob) Expect(kind string, to map[string]string) int {
	if k.expect == nil {
		return 0
	}
	return k.expect(kind, to)
}

// removesWorkWhen gives an expect function: +1 when setting key is off (one of offs), else -1.
func removesWorkWhen(keys map[string]string, offs ...string) func(string, map[string]string) int {
	return func(kind string, to map[string]string) int {
		key := keys[kind]
		if key == "" {
			key = keys[""]
		}
		v, ok := to[key]
		if !ok {
			return 0
		}
		for _, off := range offs {
			if strings.EqualFold(v, off) {
				return 1
			}
		}
		return -1
	}
}

// Knobs are the settings --explain can flip, in the order they are documented.
var Knobs = []Knob{
	{Name: "binlog", Engines: []string{discovery.MySQL, discovery.MariaDB}, flip: flipBinlog,
		expect: removesWorkWhen(map[string]string{"": "log_bin"}, "OFF"),
		Doc:    "binary log: on with sync_binlog=1 where the profile has it off, off where it is on"},
	{Name: "doublewrite", Engines: []string{discovery.Postgres, discovery.MySQL, discovery.MariaDB}, flip: flipTornPage,
		expect: removesWorkWhen(map[string]string{discovery.Postgres: "full_page_writes", "": "innodb_doublewrite"}, "off"),
		Doc:    "torn-page protection: innodb_doublewrite on InnoDB, full_page_writes on PostgreSQL, turned off"},
	{Name: "flush-method", Engines: []string{discovery.MySQL, discovery.MariaDB}, flip: flipFlushMethod,
		Doc: "innodb_flush_method fsync (through the page cache) instead of the engine's default O_DIRECT"},
	{Name: "synchronous-commit", Engines: []string{discovery.Postgres, discovery.MySQL, discovery.MariaDB}, flip: flipSyncCommit,
		expect: removesWorkWhen(map[string]string{discovery.Postgres: "synchronous_commit", "": "innodb_flush_log_at_trx_commit"}, "off", "2", "0"),
		Doc:    "commit without waiting for the log flush: synchronous_commit=off, innodb_flush_log_at_trx_commit=2"},
	{Name: "buffer-pool", Engines: []string{discovery.Postgres, discovery.MySQL, discovery.MariaDB}, flip: func(Profile, string, map[string]string) {},
		Doc: "the other profile's buffer pool: the packages' 128 MiB under fair, the fair size under defaults"},
}

// KnobNames lists the knobs' names, for error messages and help.
func KnobNames() []string {
	out := make([]string, len(Knobs))
	for i, k := range Knobs {
		out[i] = k.Name
	}
	return out
}

// FlipExpect is the sign of the throughput change that flipping the knobs named (compare
// --explain's "a+b" flips several) can cause on an engine of kind given the settings applied:
// the knobs' Expect where they all agree, 0 otherwise or for a knob unknown here.
func FlipExpect(flip []string, kind string, applied map[string]string) int {
	sign := 0
	for i, name := range flip {
		kn, err := LookupKnob(name)
		if err != nil {
			return 0
		}
		e := kn.Expect(kind, applied)
		if i > 0 && e != sign {
			return 0
		}
		sign = e
	}
	return sign
}

// LookupKnob finds a knob by name, with an error that names the valid ones.
func LookupKnob(name string) (Knob, error) {
	for _, k := range Knobs {
		if k.Name == name {
			return k, nil
		}
	}
	return Knob{}, fmt.Errorf("unknown knob %q in --explain: use %s", name, strings.Join(KnobNames(), ", "))
}

// AppliesTo says whether flipping the knob changes anything on an engine of kind.
func (k Knob) AppliesTo(kind string) bool {
	for _, e := range k.Engines {
		if e == kind {
			return true
		}
	}
	return false
}

// ParseMode reads --profile.
func ParseMode(v string) (string, error) {
	for _, m := range Modes {
		if v == m {
			return m, nil
		}
	}
	return "", fmt.Errorf("unknown profile %q in --profile: use %s", v, strings.Join(Modes, " or "))
}

// Name is the profile's name as results record it: "fair" or "defaults".
func (p Profile) Name() string {
	if p.Mode == "" {
		return ModeFair
	}
	return p.Mode
}

// flipped reports whether knob is flipped in this profile.
func (p Profile) flipped(knob string) bool {
	for _, f := range p.Flip {
		if f == knob {
			return true
		}
	}
	return false
}

// withKnobs resolves what the mode and the flipped knobs mean for the profile's own fields, so
// that Start checks the server against the sizes it really asked for.
func (p Profile) withKnobs() Profile {
	if p.Mode == ModeFair || p.Mode == "" {
		if p.flipped("buffer-pool") {
			p.BufferPoolBytes = packageBufferPool
		}
	}
	p.Flip = append([]string(nil), p.Flip...)
	sort.Strings(p.Flip)
	return p
}

// Check says, before anything starts, whether an engine of kind (a cluster's node kind), named
// name in messages, can run with the profile: an unknown mode or knob, a flag that contradicts the
// mode, or a size the engine would silently change. The errors are the user's to fix.
func (p Profile) Check(kind, name string) error {
	if p.Mode != "" {
		if _, err := ParseMode(p.Mode); err != nil {
			return err
		}
	}
	for _, f := range p.Flip {
		if _, err := LookupKnob(f); err != nil {
			return err
		}
	}
	if p.Mode == ModeDefaults && p.Binlog {
		return fmt.Errorf("--binlog contradicts --profile defaults (which leaves each engine's binary log as shipped): drop --binlog, or measure it with --explain binlog")
	}
	if kind == discovery.MySQL || kind == discovery.MariaDB {
		// A pool smaller than one 128 MiB chunk is taken as given: MySQL shrinks the chunk to
		// the pool and MariaDB sizes its chunks itself (16 MiB read back as 16 MiB from MySQL
		// 9.7, MariaDB 10.11 and 11.8).
		bp := p.WithDefaults().BufferPoolBytes
		if bp > 128*mib && (bp%(128*mib) != 0 || (bp > gib && bp%gib != 0)) {
			return fmt.Errorf("%s cannot take a buffer pool of %d MiB: InnoDB rounds it up to whole 128 MiB chunks per instance; use a multiple of 128M below 1G (or less than 128M), or of 1G above", name, bp>>20)
		}
	}
	return nil
}

// settingsFor is the configuration Start applies: the fair settings, cut down to what the package
// ships under --profile defaults, with the flipped knobs applied last.
func (p Profile) settingsFor(kind, version string) map[string]string {
	m := p.FairSettings(kind, version)
	if m == nil {
		return nil
	}
	if p.Mode == ModeDefaults {
		m = packageSettings(kind, m)
		if p.flipped("buffer-pool") {
			fair := p.FairSettings(kind, version)
			for _, k := range []string{"shared_buffers", "innodb_buffer_pool_size"} {
				if v, ok := fair[k]; ok {
					m[k] = v
				}
			}
		}
	}
	for _, f := range p.Flip {
		if k, err := LookupKnob(f); err == nil && k.AppliesTo(kind) {
			k.flip(p, kind, m)
		}
	}
	return m
}

// packageSettings keeps, of the fair settings, only what a server needs to be reached and to run
// the benchmark, and what the Debian package itself configures: the loopback address, no DNS
// lookups, the prepared-statement cap, POSIX shared memory, and the character
// set (Debian's MariaDB ships utf8mb4 in 50-server.cnf; MySQL's compiled default is utf8mb4;
// PostgreSQL's encoding and locale are initdb's). Everything else is the engine's own default,
// the buffer pool included, and MySQL's binary log is on, as it ships.
func packageSettings(kind string, fair map[string]string) map[string]string {
	keep := map[string]bool{"listen_addresses": true, "bind_address": true, "skip_name_resolve": true,
		"character_set_server": true, "server_encoding": true, "lc_collate": true, "lc_ctype": true,
		// Plumbing, not tuning: enough prepared statements for the benchmark's clients to run at
		// all, and shared memory that works in a chroot.
		"max_prepared_stmt_count": true, "dynamic_shared_memory_type": true}
	m := map[string]string{}
	for k, v := range fair {
		if keep[k] {
			m[k] = v
		}
	}
	if kind == discovery.MariaDB {
		m["collation_server"] = "utf8mb4_general_ci"
	}
	return m
}

// binlogOn says whether a MySQL-family server with these settings writes a binary log: MySQL
// does unless told otherwise, MariaDB only when told.
func binlogOn(kind string, m map[string]string) bool {
	if v, ok := m["log_bin"]; ok {
		return v == "ON"
	}
	return kind == discovery.MySQL
}

func flipBinlog(_ Profile, kind string, m map[string]string) {
	if binlogOn(kind, m) {
		m["log_bin"] = "OFF"
		for _, k := range []string{"sync_binlog", "binlog_format", "server_id"} {
			delete(m, k)
		}
		return
	}
	m["log_bin"] = "ON"
	m["server_id"] = "1"
	m["sync_binlog"] = "1"
	m["binlog_format"] = "ROW"
}

func flipTornPage(_ Profile, kind string, m map[string]string) {
	if kind == discovery.Postgres {
		m["full_page_writes"] = toggle(m["full_page_writes"], "on", "off", "on")
		return
	}
	m["innodb_doublewrite"] = toggle(m["innodb_doublewrite"], "ON", "OFF", "ON")
}

func flipFlushMethod(_ Profile, _ string, m map[string]string) {
	// Both MySQL 8.4+ and MariaDB 10.6+ default to O_DIRECT on Linux.
	m["innodb_flush_method"] = toggle(m["innodb_flush_method"], "O_DIRECT", "fsync", "O_DIRECT")
}

func flipSyncCommit(_ Profile, kind string, m map[string]string) {
	if kind == discovery.Postgres {
		m["synchronous_commit"] = toggle(m["synchronous_commit"], "on", "off", "on")
		return
	}
	m["innodb_flush_log_at_trx_commit"] = toggle(m["innodb_flush_log_at_trx_commit"], "1", "2", "1")
}

// toggle turns on into off and back; an unset value counts as the engine's default def.
func toggle(v, on, off, def string) string {
	if v == "" {
		v = def
	}
	if strings.EqualFold(v, on) {
		return off
	}
	return on
}
