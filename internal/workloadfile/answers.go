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
		b := bind(tx)
		drawn := make([]any, len(b.gens))
		for i, g := range b.gens {
			drawn[i] = g.Value(r)
		}
		for i, st := range tx.Statements {
			if st.Kind != "read" {
				continue
			}
			args := make([]any, len(b.args[i]))
			for k, p := range b.args[i] {
				args[k] = drawn[p]
			}
			a := result.Answer{Transaction: tx.Name, Statement: i + 1, SQL: short(st.SQL)}
			rows, err := c.Query(ctx, st.Text, args...)
			if err != nil {
				a.Error = firstLine(err.Error())
			} else {
				a.Rows, a.Checksum = int64(len(rows)), answerChecksum(rows, ordered.MatchString(st.Text))
				if steps, err := dialect.Explain(ctx, c, st.Text, args...); err == nil {
					a.Plan = dialect.PlanSummary(steps)
				}
			}
			out = append(out, a)
		}
	}
	return out
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
