package sqldb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/jackc/pgx/v5/pgconn"
)

type pgConn struct {
	conn   *pgconn.PgConn
	sock   *blockingConn    // beneath pgconn (and TLS): for Close from another goroutine and the wire counters
	counts *StatementCounts // Exec and Query calls (see Counters)
	view   bool             // an Uncounted view of another connection: Close leaves it open
}

func openPostgres(ctx context.Context, t Target) (*pgConn, error) {
	cfg, err := pgconn.ParseConfig(postgresConnString(t))
	if err != nil {
		return nil, err
	}
	// The password is set here, not in the connection string, so no parse error can quote it.
	if t.Password != "" {
		cfg.Password = t.Password
	}
	cfg.ConnectTimeout = t.ConnectTimeout
	var sock *blockingConn
	cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if network != "tcp" {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		}
		c, err := dialAddr(ctx, addr)
		if bc, ok := c.(*blockingConn); ok {
			sock = bc // the last dial is the connection pgconn keeps (sslmode=prefer may dial twice)
		}
		return c, err
	}
	c, err := pgconn.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return &pgConn{conn: c, sock: sock, counts: new(StatementCounts)}, nil
}

// postgresConnString builds a keyword/value string of the target's options, without the
// password. TLS is off unless the DSN's sslmode asks for it (see tls.go).
func postgresConnString(t Target) string {
	kv := []string{
		"host=" + quoteKV(t.Host),
		"port=" + strconv.Itoa(t.Port),
		"dbname=" + quoteKV(t.Database),
	}
	if t.User != "" {
		kv = append(kv, "user="+quoteKV(t.User))
	}
	if t.Params.Get("sslmode") == "" {
		kv = append(kv, "sslmode=disable")
	}
	for _, name := range postgresOptions {
		if t.Params.Has(name) {
			kv = append(kv, name+"="+quoteKV(t.Params.Get(name)))
		}
	}
	return strings.Join(kv, " ")
}

func quoteKV(s string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", `\'`) + "'"
}

func (c *pgConn) Kind() Kind { return Postgres }

func (c *pgConn) Close() error {
	if c.view {
		return nil
	}
	return closeConn(c.sock, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
		defer cancel()
		return c.conn.Close(ctx)
	})
}

// Counters are c's statements since it was opened, by class, and its round trips.
func (c *pgConn) Counters() Counters {
	n := c.counts.Load()
	if c.sock != nil {
		n.RoundTrips = c.sock.wire.roundTrips.Load()
	}
	return n
}

func (c *pgConn) Exec(ctx context.Context, sql string) error {
	c.counts.Add(ClassOf(sql))
	_, err := c.conn.Exec(ctx, sql).ReadAll()
	return statementError(err)
}

func (c *pgConn) Query(ctx context.Context, sql string, args ...any) ([][]string, error) {
	return c.QueryAs(ctx, ClassOf(sql), sql, args...)
}

// QueryAs is sqldb.QueryAs.
func (c *pgConn) QueryAs(ctx context.Context, class Class, sql string, args ...any) ([][]string, error) {
	params := make([][]byte, len(args))
	for i, a := range args {
		params[i] = appendText(nil, a)
	}
	c.counts.Add(class)
	res := c.conn.ExecParams(ctx, dollarPlaceholders(sql), params, nil, nil, nil).Read()
	if res.Err != nil {
		return nil, statementError(res.Err)
	}
	out := make([][]string, len(res.Rows))
	for i, row := range res.Rows {
		out[i] = make([]string, len(row))
		for j, v := range row {
			out[i][j] = string(v)
		}
	}
	return out, nil
}

var pgStmtSeq atomic.Int64

// binaryResults asks for every result column in binary (one format code applies to all).
var binaryResults = []int16{1}

func (c *pgConn) Prepare(ctx context.Context, sql string) (Stmt, error) {
	name := fmt.Sprintf("fb%d", pgStmtSeq.Add(1))
	sd, err := c.conn.Prepare(ctx, name, dollarPlaceholders(sql), nil)
	if err != nil {
		return nil, err
	}
	n := len(sd.ParamOIDs)
	return &pgStmt{counts: c.counts, class: ClassOf(sql), conn: c.conn, name: name, params: make([][]byte, n), bufs: make([][]byte, n)}, nil
}

