package dialect

import (
	"testing"

	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/sqldb"
)

func TestSettingBytes(t *testing.T) {
	for in, want := range map[string]int64{"128MB": 128 << 20, "1GB": 1 << 30, "8192": 8192, "134217728": 128 << 20, "64kB": 64 << 10} {
		if got, ok := settingBytes(in); !ok || got != want {
			t.Errorf("settingBytes(%q) = %d, %v; want %d", in, got, ok, want)
		}
	}
	for _, bad := range []string{"", "lots", "12 parsecs", "524288 (8kB)"} {
		if _, ok := settingBytes(bad); ok {
			t.Errorf("settingBytes(%q) accepted", bad)
		}
	}
}

// Each family's own names read into the common facets: equal settings give equal values, and
// the family's own way of saying it is kept for the reader.
func TestFacets(t *testing.T) {
	pg := map[string]string{"fsync": "on", "synchronous_commit": "on", "shared_buffers": "1GB", "max_wal_size": "1GB",
		"full_page_writes": "on", "default_transaction_isolation": "read committed", "block_size": "8192",
		"data_checksums": "off", "max_connections": "200", "server_encoding": "UTF8", "shared_preload_libraries": "pg_stat_statements"}
	my := map[string]string{"innodb_flush_log_at_trx_commit": "1", "log_bin": "ON", "sync_binlog": "1",
		"innodb_buffer_pool_size": "1073741824", "innodb_redo_log_capacity": "1073741824", "innodb_doublewrite": "ON",
		"transaction_isolation": "READ-COMMITTED", "innodb_page_size": "16384", "innodb_checksum_algorithm": "crc32",
		"max_connections": "200", "character_set_server": "utf8mb4", "innodb_flush_method": "O_DIRECT", "performance_schema": "OFF"}
	pf, mf := For(sqldb.Postgres).Facets(pg), For(sqldb.MariaDB).Facets(my)
	for _, c := range []struct {
		key        string
		pg, my     result.Facet
		sameValues bool
	}{
		{result.FacetDurability, result.Facet{Shown: "fsync=on, synchronous_commit=on", Value: "on"}, result.Facet{Shown: "innodb_flush_log_at_trx_commit=1", Value: "on"}, true},
		{result.FacetBinaryLog, result.Facet{NoSuch: true}, result.Facet{Shown: "on, sync_binlog=1", Value: "on, sync_binlog=1"}, false},
		{result.FacetBufferPool, result.Facet{Shown: "1 GiB", Value: "1073741824"}, result.Facet{Shown: "1 GiB", Value: "1073741824"}, true},
		{result.FacetRedoSize, result.Facet{Shown: "1 GiB", Value: "1073741824"}, result.Facet{Shown: "1 GiB (innodb_redo_log_capacity)", Value: "1073741824"}, true},
		{result.FacetIsolation, result.Facet{Shown: "READ COMMITTED", Value: "READ COMMITTED"}, result.Facet{Shown: "READ COMMITTED", Value: "READ COMMITTED"}, true},
		{result.FacetPageSize, result.Facet{Shown: "8 KiB", Value: "8192"}, result.Facet{Shown: "16 KiB", Value: "16384"}, false},
		{result.FacetPageChecksums, result.Facet{Shown: "off", Value: "off"}, result.Facet{Shown: "on (crc32)", Value: "on"}, false},
		{result.FacetMaxConnections, result.Facet{Shown: "200", Value: "200"}, result.Facet{Shown: "200", Value: "200"}, true},
		{result.FacetCharset, result.Facet{Shown: "UTF8", Value: "UTF-8"}, result.Facet{Shown: "utf8mb4", Value: "UTF-8"}, true},
		{result.FacetFlushMethod, result.Facet{NoSuch: true}, result.Facet{Shown: "O_DIRECT", Value: "O_DIRECT"}, false},
		{result.FacetStatementAccounting, result.Facet{Shown: "pg_stat_statements", Value: "on"}, result.Facet{Shown: "performance_schema=OFF", Value: "off"}, false},
	} {
		if got := pf[c.key]; got != c.pg {
			t.Errorf("postgres %s = %+v, want %+v", c.key, got, c.pg)
		}
		if got := mf[c.key]; got != c.my {
			t.Errorf("innodb %s = %+v, want %+v", c.key, got, c.my)
		}
		if same := pf[c.key].Value == mf[c.key].Value; same != c.sameValues {
			t.Errorf("%s: equal values %v, want %v", c.key, same, c.sameValues)
		}
	}
	if pf[result.FacetTornPage].Value != "on" || mf[result.FacetTornPage].Value != "on" || pf[result.FacetTornPage].Mechanism == mf[result.FacetTornPage].Mechanism {
		t.Errorf("torn-page protection: %+v and %+v, want both on by different mechanisms", pf[result.FacetTornPage], mf[result.FacetTornPage])
	}
}

// A result recorded before facets existed is read with them: the dialect registered its kinds.
func TestFacetsFilledForOldResults(t *testing.T) {
	for kind, family := range map[string]string{"postgres": "postgres", "mysql": "innodb", "mariadb": "innodb"} {
		r := &result.Result{Engine: result.Engine{Kind: kind}, Server: &result.Server{Settings: map[string]string{"max_connections": "100"}}}
		result.FillFacets(r)
		if r.Server.SettingsFamily != family || r.Server.Facets[result.FacetMaxConnections].Value != "100" {
			t.Errorf("%s: family %q, facets %+v; want %s and max_connections 100", kind, r.Server.SettingsFamily, r.Server.Facets, family)
		}
	}
	r := &result.Result{Engine: result.Engine{Kind: "oracle"}, Server: &result.Server{Settings: map[string]string{"processes": "100"}}}
	if result.FillFacets(r); r.Server.Facets != nil {
		t.Errorf("an unknown kind was read: %+v", r.Server.Facets)
	}
}
