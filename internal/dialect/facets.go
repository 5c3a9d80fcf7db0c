package dialect

import (
	"strconv"
	"strings"

	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/sqldb"
)

// The parity audit's facets (result.Facet): each family's own setting names read into the
// names every engine shares, here, so that nothing which reads results needs to know them.
// Registered with the results package so that every result written carries them, and a result
// recorded before facets existed is read with them.
func init() {
	result.RegisterFacets(postgresDialect.SettingsFamily(), postgresDialect.Facets, string(sqldb.Postgres))
	result.RegisterFacets(mysqlDialect.SettingsFamily(), mysqlDialect.Facets, string(sqldb.MySQL), string(sqldb.MariaDB))
}

// SettingsFamily: the engines whose settings go by PostgreSQL's names.
func (postgres) SettingsFamily() string { return "postgres" }

// SettingsFamily: the MySQL family, whose settings go by InnoDB's and the server's names.
func (innodb) SettingsFamily() string { return "innodb" }

// Facets reads PostgreSQL's settings (as SHOW shows them) into the common facets.
func (postgres) Facets(s map[string]string) map[string]result.Facet {
	out := facetSet{}
	put := out.put
	if fs, ok := s["fsync"]; ok {
		if sc, ok := s["synchronous_commit"]; ok {
			out[result.FacetDurability] = result.Facet{Shown: "fsync=" + fs + ", synchronous_commit=" + sc, Value: onOff(fs == "on" && sc != "off")}
		}
	}
	out[result.FacetBinaryLog] = result.Facet{NoSuch: true}
	out[result.FacetFlushMethod] = result.Facet{NoSuch: true}
	put(result.FacetBufferPool)(bytesFacet(s["shared_buffers"], ""))
	put(result.FacetRedoSize)(bytesFacet(s["max_wal_size"], ""))
	put(result.FacetPageSize)(bytesFacet(s["block_size"], ""))
	put(result.FacetTornPage)(tornPageFacet(s, "full_page_writes", "PostgreSQL logs a page's first change after a checkpoint whole"))
	put(result.FacetIsolation)(isolationFacet(s["default_transaction_isolation"]))
	if v, ok := s["data_checksums"]; ok {
		out[result.FacetPageChecksums] = result.Facet{Shown: v, Value: strings.ToLower(v)}
	}
	put(result.FacetMaxConnections)(plainFacet(s, "max_connections"))
	put(result.FacetCharset)(charsetFacet(s["server_encoding"]))
	if v, ok := s["shared_preload_libraries"]; ok {
		f := result.Facet{Shown: "no pg_stat_statements", Value: "off"}
		if strings.Contains(v, "pg_stat_statements") {
			f = result.Facet{Shown: "pg_stat_statements", Value: "on"}
		}
		out[result.FacetStatementAccounting] = f
	}
	return map[string]result.Facet(out)
}

// Facets reads the MySQL family's settings (as SHOW GLOBAL VARIABLES gives them, sizes in
// bytes) into the common facets.
func (innodb) Facets(s map[string]string) map[string]result.Facet {
	out := facetSet{}
	put := out.put
	if v, ok := s["innodb_flush_log_at_trx_commit"]; ok {
		out[result.FacetDurability] = result.Facet{Shown: "innodb_flush_log_at_trx_commit=" + v, Value: onOff(v == "1")}
	}
	put(result.FacetBinaryLog)(binlogFacet(s))
	put(result.FacetBufferPool)(bytesFacet(s["innodb_buffer_pool_size"], ""))
	for _, k := range []string{"innodb_redo_log_capacity", "innodb_log_file_size"} {
		if f, ok := bytesFacet(s[k], k); ok {
			out[result.FacetRedoSize] = f
			break
		}
	}
	put(result.FacetPageSize)(bytesFacet(s["innodb_page_size"], ""))
	put(result.FacetTornPage)(tornPageFacet(s, "innodb_doublewrite", "InnoDB writes pages twice"))
	put(result.FacetIsolation)(isolationFacet(s["transaction_isolation"]))
	if v, ok := s["innodb_checksum_algorithm"]; ok {
		on := onOff(!strings.Contains(strings.ToLower(v), "none"))
		out[result.FacetPageChecksums] = result.Facet{Shown: on + " (" + v + ")", Value: on}
	}
	put(result.FacetMaxConnections)(plainFacet(s, "max_connections"))
	put(result.FacetCharset)(charsetFacet(s["character_set_server"]))
	put(result.FacetFlushMethod)(plainFacet(s, "innodb_flush_method"))
	if v, ok := s["performance_schema"]; ok {
		on := strings.EqualFold(v, "ON") || v == "1"
		out[result.FacetStatementAccounting] = result.Facet{Shown: "performance_schema=" + v, Value: onOff(on)}
	}
	return map[string]result.Facet(out)
}

