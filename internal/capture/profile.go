package capture

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/fairbench/fairbench/internal/sqldb"
)

// SampleRows is how many rows of a table the column profiles read: enough for the shape of a
// column (range, distinct share, NULL share, lengths), bounded so that a capture of a large
// database takes seconds, not a scan of every table.
const SampleRows = 100000

// profile is a column's shape in the sample: what its generator is fitted to.
type profile struct {
	rows, distinct, nulls int64
	min, max              string // as the server prints them; "" when every value is NULL
	minLen, maxLen        int64  // of strings
	trues                 int64  // of booleans
}

// profileTable reads every column's profile from one sample of the table's rows, with one
// query written the same for every engine (char_length, count(DISTINCT), CASE).
func profileTable(ctx context.Context, c sqldb.Conn, t *table) error {
	var exprs []string
	for _, col := range t.columns {
		q := sqldb.QuoteIdent(c.Kind(), col.name)
		exprs = append(exprs, "count(DISTINCT "+q+")", "sum(CASE WHEN "+q+" IS NULL THEN 1 ELSE 0 END)")
		switch col.portable {
		case "bool":
			exprs = append(exprs, "sum(CASE WHEN "+q+" THEN 1 ELSE 0 END)", "0", "0", "0")
		case "varchar", "text":
			exprs = append(exprs, "0", "0", "min(char_length("+q+"))", "max(char_length("+q+"))")
		default:
			exprs = append(exprs, "min("+q+")", "max("+q+")", "0", "0")
		}
	}
	var names []string
	for _, col := range t.columns {
		names = append(names, sqldb.QuoteIdent(c.Kind(), col.name))
	}
	q := fmt.Sprintf("SELECT count(*), %s FROM (SELECT %s FROM %s LIMIT %d) s", strings.Join(exprs, ", "),
		strings.Join(names, ", "), sqldb.QuoteIdent(c.Kind(), t.name), SampleRows)
	rows, err := c.Query(ctx, q)
	if err != nil {
		return fmt.Errorf("profiling table %s: %w", t.name, err)
	}
	r := rows[0]
	n := atoi(r[0])
	for i, col := range t.columns {
		v := r[1+6*i:]
		p := profile{rows: n, distinct: atoi(v[0]), nulls: atoi(v[1])}
		if col.portable == "bool" {
			p.trues = atoi(v[2])
		} else {
			p.min, p.max = v[2], v[3]
		}
		p.minLen, p.maxLen = atoi(v[4]), atoi(v[5])
		col.profile = p
	}
	return nil
}

// sampleValues is up to max distinct values of a column from the first rows of its table, for
// --sample-values only: the one path by which a user's values reach a captured file.
func sampleValues(ctx context.Context, c sqldb.Conn, t *table, col *column, limit int) ([]string, error) {
	q := fmt.Sprintf("SELECT DISTINCT v FROM (SELECT %s AS v FROM %s LIMIT %d) s WHERE v IS NOT NULL ORDER BY v LIMIT %d",
		sqldb.QuoteIdent(c.Kind(), col.name), sqldb.QuoteIdent(c.Kind(), t.name), SampleRows, limit)
	rows, err := c.Query(ctx, q)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		out = append(out, r[0])
	}
	return out, nil
}

func atoi(s string) int64 {
	v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		f, _ := strconv.ParseFloat(strings.TrimSpace(s), 64)
		return int64(f)
	}
	return v
}

// roundOut widens [lo, hi] to two significant figures of the larger magnitude, so that the
// bounds of a generator are not a user's exact values (a salary, a balance) while the range
// keeps its size.
func roundOut(lo, hi float64) (float64, float64) {
	m := math.Max(math.Abs(lo), math.Abs(hi))
	if m == 0 {
		return 0, 0
	}
	step := math.Pow(10, math.Floor(math.Log10(m))-1)
	return math.Floor(lo/step) * step, math.Ceil(hi/step) * step
}

// yearBounds widens a span of dates or times to whole years, for the same reason.
func yearBounds(lo, hi string) (string, string, bool) {
	a, errA := parseTime(lo)
	b, errB := parseTime(hi)
	if errA != nil || errB != nil {
		return "", "", false
	}
	return fmt.Sprintf("%04d-01-01", a.Year()), fmt.Sprintf("%04d-12-31", b.Year()), true
}

func parseTime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{"2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999-07", "2006-01-02 15:04:05.999999999-07:00", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("not a time: %q", s)
}
