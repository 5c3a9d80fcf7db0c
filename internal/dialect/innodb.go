package dialect

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fairbench/fairbench/internal/sqldb"
)

// innodb is MySQL's and MariaDB's dialect: one SQL family, one storage engine.
type innodb struct{ kind sqldb.Kind }

func (d innodb) Kind() sqldb.Kind { return d.kind }

func (innodb) Caps() Capabilities {
	return Capabilities{Flush: "innodb_max_dirty_pages_pct = 0 at a raised innodb_io_capacity until about none are dirty", BulkLoad: "LOAD DATA LOCAL INFILE",
		PrimaryKeyAtCreate: true, Replication: "galera"}
}

// FlushWait bounds how long Flush waits for InnoDB to write its dirty pages: a busy or very large
// buffer pool must not hold a run up forever; the result then says how many were left.
const FlushWait = 2 * time.Minute

// flushChanges are the variables Flush sets, in this order, and puts back in the reverse one.
// innodb_io_capacity bounds the page cleaners' writes per second even when they have nothing else
// to do: at MariaDB's default of 200 a loaded sysbench data set (10 x 100,000 rows, 15,000 dirty
// pages) was not written out in 2 minutes, at MySQL's 10,000 in under a second. It is raised for
// the flush alone, so that no engine's step starts later or dirtier for it; the step itself runs
// with the engine's own setting.
var flushChanges = []struct{ name, value string }{
	{"innodb_io_capacity_max", "100000"}, // first: innodb_io_capacity may not exceed it
	{"innodb_io_capacity", "100000"},
	{"innodb_max_dirty_pages_pct", "0"},
}

// Flush makes the page cleaners write every dirty page (innodb_max_dirty_pages_pct = 0, at a
// raised innodb_io_capacity), waits (bounded) until about none are left, and restores every
// setting it changed, also when ctx is cancelled. InnoDB lowers innodb_max_dirty_pages_pct_lwm
// along with the first (MySQL's default is 10), so that is restored too, last: a later step must
// not run with another flushing policy. "About none": background work (purge, the change buffer)
// keeps dirtying a few pages, so an exact zero may never come.
func (innodb) Flush(ctx context.Context, c sqldb.Conn) (note string, err error) {
	saved, err := innodbGlobals(ctx, c, "innodb_max_dirty_pages_pct_lwm", "innodb_io_capacity_max", "innodb_io_capacity", "innodb_max_dirty_pages_pct")
	if err != nil {
		return "", fmt.Errorf("not done: %w", err)
	}
	var changed []string
	defer func() {
		if rerr := restoreGlobals(ctx, c, saved, changed); rerr != nil && err == nil {
			err = rerr
		}
	}()
	for _, ch := range flushChanges {
		if err := c.Exec(ctx, "SET GLOBAL "+ch.name+" = "+ch.value); err != nil {
			return "", fmt.Errorf("not permitted: %w", err)
		}
		changed = append(changed, ch.name)
	}
	return waitFlushed(ctx, c)
}

// restoreLimit bounds putting the flush's settings back: it runs also after ctx is cancelled
// (Ctrl-C), and a server that stopped answering must not hold fairbench up for as long as its
// connection would.
const restoreLimit = 10 * time.Second

// restoreGlobals sets the changed variables back in reverse order, then the low-water mark
// InnoDB lowered along with them; it names the first it could not put back.
func restoreGlobals(ctx context.Context, c sqldb.Conn, saved map[string]string, changed []string) error {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), restoreLimit)
	defer cancel()
	names := append(slices.Clone(changed), "innodb_max_dirty_pages_pct_lwm")
	slices.Reverse(names[:len(changed)])
	var first error
	for _, name := range names {
		if err := c.Exec(rctx, "SET GLOBAL "+name+" = "+saved[name]); err != nil && first == nil {
			first = fmt.Errorf("%s not set back to %s after the flush (%v): the server keeps the flush's value until restarted or set by hand", name, saved[name], err)
		}
	}
	return first
}

// innodbGlobals reads numeric global variables by name, each checked to be a number: they are
// written back into SET statements.
func innodbGlobals(ctx context.Context, c sqldb.Conn, names ...string) (map[string]string, error) {
	sel := make([]string, len(names))
	for i, n := range names {
		sel[i] = "@@GLOBAL." + n
	}
	rows, err := c.Query(ctx, "SELECT "+strings.Join(sel, ", "))
	if err != nil || len(rows) == 0 || len(rows[0]) < len(names) {
		return nil, fmt.Errorf("reading %s: %v", strings.Join(names, ", "), err)
	}
	out := make(map[string]string, len(names))
	for i, n := range names {
		if _, err := strconv.ParseFloat(rows[0][i], 64); err != nil {
			return nil, errors.New(n + " reads " + strconv.Quote(rows[0][i]))
		}
		out[n] = rows[0][i]
	}
	return out, nil
}

