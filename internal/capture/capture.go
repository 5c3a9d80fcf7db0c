// Package capture writes a workload file from a running server's own statistics: its tables,
// keys and row counts from the catalog, a generator per column fitted to a sample of its rows,
// and its most frequent statements (pg_stat_statements; the performance schema's digests on
// MySQL and MariaDB) as weighted transactions whose parameters are drawn like the columns they
// meet. The file is an ordinary workload file (internal/workloadfile), so the captured workload
// runs on every engine with `compare`, and a user can read and edit it first.
//
// The model is CockroachDB's workload_generator (schema, data and SQL from statement
// statistics) and its querylog's bounded sample of real values, across engines. Capture reads
// and never writes, and copies no user value unless asked (Options.SampleValues): generators
// are fitted to ranges widened to two significant figures (or whole years) and to lengths.
package capture

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fairbench/fairbench/internal/dialect"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/workloadfile"
)

// Options choose what a capture keeps.
type Options struct {
	Name         string // the workload's name
	Top          int    // statements kept; 0 captures the schema and data only
	ByTime       bool   // keep the statements with the most server time, not the most calls
	SampleValues bool   // draw compared values from a sample of the real ones
	// Watch is how long to watch the source's open transactions to group the statements that
	// run together; 0 leaves every statement a transaction of its own.
	Watch      time.Duration
	WatchEvery time.Duration // how often the transactions are read; 0 means DefaultWatchEvery
	Source     string        // the source server, for the file's header ("PostgreSQL 17.6 at host:port/db")
}

// NoStatisticsError is a server that keeps no statement statistics: what turns them on, and
// what capture can do without.
type NoStatisticsError struct {
	Setting string
	Err     error
}

func (e *NoStatisticsError) Error() string {
	return fmt.Sprintf("the server keeps no statement statistics (%v): %s; or capture the tables alone with --top 0", e.Err, e.Setting)
}

// Capture reads the connection's database and returns the workload file's text, checked by
// the workload-file parser it will be read with, and a line saying how much of the source's
// workload it holds.
func Capture(ctx context.Context, c sqldb.Conn, opt Options) (text []byte, summary string, err error) {
	var stats []dialect.StatementStat
	if opt.Top > 0 {
		if stats, err = dialect.StatementsFor(c.Kind()).Statements(ctx, c); err != nil {
			if ctx.Err() != nil {
				return nil, "", err
			}
			return nil, "", &NoStatisticsError{Setting: dialect.StatementsSetting(c.Kind()), Err: firstLine(err)}
		}
	}
	// Watched first, while the source still runs the workload: profiling the tables takes a while.
	var seen observed
	watched := "not watched (--watch 0)"
	if opt.Watch > 0 && opt.Top > 0 {
		var note string
		seen, note = watchTransactions(ctx, c, opt.Watch, cmp.Or(opt.WatchEvery, DefaultWatchEvery))
		if ctx.Err() != nil {
			return nil, "", ctx.Err()
		}
		watched = fmt.Sprintf("watched for %v: %d transactions seen", opt.Watch, len(seen))
		if note != "" {
			watched += "; " + note
		}
	}
	tables, skipped, err := readSchema(ctx, c)
	if err != nil {
		return nil, "", err
	}
	if len(tables) == 0 {
		return nil, "", errors.New("the database holds no table capture can write: name a database with tables in --target")
	}
	for _, t := range tables {
		if err := countRows(ctx, c, t); err != nil {
			return nil, "", err
		}
		if err := profileTable(ctx, c, t); err != nil {
			return nil, "", err
		}
	}
	fitGenerators(tables)
	if opt.SampleValues {
		if err := sampleCompared(ctx, c, tables); err != nil {
			return nil, "", err
		}
	}
	txns, left := toTransactions(stats, tables, opt.Top, opt.ByTime)
	calls, share := coverage(txns, left)
	summary = fmt.Sprintf("%d tables; %d statements kept, %.1f%% of the calls and %.1f%% of the server time of the statements on these tables", len(tables), len(txns), 100*calls, 100*share)
	if opt.Top == 0 {
		summary = fmt.Sprintf("%d tables; no statements read (--top 0)", len(tables))
	}
	var groups []*group
	if opt.Watch > 0 && len(txns) > 0 {
		groups, txns = groupStatements(txns, seen)
		if len(groups) > 0 {
			summary += fmt.Sprintf("; %d grouped into %d transactions as the source ran them", groupedStatements(groups), len(groups))
		}
	}
	shareOut(groups, txns)
	out := render(opt, summary, watched, tables, skipped, groups, txns, left)
	if _, err := workloadfile.Parse(out, opt.Name+".yaml"); err != nil {
		return out, summary, fmt.Errorf("capture wrote a file the workload-file parser refuses (a bug in capture; the file is written for reading): %w", err)
	}
	return out, summary, nil
}

// sampleCompared fills the sampled values of the columns parameters draw from that are not
// keys: up to 100 distinct values each.
func sampleCompared(ctx context.Context, c sqldb.Conn, tables []*table) error {
	for _, t := range tables {
		for _, col := range t.columns {
			if col.genKind == "sequence" || col.genKind == "ref" || col.portable == "bool" {
				continue
			}
			vs, err := sampleValues(ctx, c, t, col, 100)
			if err != nil {
				return fmt.Errorf("sampling %s.%s: %w", t.name, col.name, err)
			}
			col.values = vs
		}
	}
	return nil
}

func firstLine(err error) error {
	s := err.Error()
	for i, r := range s {
		if r == '\n' {
			return errors.New(s[:i])
		}
	}
	return err
}
