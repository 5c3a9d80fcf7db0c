package workloadfile

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"slices"
	"strings"

	"github.com/fairbench/fairbench/internal/dialect"
	"github.com/fairbench/fairbench/internal/randgen"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/sqldb"
)

// answerSeed draws the fixed parameters every engine's answers are taken with.
const answerSeed = 20241126

// Answers runs every read statement once, with parameters drawn from a fixed seed (the same on
// every engine), and checksums each answer over a canonical text of its rows: in the order the
// engine returned them where the statement has an ORDER BY (two engines that break its ties
// differently then answer differently, which a port must know), sorted otherwise (an unordered
// answer has no order to compare). Values are read as text, with the spellings that differ
// between engines and not in value made one: booleans as 1/0, and a timestamp's zero fraction.
func (w *fileWorkload) Answers(ctx context.Context, c sqldb.Conn) []result.Answer {
	rng := randgen.DefaultConfig("uniform")
	r := rng.New(answerSeed)
	var out []result.Answer
	for _, tx := range w.f.Transactions {
		b := bind(tx, c.Kind())
		values := make([]any, b.slots)
		for i, g := range b.gens {
			values[i] = g.Value(r)
		}
		for i, st := range tx.Statements {
			if st.Kind != "read" {
				continue
			}
			out = append(out, w.readOnlyAnswer(ctx, c, tx, i, b, values))
		}
	}
	return out
}

// readOnlyAnswer is answer, in a read-only transaction where the file runs on existing tables
// without leave to write: c is the caller's connection, whose session stays as it was.
func (w *fileWorkload) readOnlyAnswer(ctx context.Context, c sqldb.Conn, tx *Transaction, i int, b boundTx, values []any) result.Answer {
	if !w.readOnly {
		return answer(ctx, c, tx, i, b, values)
	}
	if err := c.Exec(ctx, "START TRANSACTION READ ONLY"); err != nil {
		return result.Answer{Transaction: tx.Name, Statement: i + 1, SQL: short(tx.Statements[i].forms()[0].SQL), Error: firstLine(err.Error())}
	}
	defer func() { _ = c.Exec(context.WithoutCancel(ctx), "ROLLBACK") }()
	return answer(ctx, c, tx, i, b, values)
}

// answer runs read statement i of tx and checksums its rows; the first row's columns go to the
// statement's into names, for the reads after it. (A value set by a write's into stays NULL:
// writes are not run here.)
func answer(ctx context.Context, c sqldb.Conn, tx *Transaction, i int, b boundTx, values []any) result.Answer {
	st, form := tx.Statements[i], b.forms[i]
	args := make([]any, len(b.args[i]))
	for k, p := range b.args[i] {
		args[k] = values[p]
	}
	a := result.Answer{Transaction: tx.Name, Statement: i + 1, SQL: short(st.forms()[0].SQL)}
	rows, err := c.Query(ctx, form.Text, args...)
	if err != nil {
		a.Error = firstLine(err.Error())
		return a
	}
	a.Rows, a.Checksum = int64(len(rows)), answerChecksum(rows, ordered.MatchString(form.Text))
	if steps, err := dialect.Explain(ctx, c, form.Text, args...); err == nil {
		a.Plan = dialect.PlanSummary(steps)
	}
	for k, slot := range b.into[i] {
		if len(rows) > 0 && k < len(rows[0]) {
			values[slot] = rows[0][k]
		}
	}
	return a
}

var ordered = regexp.MustCompile(`(?i)\border\s+by\b`)

func answerChecksum(rows [][]string, keepOrder bool) string {
	lines := make([]string, len(rows))
	for i, row := range rows {
		vals := make([]string, len(row))
		for j, v := range row {
			vals[j] = canonicalValue(v)
		}
		lines[i] = strings.Join(vals, "\x1f")
	}
	if !keepOrder {
		slices.Sort(lines)
	}
	h := sha256.Sum256([]byte(strings.Join(lines, "\x1e")))
	return hex.EncodeToString(h[:8])
}

var zeroFraction = regexp.MustCompile(`^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\.0+$`)

func canonicalValue(v string) string {
	switch v {
	case "t", "true":
		return "1"
	case "f", "false":
		return "0"
	}
	return zeroFraction.ReplaceAllString(v, "$1")
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// SourceMix is, for a captured workload, each transaction's share of its source server's calls
// and time (nil for a file written by hand): the report sets the replay's beside it.
func (w *fileWorkload) SourceMix() []result.SourceShare {
	var out []result.SourceShare
	for _, t := range w.f.Transactions {
		if t.Source != nil {
			out = append(out, result.SourceShare{Transaction: t.Name, CallsPct: t.Source.Calls, TimePct: t.Source.Time})
		}
	}
	return out
}
