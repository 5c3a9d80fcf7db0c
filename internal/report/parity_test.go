package report

import (
	"strings"
	"testing"

	"github.com/fairbench/fairbench/internal/result"
)

// Settings as the three servers reported them under --profile defaults (PostgreSQL 15, MySQL 9.7,
// MariaDB 10.11 on this project's machine).
var defaultsSettings = map[string]map[string]string{
	"postgres": {"shared_buffers": "128MB", "max_connections": "100", "max_wal_size": "1GB", "fsync": "on",
		"synchronous_commit": "on", "full_page_writes": "on", "default_transaction_isolation": "read committed",
		"block_size": "8192", "data_checksums": "off", "server_encoding": "UTF8", "wal_sync_method": "fdatasync"},
	"mysql": {"innodb_buffer_pool_size": "134217728", "max_connections": "151", "innodb_flush_log_at_trx_commit": "1",
		"sync_binlog": "1", "log_bin": "ON", "innodb_redo_log_capacity": "104857600", "innodb_doublewrite": "ON",
		"innodb_flush_method": "O_DIRECT", "transaction_isolation": "REPEATABLE-READ", "innodb_page_size": "16384",
		"innodb_checksum_algorithm": "crc32", "character_set_server": "utf8mb4"},
	"mariadb": {"innodb_buffer_pool_size": "134217728", "max_connections": "151", "innodb_flush_log_at_trx_commit": "1",
		"sync_binlog": "0", "log_bin": "OFF", "innodb_log_file_size": "100663296", "innodb_doublewrite": "ON",
		"innodb_flush_method": "O_DIRECT", "transaction_isolation": "REPEATABLE-READ", "innodb_page_size": "16384",
		"innodb_checksum_algorithm": "full_crc32", "character_set_server": "utf8mb4"},
}

func sysbenchDataset(rowsOfLast int64) *result.Dataset {
	ds := &result.Dataset{Checksummed: true, Seconds: 0.4}
	for i, sum := range []string{"28842102947419581652", "28811754712075130322", "28873905261306040291", "28800613722985934118"} {
		name := "sbtest" + itoa(i+1)
		rows := int64(25000)
		if i == 3 {
			rows = rowsOfLast
		}
		ds.Tables = append(ds.Tables, result.DatasetTable{Name: name, Rows: rows, Checksum: sum})
		ds.Indexes = append(ds.Indexes, name+"(id) primary", name+"(k)")
	}
	return ds
}

// parityFixture is a --profile defaults comparison of three engines with compare --explain
// binlog runs beside it; mariadb's last table lost a row, which the audit must call unexplained.
func parityFixture(t testing.TB) *Input {
	in := &Input{Environment: &result.Environment{Command: "fairbench compare --profile defaults --explain binlog --suite quick"}}
	tps := map[string]float64{"postgres": 1210, "mysql": 610, "mariadb": 1480}
	flipped := map[string]float64{"mysql": 1395, "mariadb": 700}
	seed := int64(100)
	for _, kind := range []string{"postgres", "mysql", "mariadb"} {
		r := makeResult(t, runSpec{kind: kind, workload: "oltp_read_write", threads: 8, tps: tps[kind], complete: true, seed: seed})
		seed++
		r.Profile = "defaults"
		r.Workload.Options["rand-type"] = "special"
		r.Server.Settings = defaultsSettings[kind]
		r.Server.Profile = map[string]string{"bind_address": "127.0.0.1"}
		r.Dataset = sysbenchDataset(25000)
		r.Engine.Transport = "plaintext"
		r.Wire = &result.Wire{Statements: r.Transactions * 20, RoundTrips: r.Transactions*20 + 16}
		if kind == "mariadb" {
			r.Dataset = sysbenchDataset(24999)
		}
		in.Results = append(in.Results, r)
		if f, ok := flipped[kind]; ok {
			x := makeResult(t, runSpec{kind: kind, workload: "oltp_read_write", threads: 8, tps: f, complete: true, seed: seed})
			seed++
			x.Profile, x.Flipped = "defaults", []string{"binlog"}
			x.Server.Profile = map[string]string{"bind_address": "127.0.0.1", "log_bin": "OFF"}
			if kind == "mariadb" {
				x.Server.Profile = map[string]string{"bind_address": "127.0.0.1", "log_bin": "ON", "sync_binlog": "1", "server_id": "1", "binlog_format": "ROW"}
			}
			in.Results = append(in.Results, x)
		}
	}
	return in
}

