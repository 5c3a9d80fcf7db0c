package sqldb

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"

	"github.com/go-sql-driver/mysql"
)

// LoadData streams rows into a MySQL or MariaDB table with LOAD DATA LOCAL INFILE, the fastest
// way into InnoDB, through the driver's reader handler (so no file and no allowAllFiles).
// Fields end with fieldEnd and rows with lineEnd; "\t" and "\n" read the same text rows that
// PostgreSQL's COPY does, \N included. Any warning other than a note is an error: LOCAL implies
// IGNORE, and a silently truncated value would be a silently different data set.
func LoadData(ctx context.Context, c Conn, table string, columns []string, r io.Reader, fieldEnd, lineEnd string) error {
	if !c.Kind().MySQLFamily() {
		return errors.New("LOAD DATA is MySQL and MariaDB only")
	}
	name := fmt.Sprintf("fairbench_%s_%d", table, readerSeq.Add(1))
	mysql.RegisterReaderHandler(name, func() io.Reader { return r })
	defer mysql.DeregisterReaderHandler(name)
	q := fmt.Sprintf("LOAD DATA LOCAL INFILE 'Reader::%s' INTO TABLE %s CHARACTER SET utf8mb4 FIELDS TERMINATED BY '%s' LINES TERMINATED BY '%s' (%s)",
		name, table, escapeSQL(fieldEnd), escapeSQL(lineEnd), strings.Join(columns, ", "))
	if err := c.Exec(ctx, q); err != nil {
		return err
	}
	rows, err := c.Query(ctx, "SHOW WARNINGS LIMIT 10")
	if err != nil {
		return err
	}
	for _, w := range rows {
		if len(w) >= 3 && !strings.EqualFold(w[0], "Note") {
			return fmt.Errorf("LOAD DATA into %s: %s %s: %s", table, w[0], w[1], w[2])
		}
	}
	return nil
}

var readerSeq atomic.Int64

func escapeSQL(s string) string {
	r := strings.NewReplacer(`\`, `\\`, "\t", `\t`, "\n", `\n`, "'", `\'`)
	return r.Replace(s)
}

// EnableLocalInfile makes LOAD DATA LOCAL possible for one load: local_infile is on by default on
// MariaDB and off on MySQL 8+. When it is off and this user may change it, it is turned on and
// restore turns it off again; ok is false when LOAD DATA cannot be used and rows must go in as
// INSERTs.
func EnableLocalInfile(ctx context.Context, c Conn) (ok bool, restore func(), err error) {
	restore = func() {}
	rows, err := c.Query(ctx, "SELECT @@GLOBAL.local_infile")
	if err == nil && len(rows) == 1 && (rows[0][0] == "1" || strings.EqualFold(rows[0][0], "ON")) {
		return true, restore, nil
	}
	if err := c.Exec(ctx, "SET GLOBAL local_infile = 1"); err != nil {
		return false, restore, err
	}
	return true, func() { _ = c.Exec(context.WithoutCancel(ctx), "SET GLOBAL local_infile = 0") }, nil
}

// insertBatchBytes is about how much one INSERT of InsertLines carries: well under every
// server's max_allowed_packet (16 MiB on MariaDB, 64 MiB on MySQL 8), large enough that the
// round trips do not dominate.
const insertBatchBytes = 1 << 20

// InsertLines sends LOAD DATA's text rows (fields separated by tabs, lines ending in a newline,
// \N for NULL, backslash escapes) as multi-row INSERTs of about a mebibyte each: the way in where
// LOAD DATA LOCAL is refused (local_infile off, and a user who may not turn it on). Each value is
// a quoted string, which the server converts to the column's type as LOAD DATA does; one holding a
// quote, a backslash or a control character goes as a hex literal, which reads the same whatever
// the server's sql_mode says of backslashes.
func InsertLines(ctx context.Context, c Conn, table string, columns []string, r io.Reader) error {
	head := "INSERT INTO " + table + " (" + strings.Join(columns, ", ") + ") VALUES "
	br := bufio.NewReaderSize(r, 256<<10)
	q := []byte(head)
	rows := 0
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			return fmt.Errorf("a row for %s is longer than %d bytes", table, br.Size())
		}
		if len(line) > 0 {
			if rows > 0 {
				q = append(q, ',')
			}
			q = appendValues(q, line)
			rows++
		}
		if rows > 0 && (len(q) >= insertBatchBytes || err == io.EOF) {
			if xerr := c.Exec(ctx, string(q)); xerr != nil {
				return xerr
			}
			q, rows = append(q[:0], head...), 0
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// appendValues writes one text row as a parenthesized list of values.
func appendValues(q, line []byte) []byte {
	line = bytes.TrimSuffix(line, []byte{'\n'})
	q = append(q, '(')
	for i, f := range bytes.Split(line, []byte{'\t'}) {
		if i > 0 {
			q = append(q, ',')
		}
		if string(f) == `\N` {
			q = append(q, "NULL"...)
			continue
		}
		q = appendValue(q, unescapeField(f))
	}
	return append(q, ')')
}

// unescapeField undoes the text format's backslash escapes: \t, \n, \r, \0 and a backslash.
func unescapeField(f []byte) []byte {
	if bytes.IndexByte(f, '\\') < 0 {
		return f
	}
	out := make([]byte, 0, len(f))
	for i := 0; i < len(f); i++ {
		if f[i] != '\\' || i+1 == len(f) {
			out = append(out, f[i])
			continue
		}
		i++
		switch f[i] {
		case 't':
			out = append(out, '\t')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case '0':
			out = append(out, 0)
		default:
			out = append(out, f[i])
		}
	}
	return out
}

// appendValue writes v as a quoted string, or as a hex literal when a quote, a backslash or a
// control character would need an escape.
func appendValue(q, v []byte) []byte {
	plain := true
	for _, b := range v {
		if b == '\'' || b == '\\' || b < 0x20 {
			plain = false
			break
		}
	}
	if plain {
		q = append(q, '\'')
		q = append(q, v...)
		return append(q, '\'')
	}
	q = append(q, "X'"...)
	q = hex.AppendEncode(q, v)
	return append(q, '\'')
}

// LocalInfileRefused says whether err is the server's or the client's refusal of LOAD DATA LOCAL
// (local_infile off), which InsertLines works around.
func LocalInfileRefused(err error) bool {
	var me *mysql.MySQLError
	if !errors.As(err, &me) {
		return false
	}
	switch me.Number {
	// ER_NOT_ALLOWED_COMMAND (older servers), MySQL's ER_CLIENT_LOCAL_FILES_DISABLED and
	// CR_LOAD_DATA_LOCAL_INFILE_REJECTED, MariaDB's ER_LOAD_INFILE_CAPABILITY_DISABLED.
	case 1148, 3948, 2068, 4166:
		return true
	}
	return false
}
