package sqldb

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"strconv"
	"time"

	"github.com/go-sql-driver/mysql"
)

// myConn drives go-sql-driver/mysql's driver.Conn directly: database/sql would add a pool, a
// mutex and argument conversion to every query, none of which a one-connection-per-thread
// benchmark needs.
type myConn struct {
	kind   Kind
	conn   driver.Conn
	sock   *blockingConn    // beneath the driver (and TLS): for Close from another goroutine and the wire counters
	counts *StatementCounts // Exec and Query calls (see Counters)
	view   bool             // an Uncounted view of another connection: Close leaves it open
}

// blockingNet is the network name under which the MySQL driver dials through dialBlocking.
const blockingNet = "fairbench-tcp"

func init() {
	mysql.RegisterDialContext(blockingNet, dialAddr)
	// The driver logs I/O errors to stderr ("[mysql] packets.go:58 unexpected EOF") beside the
	// error it returns; fairbench reports the returned error, once, in one line.
	_ = mysql.SetLogger(log.New(io.Discard, "", 0))
}

func openMySQL(ctx context.Context, t Target) (*myConn, error) {
	cfg := mysql.NewConfig()
	cfg.User = t.User
	cfg.Passwd = t.Password
	cfg.Net = blockingNet
	cfg.Addr = net.JoinHostPort(t.Host, strconv.Itoa(t.Port))
	cfg.DBName = t.Database
	cfg.Timeout = t.ConnectTimeout
	// Server-side prepared statements, as sysbench uses; interpolation would turn them into text queries.
	cfg.InterpolateParams = false
	cfg.AllowNativePasswords = true
	cfg.MultiStatements = false
	var err error
	if cfg.TLS, cfg.AllowFallbackToPlaintext, err = mysqlTLS(t); err != nil {
		return nil, err
	}
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	// The handshake honours ctx (the driver closes the socket when it ends), so the connect
	// timeout bounds it as well as the dial.
	ctx, slot := withDialSlot(ctx)
	dc, err := connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &myConn{kind: t.Kind, conn: dc, sock: slot.conn, counts: new(StatementCounts)}, nil
}

func (c *myConn) Kind() Kind { return c.kind }
func (c *myConn) Close() error {
	if c.view {
		return nil
	}
	return closeConn(c.sock, c.closeDriver)
}

// closeDriver sends COM_QUIT, which a stopped server's full receive buffer could hold forever:
// a deadline bounds it.
func (c *myConn) closeDriver() error {
	if c.sock != nil {
		_ = c.sock.SetWriteDeadline(time.Now().Add(closeTimeout))
	}
	return c.conn.Close()
}

// Counters are c's statements since it was opened, by class, and its round trips.
func (c *myConn) Counters() Counters {
	n := c.counts.Load()
	if c.sock != nil {
		n.RoundTrips = c.sock.wire.roundTrips.Load()
	}
	return n
}

func (c *myConn) Exec(ctx context.Context, sql string) error {
	c.counts.Add(ClassOf(sql))
	_, err := c.conn.(driver.ExecerContext).ExecContext(ctx, sql, nil)
	return statementError(err)
}

func (c *myConn) Query(ctx context.Context, sql string, args ...any) ([][]string, error) {
	return c.QueryAs(ctx, ClassOf(sql), sql, args...)
}

// QueryAs is sqldb.QueryAs.
func (c *myConn) QueryAs(ctx context.Context, class Class, sql string, args ...any) ([][]string, error) {
	c.counts.Add(class)
	out, err := c.query(ctx, sql, args)
	return out, statementError(err)
}

func (c *myConn) query(ctx context.Context, sql string, args []any) ([][]string, error) {
	var rows driver.Rows
	var err error
	if len(args) == 0 {
		rows, err = c.conn.(driver.QueryerContext).QueryContext(ctx, sql, nil)
	} else {
		var st driver.Stmt
		st, err = c.conn.(driver.ConnPrepareContext).PrepareContext(ctx, sql)
		if err != nil {
			return nil, err
		}
		defer st.Close()
		rows, err = st.(driver.StmtQueryContext).QueryContext(ctx, namedValues(nil, args))
	}
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out [][]string
	dest := make([]driver.Value, len(rows.Columns()))
	for {
		if err := rows.Next(dest); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, err
		}
		row := make([]string, len(dest))
		for i, v := range dest {
			switch x := v.(type) {
			case nil:
			case []byte:
				row[i] = string(x)
			case time.Time:
				row[i] = x.Format(time.RFC3339Nano)
			default:
				row[i] = fmt.Sprint(x)
			}
		}
		out = append(out, row)
	}
}