// waitFlushed waits, up to FlushWait, until about no dirty pages are left.
func waitFlushed(ctx context.Context, c sqldb.Conn) (string, error) {
	deadline := time.Now().Add(FlushWait)
	for {
		dirty, total, err := innodbPages(ctx, c)
		if err != nil {
			return "", fmt.Errorf("not done: %w", err)
		}
		if dirty <= max(16, total/1000) {
			return "dirty pages flushed", nil
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("timed out after %s with %d dirty pages left", FlushWait, dirty)
		}
		select {
		case <-ctx.Done():
			return "", errInterrupted
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func innodbPages(ctx context.Context, c sqldb.Conn) (dirty, total int64, err error) {
	s, err := globalStatus(ctx, c, "Innodb_buffer_pool_pages_dirty", "Innodb_buffer_pool_pages_total")
	if err != nil {
		return 0, 0, err
	}
	d, ok1 := s["Innodb_buffer_pool_pages_dirty"]
	t, ok2 := s["Innodb_buffer_pool_pages_total"]
	if !ok1 || !ok2 {
		return 0, 0, fmt.Errorf("the server does not report Innodb_buffer_pool_pages_dirty")
	}
	return d, t, nil
}

func (innodb) Backlog(ctx context.Context, c sqldb.Conn) (dirty, redo *int64) {
	s, err := globalStatus(ctx, c, "Innodb_buffer_pool_pages_dirty", "Innodb_checkpoint_age",
		"Innodb_redo_log_current_lsn", "Innodb_redo_log_checkpoint_lsn")
	if err != nil {
		return nil, nil
	}
	if d, ok := s["Innodb_buffer_pool_pages_dirty"]; ok {
		dirty = &d
	}
	if age, ok := s["Innodb_checkpoint_age"]; ok { // MariaDB
		redo = &age
	} else if cur, ok := s["Innodb_redo_log_current_lsn"]; ok { // MySQL 8.0.30 on
		if cp, ok := s["Innodb_redo_log_checkpoint_lsn"]; ok {
			age := cur - cp
			redo = &age
		}
	}
	return dirty, redo
}

// Maintain reads ANALYZE TABLE's answer (a row per table) as a query: the server sends one.
func (innodb) Maintain(ctx context.Context, c sqldb.Conn, table string) error {
	_, err := c.Query(ctx, "ANALYZE TABLE "+table)
	return err
}

func (innodb) DataDirectory(ctx context.Context, c sqldb.Conn) string {
	return firstString(ctx, c, "SELECT @@datadir")
}

// globalStatus reads integer status variables by name; absent ones are left out.
func globalStatus(ctx context.Context, c sqldb.Conn, names ...string) (map[string]int64, error) {
	out := map[string]int64{}
	for _, n := range names {
		rows, err := c.Query(ctx, "SHOW GLOBAL STATUS LIKE '"+n+"'")
		if err != nil {
			return nil, err
		}
		if len(rows) == 1 && len(rows[0]) >= 2 {
			if v, err := strconv.ParseInt(rows[0][1], 10, 64); err == nil {
				out[n] = v
			}
		}
	}
	return out, nil
}

// innodbTypes: timestamp is DATETIME(6), which has no time zone and no 2038 limit, as
// PostgreSQL's timestamp (MySQL's TIMESTAMP converts to UTC and ends in 2038); bool is
// tinyint(1), which BOOLEAN stands for.
// The built-in workloads' own names: serial and bigserial number rows with AUTO_INCREMENT (MySQL's
// own SERIAL would be an unsigned bigint with a second, unique index).
var innodbTypes = map[string]string{"timestamp": "datetime(6)", "bool": "boolean",
	"serial": "integer NOT NULL AUTO_INCREMENT", "bigserial": "bigint NOT NULL AUTO_INCREMENT"}

func (innodb) TypeName(portable string, length, scale int) string {
	return typeName(portable, length, scale, innodbTypes)
}

// StartLoading turns local_infile on for the load where the server has it off (MySQL 8's
// default), which takes SUPER or SYSTEM_VARIABLES_ADMIN. Where this user may not, the load still
// works: Load then sends the rows as INSERTs, slower but the same rows.
func (d innodb) StartLoading(ctx context.Context, c sqldb.Conn) (string, func()) {
	ok, restore, _ := sqldb.EnableLocalInfile(ctx, c)
	if !ok {
		return InsertMethod, restore
	}
	return d.Caps().BulkLoad, restore
}

// Load streams the rows with LOAD DATA LOCAL, or, where the server refuses it before reading any
// (local_infile off), sends the same rows as multi-row INSERTs.
func (innodb) Load(ctx context.Context, c sqldb.Conn, table string, columns []string, r io.Reader) error {
	cr := &countingReader{r: r}
	err := sqldb.LoadData(ctx, c, table, columns, cr, "\t", "\n")
	if err != nil && cr.n == 0 && sqldb.LocalInfileRefused(err) {
		return sqldb.InsertLines(ctx, c, table, columns, r)
	}
	return err
}

// countingReader counts what was read of r: a refused LOAD DATA read nothing, so the rows are
// all still there for the INSERTs.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func (innodb) Family() Family { return MySQLFamily }

func (d innodb) ProductName() string {
	if d.kind == sqldb.MariaDB {
		return "MariaDB (InnoDB)"
	}
	return "MySQL (InnoDB)"
}

// SetBackgroundCleanup: InnoDB's purge of old row versions cannot be turned off.
func (innodb) SetBackgroundCleanup(context.Context, sqldb.Conn, bool) error {
	return errors.New("InnoDB's purge of old row versions runs always; it cannot be turned on or off")
}

// RemoveOldVersions: InnoDB keeps old row versions in its undo logs, which purge empties by
// itself; there is nothing to run on a table.
func (innodb) RemoveOldVersions(context.Context, sqldb.Conn, string) error {
	return errors.New("InnoDB keeps old row versions in undo logs, not in the table: nothing to remove from it")
}

// TableVersions: InnoDB counts old versions server-wide (the history list), not per table.
func (innodb) TableVersions(context.Context, sqldb.Conn, string) (TableVersions, error) {
	return TableVersions{}, errors.New("InnoDB counts old row versions server-wide (its history list), not per table")
}
