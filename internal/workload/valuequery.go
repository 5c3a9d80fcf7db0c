package workload

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/fairbench/fairbench/internal/dialect"
	"github.com/fairbench/fairbench/internal/sqldb"
)

// ValueQuery is a statement whose result values a transaction reads (sqldb.Stmt hands back only a
// row count). It costs one round trip on every engine: PostgreSQL takes its parameters in the
// extended protocol's one exchange; on the MySQL family its integer and string arguments are
// written into the text as literals, since the driver would otherwise prepare, execute and close
// it (three round trips).
type ValueQuery struct {
	sql   string
	parts []string
	class sqldb.Class
}

// NewValueQuery takes a statement with ? placeholders.
func NewValueQuery(sql string) ValueQuery {
	return ValueQuery{sql: sql, parts: strings.Split(sql, "?"), class: sqldb.ClassOf(sql)}
}

// CountAs is q counted as class: a routine's call that writes (sqldb.CountAs).
func (q ValueQuery) CountAs(class sqldb.Class) ValueQuery {
	q.class = class
	return q
}

// Rows runs q on c with args (int, int64 or string) and returns its rows as text. buf is scratch
// space for the MySQL literal text, kept by the caller so that a transaction allocates it once.
func (q ValueQuery) Rows(ctx context.Context, c sqldb.Conn, buf *[]byte, args ...any) ([][]string, error) {
	if dialect.Of(c).Caps().OneTripParameters {
		return sqldb.QueryAs(ctx, c, q.class, q.sql, args...)
	}
	b := (*buf)[:0]
	for i, p := range q.parts {
		b = append(b, p...)
		if i < len(args) {
			switch v := args[i].(type) {
			case int:
				b = strconv.AppendInt(b, int64(v), 10)
			case int64:
				b = strconv.AppendInt(b, v, 10)
			case string:
				b = appendQuoted(b, v)
			case []byte:
				b = appendQuoted(b, string(v))
			default:
				return nil, fmt.Errorf("no literal form for %T", v)
			}
		}
	}
	*buf = b
	return sqldb.QueryAs(ctx, c, q.class, string(b))
}

// appendQuoted writes s as a MySQL string literal, doubling quotes and backslashes.
func appendQuoted(b []byte, s string) []byte {
	b = append(b, '\'')
	for j := 0; j < len(s); j++ {
		if s[j] == '\'' || s[j] == '\\' {
			b = append(b, s[j])
		}
		b = append(b, s[j])
	}
	return append(b, '\'')
}
