package workloadfile

import (
	"errors"
	"fmt"
	"strings"

	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/workload"
)

// Statement is one SQL statement of a transaction, with :name parameters.
type Statement struct {
	SQL string
	// Text is SQL with each parameter a ? placeholder (sqldb's form for every engine), and
	// Params the parameters' names in order.
	Text   string
	Params []string
	// Kind is sqldb.ClassOf(Text) in words: "read" (it only returns rows), "write" or "other".
	Kind string
	// Engines holds an engine's own form of the statement (`mysql: ...`), where the portable
	// SQL does not run there or runs otherwise; it takes the same parameters.
	Engines map[sqldb.Kind]*Statement
	// Into names the first returned row's columns, in order, as parameters of the statements
	// after it (pgbench's \gset): `into: [balance]` makes :balance the first column.
	Into []string
	// Expect is the rows a read must return or a write must change; a statement that returns
	// or changes another number rolls its transaction back, counted as the statement's failure.
	Expect Expect
	// Chance is the share of the transaction's runs in which the statement runs (a lookup by name
	// in 60% of payments; capture's extra copy of a statement run 10.6 times a transaction on
	// average); 0 means always, as 1 does.
	Chance float64
	at     pos
}

// Always says whether the statement runs in every run of its transaction.
func (s *Statement) Always() bool { return s.Chance <= 0 || s.Chance >= 1 }

// Expect is an expected row count; Rows is -1 where none is expected.
type Expect struct{ Rows int64 }

// Expecting says whether a count is expected.
func (e Expect) Expecting() bool { return e.Rows >= 0 }

// On is the statement as it runs on an engine: its own form there, else the portable one.
func (s *Statement) On(kind sqldb.Kind) *Statement {
	if own := s.Engines[kind]; own != nil {
		return own
	}
	return s
}

// forms are the statement's portable form (where it has one) and its engines' own forms.
func (s *Statement) forms() []*Statement {
	var out []*Statement
	if s.SQL != "" {
		out = append(out, s)
	}
	for _, k := range engineKinds {
		if own := s.Engines[k]; own != nil {
			out = append(out, own)
		}
	}
	return out
}

// engineKinds are the engines a statement may have a form of its own for, by their names in the
// file.
var engineKinds = []sqldb.Kind{sqldb.Postgres, sqldb.MySQL, sqldb.MariaDB}

// bind turns :name parameters into placeholders. It skips quoted strings, quoted identifiers,
// comments and PostgreSQL's :: casts, and refuses a ? of the user's own, which the drivers would
// take for a placeholder.
func (s *Statement) bind() error {
	if s.SQL == "" {
		return errors.New("a statement is empty")
	}
	var b strings.Builder
	sql := s.SQL
	for i := 0; i < len(sql); {
		c := sql[i]
		switch {
		case c == '\'' || c == '"' || c == '`':
			j := closing(sql, i+1, c)
			if j < 0 {
				return fmt.Errorf("statement %q has a %c that is never closed", short(sql), c)
			}
			b.WriteString(sql[i : j+1])
			i = j + 1
		case c == '-' && strings.HasPrefix(sql[i:], "--"):
			j := strings.IndexByte(sql[i:], '\n')
			if j < 0 {
				j = len(sql) - i
			}
			b.WriteString(sql[i : i+j])
			i += j
		case c == '/' && strings.HasPrefix(sql[i:], "/*"):
			j := strings.Index(sql[i+2:], "*/")
			if j < 0 {
				return fmt.Errorf("statement %q has a /* comment that is never closed", short(sql))
			}
			b.WriteString(sql[i : i+j+4])
			i += j + 4
		case c == ':' && strings.HasPrefix(sql[i:], "::"):
			b.WriteString("::")
			i += 2
		case c == ':' && i+1 < len(sql) && isNameStart(sql[i+1]):
			j := i + 1
			for j < len(sql) && isNameChar(sql[j]) {
				j++
			}
			s.Params = append(s.Params, sql[i+1:j])
			b.WriteByte('?')
			i = j
		case c == '?':
			return fmt.Errorf("statement %q uses ?, which fairbench's drivers take for a placeholder: write parameters as :name", short(sql))
		default:
			b.WriteByte(c)
			i++
		}
	}
	s.Text = strings.TrimSuffix(strings.TrimSpace(b.String()), ";")
	if strings.Contains(s.Text, ";") {
		return fmt.Errorf("statement %q holds more than one statement: list each on its own", short(sql))
	}
	s.Kind = sqldb.ClassOf(s.Text).String()
	return nil
}

// closing is the index of the quote that closes one opened before from, a doubled quote being
// part of the string.
func closing(sql string, from int, q byte) int {
	for j := from; j < len(sql); j++ {
		if sql[j] == q {
			if j+1 < len(sql) && sql[j+1] == q {
				j++
				continue
			}
			return j
		}
	}
	return -1
}

func isNameStart(c byte) bool { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }
func isNameChar(c byte) bool  { return isNameStart(c) || (c >= '0' && c <= '9') }

func short(s string) string { return workload.ShortSQL(s) }
