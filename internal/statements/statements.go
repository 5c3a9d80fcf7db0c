// Package statements is the server's own account of each statement over a measured window, read
// the same way on every engine: pg_stat_statements on PostgreSQL, the performance schema's
// statement digests on MySQL and MariaDB (the fair profile turns both on; internal/dialect reads
// them). The window's figures are the difference of a read at its start and one at its end, as
// BenchBase and pgbench's -r give per-statement figures for a run, not since the server began.
package statements

import (
	"context"
	"strings"
	"time"

	"github.com/fairbench/fairbench/internal/dialect"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/sqldb"
)

// Top is how many statements a result keeps, the most server time first; the totals count all.
const Top = 20

// Window reads the accounts at the window's start and diffs them at its end.
type Window struct {
	conn   sqldb.Conn
	src    dialect.StatementSource
	before map[string]dialect.StatementStat
	late   time.Duration
	err    error
}

// Begin reads the accounts at the measured window's start, which opened at opened. The clients
// run on while the read is answered, so the transactions that end before the answer are in the
// runner's window but may be in the first read too: late says how long that was. A server that
// keeps none (the extension not loaded, the performance schema off) makes End say so.
func Begin(ctx context.Context, conn sqldb.Conn, opened time.Time) *Window {
	w := &Window{conn: conn, src: dialect.StatementsFor(conn.Kind())}
	stats, err := w.src.Statements(ctx, conn)
	w.before, w.err, w.late = byText(stats), err, time.Since(opened)
	return w
}

// End reads the accounts again and returns the window's: each statement's calls, rows and server
// time in the window, the most time first.
func (w *Window) End(ctx context.Context) *result.Statements {
	out := &result.Statements{Source: dialect.StatementsFor(w.conn.Kind()).StatementsView(), LateMS: float64(w.late.Microseconds()) / 1000}
	if w.err != nil {
		out.Error = firstLine(w.err.Error())
		return out
	}
	stats, err := w.src.Statements(ctx, w.conn)
	if err != nil {
		out.Error = firstLine(err.Error())
		return out
	}
	var all []result.StatementAccount
	for text, a := range byText(stats) {
		b := w.before[text]
		d := result.StatementAccount{Text: text, Calls: a.Calls - b.Calls, Rows: a.Rows - b.Rows, TotalMS: a.TotalMS - b.TotalMS}
		if d.Calls <= 0 {
			continue
		}
		d.MeanMS = d.TotalMS / float64(d.Calls)
		if a.BlocksHit >= 0 {
			hit, read := a.BlocksHit-b.BlocksHit, a.BlocksRead-b.BlocksRead
			d.BlocksHit, d.BlocksRead = &hit, &read
		}
		out.Calls += d.Calls
		out.TotalMS += d.TotalMS
		all = append(all, d)
	}
	result.SortStatements(all)
	out.Top = all[:min(Top, len(all))]
	return out
}

// byText keys the accounts by their text; the same text twice (another user's, another
// top-level flag) is added up.
func byText(stats []dialect.StatementStat) map[string]dialect.StatementStat {
	m := make(map[string]dialect.StatementStat, len(stats))
	for _, s := range stats {
		t := m[s.Text]
		t.Text, t.Calls, t.Rows, t.TotalMS = s.Text, t.Calls+s.Calls, t.Rows+s.Rows, t.TotalMS+s.TotalMS
		if s.BlocksHit < 0 {
			t.BlocksHit, t.BlocksRead = -1, -1
		} else {
			t.BlocksHit += s.BlocksHit
			t.BlocksRead += s.BlocksRead
		}
		m[s.Text] = t
	}
	return m
}

func firstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}
