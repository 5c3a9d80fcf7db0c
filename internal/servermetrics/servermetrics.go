// Package servermetrics measures the server side of a run: what the engine says about itself
// (settings, cumulative counters, data size) over SQL, and, for a server on this machine, what
// its processes cost (CPU, memory, disk I/O) from /proc. Engine figures work for any target;
// process figures need the server's pids.
package servermetrics

import (
	"context"

	"github.com/fairbench/fairbench/internal/dialect"
	"github.com/fairbench/fairbench/internal/sqldb"
)

// Settings returns the server's own view of the settings that matter for fairness
// (dialect.ServerFigures), in the form the fairness profile writes them. MariaDB before 11.1 and
// MySQL before 5.7.20 only know tx_isolation; it is folded into transaction_isolation so that
// one key lets a report put the engines side by side.
func Settings(ctx context.Context, c sqldb.Conn) (map[string]string, error) {
	return dialect.Of(c).Settings(ctx, c)
}

// DataSize is the bytes of tables and their indexes in the connection's current schema/database.
func DataSize(ctx context.Context, c sqldb.Conn) (int64, error) {
	return dialect.Of(c).DataSize(ctx, c)
}

// QueryInts runs a one-row query and parses every column as an integer (NULL as 0).
func QueryInts(ctx context.Context, c sqldb.Conn, q string) ([]int64, error) {
	return dialect.QueryInts(ctx, c, q)
}

func parseInt(s string) (int64, error) { return dialect.ParseCount(s) }