// pgStmt sends parameters in text format, as libpq callers such as sysbench and pgbench do
// (encoding an int as text costs less than pgx's type-mapped binary path), and asks for results
// in binary, as sysbench does: the measured path only counts rows, never decodes them, and the
// server's binary send functions cost it less than its text output functions.
type pgStmt struct {
	counts *StatementCounts
	class  Class
	conn   *pgconn.PgConn
	name   string
	params [][]byte
	bufs   [][]byte // reused per-parameter encode buffers
}

// CountAs is sqldb.CountAs.
func (s *pgStmt) CountAs(c Class) { s.class = c }

func (s *pgStmt) bind(args []any) error {
	if len(args) != len(s.params) {
		return fmt.Errorf("statement takes %d parameters, got %d", len(s.params), len(args))
	}
	for i, a := range args {
		if b, ok := a.([]byte); ok {
			s.params[i] = b
			continue
		}
		s.bufs[i] = appendText(s.bufs[i][:0], a)
		s.params[i] = s.bufs[i]
	}
	return nil
}

func (s *pgStmt) Query(ctx context.Context, args ...any) (int64, error) {
	if err := s.bind(args); err != nil {
		return 0, err
	}
	s.counts.Add(s.class)
	rr := s.conn.ExecPrepared(ctx, s.name, s.params, nil, binaryResults)
	var n int64
	for rr.NextRow() {
		n++
	}
	if _, err := rr.Close(); err != nil {
		return n, statementError(err)
	}
	return n, nil
}

func (s *pgStmt) FirstRow(ctx context.Context, args ...any) ([]string, []*string, int64, error) {
	if err := s.bind(args); err != nil {
		return nil, nil, 0, err
	}
	s.counts.Add(s.class)
	rr := s.conn.ExecPrepared(ctx, s.name, s.params, nil, nil) // text results, to keep
	var names []string
	for _, fd := range rr.FieldDescriptions() {
		names = append(names, fd.Name)
	}
	var row []*string
	var n int64
	for rr.NextRow() {
		if n == 0 {
			for _, v := range rr.Values() {
				row = append(row, textOrNil(v))
			}
		}
		n++
	}
	if _, err := rr.Close(); err != nil {
		return nil, nil, n, statementError(err)
	}
	return names, row, n, nil
}

// textOrNil copies a text value out of the driver's buffer; nil stands for NULL.
func textOrNil(v []byte) *string {
	if v == nil {
		return nil
	}
	s := string(v)
	return &s
}

func (s *pgStmt) Exec(ctx context.Context, args ...any) (int64, error) {
	if err := s.bind(args); err != nil {
		return 0, err
	}
	s.counts.Add(s.class)
	tag, err := s.conn.ExecPrepared(ctx, s.name, s.params, nil, binaryResults).Close()
	if err != nil {
		return 0, statementError(err)
	}
	return tag.RowsAffected(), nil
}

// CopyFrom bulk-loads text-format rows (tab separated, newline terminated) with COPY, the fastest
// way into PostgreSQL and what pgbench -i uses.
func CopyFrom(ctx context.Context, c Conn, table string, columns []string, r io.Reader) (int64, error) {
	pc, ok := c.(*pgConn)
	if !ok {
		return 0, errors.New("COPY is PostgreSQL only")
	}
	sql := fmt.Sprintf("COPY %s (%s) FROM STDIN", table, strings.Join(columns, ", "))
	pc.counts.Add(Write)
	tag, err := pc.conn.CopyFrom(ctx, r, sql)
	return tag.RowsAffected(), statementError(err)
}

func appendText(b []byte, a any) []byte {
	switch v := a.(type) {
	case int:
		return strconv.AppendInt(b, int64(v), 10)
	case int64:
		return strconv.AppendInt(b, v, 10)
	case int32:
		return strconv.AppendInt(b, int64(v), 10)
	case uint32:
		return strconv.AppendUint(b, uint64(v), 10)
	case float64:
		return strconv.AppendFloat(b, v, 'g', -1, 64)
	case string:
		return append(b, v...)
	case []byte:
		return append(b, v...)
	case nil:
		return nil
	default:
		return fmt.Append(b, v)
	}
}

// dollarPlaceholders rewrites ? to $1, $2, ... outside quoted strings, so workloads write one SQL text.
func dollarPlaceholders(sql string) string {
	if !strings.Contains(sql, "?") {
		return sql
	}
	var b strings.Builder
	n := 0
	inQuote := byte(0)
	for i := 0; i < len(sql); i++ {
		ch := sql[i]
		switch {
		case inQuote != 0:
			if ch == inQuote {
				inQuote = 0
			}
		case ch == '\'' || ch == '"':
			inQuote = ch
		case ch == '?':
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(ch)
	}
	return b.String()
}
