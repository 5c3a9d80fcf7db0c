package dialect

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/fairbench/fairbench/internal/sqldb"
)

// postgres is PostgreSQL's dialect.
type postgres struct{}

func (postgres) Kind() sqldb.Kind { return sqldb.Postgres }

func (postgres) Caps() Capabilities {
	return Capabilities{Flush: "CHECKPOINT", BulkLoad: "COPY FROM STDIN", IndexesText: true,
		OneTripParameters: true, OldVersionsInTable: true, StatisticsAtExit: true,
		Replication: "streaming"}
}

// Flush runs CHECKPOINT, which returns once the checkpoint is complete, then waits (at most 2 s)
// for the checkpointer to publish its written-buffers count: published a moment later, it would
// otherwise land in the next step's figures.
func (postgres) Flush(ctx context.Context, c sqldb.Conn) (string, error) {
	if err := c.Exec(ctx, "CHECKPOINT"); err != nil {
		return "", fmt.Errorf("not permitted: %w", err)
	}
	var last *int64
	for range 20 {
		n := checkpointBuffers(ctx, c)
		if n == nil || (last != nil && *n == *last) {
			break
		}
		last = n
		select {
		case <-ctx.Done():
			return "", errInterrupted
		case <-time.After(100 * time.Millisecond):
		}
	}
	return "checkpoint", nil
}

// checkpointBuffers is the buffers the checkpointer has written: pg_stat_checkpointer from
// PostgreSQL 17 on, pg_stat_bgwriter before.
func checkpointBuffers(ctx context.Context, c sqldb.Conn) *int64 {
	if n := firstInt(ctx, c, "SELECT buffers_written FROM pg_stat_checkpointer"); n != nil {
		return n
	}
	return firstInt(ctx, c, "SELECT buffers_checkpoint FROM pg_stat_bgwriter")
}

func (postgres) Backlog(ctx context.Context, c sqldb.Conn) (dirty, redo *int64) {
	// pg_buffercache is read only where someone installed it: fairbench creates nothing in a
	// database it did not make.
	dirty = firstInt(ctx, c, "SELECT count(*) FROM pg_buffercache WHERE isdirty")
	redo = firstInt(ctx, c, "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), redo_lsn)::bigint FROM pg_control_checkpoint()")
	return dirty, redo
}

func (postgres) Maintain(ctx context.Context, c sqldb.Conn, table string) error {
	return c.Exec(ctx, "VACUUM (ANALYZE) "+table)
}

// DataDirectory: data_directory is shown to superusers and pg_read_all_settings only.
func (postgres) DataDirectory(ctx context.Context, c sqldb.Conn) string {
	return firstString(ctx, c, "SELECT current_setting('data_directory')")
}

// pgTypes: int is integer, bool is boolean; timestamp without time zone, as the others store it.
// The built-in workloads' own names: tinyint is smallint (PostgreSQL has no one-byte integer);
// datetime, the MySQL family's timestamp to the second that their reference tools declare, is
// timestamp.
var pgTypes = map[string]string{"int": "integer", "bool": "boolean", "timestamp": "timestamp",
	"tinyint": "smallint", "datetime": "timestamp"}

func (postgres) TypeName(portable string, length, scale int) string {
	return typeName(portable, length, scale, pgTypes)
}

func (d postgres) StartLoading(context.Context, sqldb.Conn) (string, func()) {
	return d.Caps().BulkLoad, func() {}
}

func (postgres) Load(ctx context.Context, c sqldb.Conn, table string, columns []string, r io.Reader) error {
	_, err := sqldb.CopyFrom(ctx, c, table, columns, r)
	return err
}

func (postgres) Family() Family { return PostgresFamily }

func (postgres) ProductName() string { return "PostgreSQL" }

// SetBackgroundCleanup turns autovacuum on or off for the whole server (ALTER SYSTEM, for a
// throwaway server a study owns) and waits until this session sees the new value, which it does
// once the reload has reached the backends.
func (postgres) SetBackgroundCleanup(ctx context.Context, c sqldb.Conn, on bool) error {
	v := "off"
	if on {
		v = "on"
	}
	if err := c.Exec(ctx, "ALTER SYSTEM SET autovacuum = "+v); err != nil {
		return fmt.Errorf("turning autovacuum %s: %w", v, err)
	}
	if _, err := c.Query(ctx, "SELECT pg_reload_conf()"); err != nil {
		return fmt.Errorf("reloading the configuration: %w", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		rows, err := c.Query(ctx, "SHOW autovacuum")
		if err != nil {
			return err
		}
		if len(rows) == 1 && rows[0][0] == v {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("autovacuum is still %v 10 s after setting it %s", rows, v)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// RemoveOldVersions runs VACUUM on the table: its dead row versions' space made reusable.
func (postgres) RemoveOldVersions(ctx context.Context, c sqldb.Conn, table string) error {
	return c.Exec(ctx, "VACUUM "+table)
}

// TableVersions reads pg_stat_user_tables for the tables LIKE pattern in the current schema.
func (postgres) TableVersions(ctx context.Context, c sqldb.Conn, pattern string) (TableVersions, error) {
	v, err := QueryInts(ctx, c, `SELECT COALESCE(SUM(n_tup_upd), 0), COALESCE(SUM(n_tup_hot_upd), 0),
		COALESCE(SUM(n_dead_tup), 0), COALESCE(SUM(autovacuum_count), 0)
		FROM pg_stat_user_tables WHERE relname LIKE '`+strings.ReplaceAll(pattern, "'", "''")+`' AND schemaname = current_schema()`)
	if err != nil {
		return TableVersions{}, fmt.Errorf("reading pg_stat_user_tables: %w", err)
	}
	return TableVersions{Updates: v[0], InPlaceUpdates: v[1], OldVersions: v[2], CleanerRuns: v[3]}, nil
}