func (c *myConn) Prepare(ctx context.Context, sql string) (Stmt, error) {
	st, err := c.conn.(driver.ConnPrepareContext).PrepareContext(ctx, sql)
	if err != nil {
		return nil, err
	}
	n := st.NumInput()
	return &myStmt{counts: c.counts, class: ClassOf(sql), stmt: st, args: make([]driver.NamedValue, n)}, nil
}

type myStmt struct {
	counts *StatementCounts
	class  Class
	stmt   driver.Stmt
	args   []driver.NamedValue
	dest   []driver.Value
}

func namedValues(dst []driver.NamedValue, args []any) []driver.NamedValue {
	if dst == nil {
		dst = make([]driver.NamedValue, len(args))
	}
	for i, a := range args {
		var v driver.Value
		switch x := a.(type) {
		case int:
			v = int64(x)
		case int32:
			v = int64(x)
		case uint32:
			v = int64(x)
		default:
			v = a
		}
		dst[i] = driver.NamedValue{Ordinal: i + 1, Value: v}
	}
	return dst
}

// CountAs is sqldb.CountAs.
func (s *myStmt) CountAs(c Class) { s.class = c }

func (s *myStmt) bind(args []any) error {
	if len(args) != len(s.args) {
		return fmt.Errorf("statement takes %d parameters, got %d", len(s.args), len(args))
	}
	namedValues(s.args, args)
	return nil
}

func (s *myStmt) Query(ctx context.Context, args ...any) (int64, error) {
	if err := s.bind(args); err != nil {
		return 0, err
	}
	s.counts.Add(s.class)
	rows, err := s.stmt.(driver.StmtQueryContext).QueryContext(ctx, s.args)
	if err != nil {
		return 0, statementError(err)
	}
	if s.dest == nil {
		s.dest = make([]driver.Value, len(rows.Columns()))
	}
	var n int64
	for {
		if err := rows.Next(s.dest); err != nil {
			rows.Close()
			if errors.Is(err, io.EOF) {
				return n, nil
			}
			return n, statementError(err)
		}
		n++
	}
}

func (s *myStmt) FirstRow(ctx context.Context, args ...any) ([]string, []*string, int64, error) {
	if err := s.bind(args); err != nil {
		return nil, nil, 0, err
	}
	s.counts.Add(s.class)
	rows, err := s.stmt.(driver.StmtQueryContext).QueryContext(ctx, s.args)
	if err != nil {
		return nil, nil, 0, statementError(err)
	}
	defer rows.Close()
	names := rows.Columns()
	dest := make([]driver.Value, len(names))
	var row []*string
	var n int64
	for {
		if err := rows.Next(dest); err != nil {
			if errors.Is(err, io.EOF) {
				return names, row, n, nil
			}
			return nil, nil, n, statementError(err)
		}
		if n == 0 {
			for _, v := range dest {
				row = append(row, driverText(v))
			}
		}
		n++
	}
}

// driverText is a driver value as text, nil for NULL.
func driverText(v driver.Value) *string {
	var s string
	switch x := v.(type) {
	case nil:
		return nil
	case []byte:
		s = string(x)
	case time.Time:
		s = x.Format("2006-01-02 15:04:05.999999")
	default:
		s = fmt.Sprint(x)
	}
	return &s
}

func (s *myStmt) Exec(ctx context.Context, args ...any) (int64, error) {
	if err := s.bind(args); err != nil {
		return 0, err
	}
	s.counts.Add(s.class)
	res, err := s.stmt.(driver.StmtExecContext).ExecContext(ctx, s.args)
	if err != nil {
		return 0, statementError(err)
	}
	return res.RowsAffected()
}
