package sqldb

import (
	"context"
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