// facetSet is a server's facets by name.
type facetSet map[string]result.Facet

// put keeps a facet that was read (ok) under name: put(name)(bytesFacet(...)).
func (s facetSet) put(name string) func(result.Facet, bool) {
	return func(f result.Facet, ok bool) {
		if ok {
			s[name] = f
		}
	}
}

func binlogFacet(s map[string]string) (result.Facet, bool) {
	v, ok := s["log_bin"]
	if !ok {
		return result.Facet{}, false
	}
	if !strings.EqualFold(v, "ON") && v != "1" {
		return result.Facet{Shown: "off", Value: "off"}, true
	}
	shown := "on"
	if sb, ok := s["sync_binlog"]; ok {
		shown += ", sync_binlog=" + sb
	}
	return result.Facet{Shown: shown, Value: strings.ToLower(shown)}, true
}

// bytesFacet reads a size; from names the setting in what is shown where the family has more
// than one for the facet.
func bytesFacet(v, from string) (result.Facet, bool) {
	n, ok := settingBytes(v)
	if !ok {
		return result.Facet{}, false
	}
	shown := formatBytes(n)
	if from != "" {
		shown += " (" + from + ")"
	}
	return result.Facet{Shown: shown, Value: strconv.FormatInt(n, 10)}, true
}

func plainFacet(s map[string]string, key string) (result.Facet, bool) {
	v, ok := s[key]
	if !ok {
		return result.Facet{}, false
	}
	return result.Facet{Shown: v, Value: strings.ToUpper(v)}, true
}

// switchFacet reads an on/off setting, shown with its name since the families' names differ.
func switchFacet(s map[string]string, key string) (result.Facet, bool) {
	v, ok := s[key]
	if !ok {
		return result.Facet{}, false
	}
	on := strings.EqualFold(v, "on") || v == "1" || strings.EqualFold(v, "true")
	return result.Facet{Shown: key + "=" + v, Value: onOff(on)}, true
}

// tornPageFacet reads the switch of a family's torn-page protection and names its mechanism:
// how it does it, since equal "on"s cost the engines different writes.
func tornPageFacet(s map[string]string, key, how string) (result.Facet, bool) {
	f, ok := switchFacet(s, key)
	f.Mechanism = strings.TrimPrefix(key, "innodb_") + " (" + how + ")"
	return f, ok
}

func isolationFacet(v string) (result.Facet, bool) {
	if v == "" {
		return result.Facet{}, false
	}
	canon := strings.ToUpper(strings.ReplaceAll(v, "-", " "))
	return result.Facet{Shown: canon, Value: canon}, true
}

func charsetFacet(v string) (result.Facet, bool) {
	if v == "" {
		return result.Facet{}, false
	}
	canon := strings.ToUpper(v)
	switch canon {
	case "UTF8", "UTF8MB4":
		canon = "UTF-8"
	case "UTF8MB3":
		canon = "UTF-8 (3-byte)"
	}
	return result.Facet{Shown: v, Value: canon}, true
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// settingBytes reads a size as a server reports it: PostgreSQL's "128MB", "1GB", "8192", or
// a plain byte count from the MySQL family.
func settingBytes(v string) (int64, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		m      int64
	}{{"kB", 1 << 10}, {"MB", 1 << 20}, {"GB", 1 << 30}, {"TB", 1 << 40}} {
		if strings.HasSuffix(v, u.suffix) {
			mult, v = u.m, strings.TrimSuffix(v, u.suffix)
			break
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return 0, false
	}
	return n * mult, true
}

// formatBytes writes bytes in the largest binary unit that states them exactly: "128 MiB".
// A setting's size has few digits in that unit, so they are not grouped.
func formatBytes(n int64) string {
	for _, u := range []struct {
		name string
		b    int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.b && n%u.b == 0 {
			return strconv.FormatInt(n/u.b, 10) + " " + u.name
		}
	}
	return strconv.FormatInt(n, 10) + " B"
}
