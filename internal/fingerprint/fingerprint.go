// Package fingerprint describes the data a workload loaded, the same way on every engine, so a
// comparison can show that each engine was given the same rows and the same indexes: per table
// the row count and a content checksum, and every index by its columns.
//
// The checksum is computed by each server over its own rows with functions both SQL dialects
// have (SHA-256, CONCAT_WS) on a canonical text of each row: integers, decimals and strings as text
// (PostgreSQL's CHAR padding removed, as the MySQL family removes it), booleans as 0/1, bytes as
// lower-case hex. Date/time and floating-point columns are left out, and the result says so:
// timestamps are set at load time, and engines print floats differently. The per-row hashes are
// summed, so the order rows come back in does not matter.
package fingerprint

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fairbench/fairbench/internal/dialect"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/workload"
)

// ChecksumRowLimit bounds the work: above this many rows in all, only the counts are taken (a
// checksum reads every row once, about a second per million rows here).
const ChecksumRowLimit = 5_000_000

type column struct{ name, dataType string }

// Take fingerprints the tables in the connection's current schema (PostgreSQL) or database
// (MySQL family): the throwaway database compare loads the workload into.
func Take(ctx context.Context, c sqldb.Conn) (*result.Dataset, error) {
	t0 := time.Now()
	cols, err := columns(ctx, c)
	if err != nil {
		return nil, err
	}
	// fairbench's own record of what it prepared (started and finished times) is not the
	// workload's data and differs between engines by nature.
	delete(cols, workload.DatasetTable)
	ds := &result.Dataset{}
	var total int64
	names := make([]string, 0, len(cols))
	for name := range cols {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		n, err := queryInt(ctx, c, "SELECT COUNT(*) FROM "+dialect.Of(c).Quote(name))
		if err != nil {
			return nil, fmt.Errorf("counting rows of %s: %w", name, err)
		}
		ds.Tables = append(ds.Tables, result.DatasetTable{Name: name, Rows: n})
		total += n
	}
	left := map[string]bool{}
	if total <= ChecksumRowLimit {
		for i := range ds.Tables {
			tb := &ds.Tables[i]
			sum, skipped, err := checksum(ctx, c, tb.Name, cols[tb.Name])
			if err != nil {
				return nil, fmt.Errorf("checksumming %s: %w", tb.Name, err)
			}
			tb.Checksum = sum
			for _, s := range skipped {
				left[s] = true
			}
		}
		ds.Checksummed = true
		if len(left) > 0 {
			ds.Note = "checksums leave out date/time and floating-point columns: " + strings.Join(slices.Sorted(maps.Keys(left)), ", ")
		}
	} else {
		ds.Note = fmt.Sprintf("row counts only: %d rows is more than the %d a checksum reads", total, ChecksumRowLimit)
	}
	if ds.Indexes, err = indexes(ctx, c); err != nil {
		return nil, err
	}
	ds.Indexes = slices.DeleteFunc(ds.Indexes, func(ix string) bool { return strings.HasPrefix(ix, workload.DatasetTable+"(") })
	ds.Seconds = time.Since(t0).Seconds()
	return ds, nil
}

// columns lists each base table's columns in order, names in lower case.
func columns(ctx context.Context, c sqldb.Conn) (map[string][]column, error) {
	rows, err := c.Query(ctx, `SELECT c.table_name, c.column_name, c.data_type FROM information_schema.columns c
		JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
		WHERE c.table_schema = `+dialect.Of(c).CurrentSchema()+` AND t.table_type = 'BASE TABLE'
		ORDER BY c.table_name, c.ordinal_position`)
	if err != nil {
		return nil, fmt.Errorf("listing the loaded tables: %w", err)
	}
	out := map[string][]column{}
	for _, r := range rows {
		if len(r) == 3 {
			t := strings.ToLower(r[0])
			out[t] = append(out[t], column{name: r[1], dataType: strings.ToLower(r[2])})
		}
	}
	return out, nil
}

// canonical is a column's expression in the canonical row text, "" when it is left out: times
// (each engine writes them its own way) and floating point (each rounds its own way).
func canonical(d dialect.Dialect, col column) string {
	dt := col.dataType
	if strings.Contains(dt, "date") || strings.Contains(dt, "time") || dt == "interval" || dt == "year" ||
		dt == "double precision" || dt == "double" || dt == "real" || dt == "float" {
		return ""
	}
	return d.ValueText(d.Quote(col.name), dt)
}

// checksum sums the first 60 bits of each row's SHA-256 (MySQL 9 has no MD5 any more): exact
// in both engines' decimal SUM.
func checksum(ctx context.Context, c sqldb.Conn, table string, cols []column) (string, []string, error) {
	d := dialect.Of(c)
	var exprs, skipped []string
	for _, col := range cols {
		if e := canonical(d, col); e != "" {
			exprs = append(exprs, e)
		} else {
			skipped = append(skipped, table+"."+strings.ToLower(col.name))
		}
	}
	if len(exprs) == 0 {
		return "", skipped, nil
	}
	h := d.Hash60("CONCAT_WS('|', " + strings.Join(exprs, ", ") + ")")
	rows, err := c.Query(ctx, "SELECT COALESCE(SUM("+h+"), 0) FROM "+d.Quote(table))
	if err != nil {
		return "", nil, err
	}
	if len(rows) != 1 || len(rows[0]) != 1 {
		return "", nil, fmt.Errorf("unexpected answer %v", rows)
	}
	return strings.TrimSpace(rows[0][0]), skipped, nil
}

// indexes names every index by table, columns and kind, so that PostgreSQL's sbtest1_pkey and
// InnoDB's PRIMARY read alike: "sbtest1(id) primary", "sbtest1(k)".
func indexes(ctx context.Context, c sqldb.Conn) ([]string, error) {
	ixs, err := dialect.CatalogFor(c.Kind()).Indexes(ctx, c)
	if err != nil {
		return nil, fmt.Errorf("listing indexes: %w", err)
	}
	var out []string
	for _, ix := range ixs {
		s := strings.ToLower(ix.Table) + "(" + strings.ToLower(strings.Join(ix.Columns, ",")) + ")"
		switch {
		case ix.Primary:
			s += " primary"
		case ix.Unique:
			s += " unique"
		}
		out = append(out, s)
	}
	sort.Strings(out)
	return out, nil
}

func queryInt(ctx context.Context, c sqldb.Conn, q string) (int64, error) {
	rows, err := c.Query(ctx, q)
	if err != nil {
		return 0, err
	}
	if len(rows) != 1 || len(rows[0]) != 1 {
		return 0, fmt.Errorf("unexpected answer %v", rows)
	}
	return strconv.ParseInt(strings.TrimSpace(rows[0][0]), 10, 64)
}