func TestParityGolden(t *testing.T) {
	got, err := Markdown(parityFixture(t))
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "parity.md.golden", got)
}

// The audit's verdicts, one fact at a time.
func TestParityAudit(t *testing.T) {
	in := parityFixture(t)
	md, err := Markdown(in)
	if err != nil {
		t.Fatal(err)
	}
	text := string(md)
	for _, want := range []string{
		"Parity: 8 differences, 1 unexplained.",
		"binary log: on, sync_binlog=1 on mysql; off on mariadb | each package's default (--profile defaults)",
		"data sbtest1, sbtest2, sbtest3, sbtest4: rows differ",
		"(not on equal terms: 1 unexplained difference, see Parity)",
		"special distribution",
		"| binlog | mysql | log_bin (default) → OFF | oltp_read_write | 8 | 610 | 1,395 | +128.7% (one run: no interval) |",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	// Knob runs never enter the comparison's own figures.
	if strings.Contains(text, "1,395 |") && strings.Count(text, "1,395") != 1 {
		t.Errorf("a flipped run's TPS appears outside the knob section")
	}

	// Encrypted connections on one engine only: unexplained, whatever else is equal.
	in.Results[1].Engine.Transport = "TLSv1.3"
	md, err = Markdown(in)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "transport: the engines' connections differ (TLSv1.3, plaintext) | unexplained") {
		t.Errorf("a TLS connection on one engine is not an unexplained difference")
	}
	in.Results[1].Engine.Transport = "plaintext"

	// The same engines loading the same rows under one profile: nothing unexplained, no caveat.
	for _, r := range in.Results {
		r.Profile = "fair"
		r.Dataset = sysbenchDataset(25000)
		s := r.Server.Settings
		if s["log_bin"] != "" {
			r.Server.Settings = copyWith(s, map[string]string{"log_bin": "OFF", "innodb_buffer_pool_size": "1073741824", "max_connections": "200", "innodb_redo_log_capacity": "1073741824", "innodb_log_file_size": "1073741824"})
		} else {
			r.Server.Settings = copyWith(s, map[string]string{"shared_buffers": "1GB", "max_connections": "200", "max_wal_size": "1GB"})
		}
		r.Server.Facets = nil // read again from the new settings, as when a result is written
	}
	md, err = Markdown(in)
	if err != nil {
		t.Fatal(err)
	}
	text = string(md)
	if !strings.Contains(text, "each deliberate") || strings.Contains(text, "not on equal terms") || strings.Contains(text, "| unexplained |") {
		t.Errorf("a fair comparison of equal data shows an unexplained difference:\n%s", text[:min(len(text), 3000)])
	}
}

func copyWith(m, set map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = v
	}
	for k, v := range set {
		if _, ok := out[k]; ok || k == "log_bin" {
			out[k] = v
		}
	}
	return out
}

func TestDatasetKey(t *testing.T) {
	tables := func(names ...string) *result.Dataset {
		ds := &result.Dataset{}
		for _, n := range names {
			ds.Tables = append(ds.Tables, result.DatasetTable{Name: n})
		}
		return ds
	}
	for _, c := range []struct {
		ds   *result.Dataset
		want string
	}{
		{tables("sbtest2", "sbtest1"), "sbtest1, sbtest2"},
		{tables("sbtest1", "sbtest10", "sbtest2", "sbtest3", "sbtest9"), "sbtest1 … sbtest10 (5 tables)"},
		{tables("warehouse", "district", "customer", "history"), "customer, district, history, warehouse"},
	} {
		if got := datasetKey(c.ds); got != c.want {
			t.Errorf("datasetKey = %q, want %q", got, c.want)
		}
	}
}
