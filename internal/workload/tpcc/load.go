package tpcc

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/fairbench/fairbench/internal/dialect"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/workload"
)

// batchBytes is the size of one COPY or INSERT: big enough that round trips and commits are a
// small share of the load, well under MariaDB's default 16 MB max_allowed_packet.
const batchBytes = 4 << 20

// loadUnit is one independent piece of the population, loaded by one thread on one connection.
type loadUnit struct {
	what string
	run  func(l *loader) error
}

// Prepare creates the nine tables and populates them per clause 4.3.3. The item table and every
// warehouse's stock, customers (with history) and orders (with new_order and order_line) are
// separate units spread over env.LoadThreads connections, through the engine's bulk path (COPY,
// LOAD DATA LOCAL; INSERTs where a server refuses both). On PostgreSQL the tables are keyed
// afterwards; on the MySQL family, where rows are stored in primary key order, keys come first
// and rows arrive in key order. Secondary indexes are built last.
func (t *tpcc) Prepare(ctx context.Context, env *workload.Env) error {
	c, err := env.Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := workload.RefuseForeignRoutines(ctx, c, routineNames); err != nil {
		return err
	}
	if err := workload.ClaimTables(ctx, c, name, tableNames, env.Force); err != nil {
		return err
	}
	if err := workload.DropOwnedRoutines(ctx, c, routineNames); err != nil {
		return err
	}
	for _, td := range schema {
		if err := workload.CreateOwned(ctx, c, td.name, createSQL(dialect.Of(c), td)); err != nil {
			return fmt.Errorf("creating %s: %w", td.name, err)
		}
	}
	defer workload.ReadyBulkLoad(ctx, c)()
	W := t.warehouses
	perWH := int64(1 + districtsPerWH + items + 2*districtsPerWH*customersPerDist +
		districtsPerWH*(ordersPerDist+undeliveredPerDist+ordersPerDist*10))
	total := int64(items) + int64(W)*perWH
	var done atomic.Int64
	progress := func(n int64) {
		if env.Progress != nil {
			env.Progress(min(done.Add(n), total), total)
		}
	}
	now := time.Now().UTC().Format("2006-01-02 15:04:05")
	// Stock, the biggest unit, first, the small ones last, so that no thread is left alone with a
	// big one at the end.
	units := []loadUnit{{"item", func(l *loader) error { return l.items() }}}
	for w := 1; w <= W; w++ {
		units = append(units, loadUnit{fmt.Sprintf("stock of warehouse %d", w), func(l *loader) error { return l.stock(w) }})
	}
	for w := 1; w <= W; w++ {
		units = append(units,
			loadUnit{fmt.Sprintf("orders of warehouse %d", w), func(l *loader) error { return l.orders(w) }},
			loadUnit{fmt.Sprintf("customers of warehouse %d", w), func(l *loader) error { return l.customers(w) }},
			loadUnit{fmt.Sprintf("warehouse %d", w), func(l *loader) error { return l.warehouse(w) }})
	}
	jobs := make([]func(c sqldb.Conn) error, len(units))
	for i, u := range units {
		jobs[i] = func(c sqldb.Conn) error {
			l := newLoader(ctx, c, gen{env.Rand.New(env.Seed*1000003 + uint64(i) + 1)}, now, progress)
			err := u.run(l)
			if cerr := l.close(); err == nil {
				err = cerr
			}
			if err != nil {
				return fmt.Errorf("loading %s: %w", u.what, err)
			}
			return nil
		}
	}
	threads := max(1, env.LoadThreads)
	start := time.Now()
	if err := parallel(ctx, env, threads, jobs); err != nil {
		return err
	}
	loaded := time.Now()
	if err := parallel(ctx, env, threads, t.afterLoad(ctx, dialect.Of(c))); err != nil {
		return err
	}
	// --style routines' procedures are part of the data set whatever style a run uses, so one
	// prepare serves every style.
	if err := createRoutines(ctx, c); err != nil {
		return err
	}
	if env.Log != nil {
		fmt.Fprintf(env.Log, "tpcc: %d warehouses: rows loaded in %.1fs by %d threads, keys, indexes and statistics in %.1fs\n",
			W, loaded.Sub(start).Seconds(), threads, time.Since(loaded).Seconds())
	}
	return nil
}

// afterLoad builds what is faster to build once than to maintain per row, and gives every engine
// statistics (PostgreSQL's VACUUM also sets the hint bits that the first run would otherwise write,
// as pgbench -i does).
func (t *tpcc) afterLoad(ctx context.Context, d dialect.Dialect) []func(c sqldb.Conn) error {
	secondary := map[string][]string{}
	for _, ix := range secondaryIndexes {
		secondary[ix.table] = append(secondary[ix.table], fmt.Sprintf("CREATE INDEX %s ON %s (%s)", ix.name, ix.table, ix.cols))
	}
	byName := map[string]tableDDL{}
	for _, td := range schema {
		byName[td.name] = td
	}
	// The biggest tables first, so that no thread is left with one at the end.
	order := []string{"order_line", "stock", "customer", "orders", "history", "item", "new_order", "district", "warehouse"}
	var jobs []func(c sqldb.Conn) error
	for _, n := range order {
		td := byName[n]
		var stmts []string
		if !d.Caps().PrimaryKeyAtCreate && td.key != "" {
			stmts = append(stmts, fmt.Sprintf("ALTER TABLE %s ADD PRIMARY KEY (%s)", td.name, td.key))
		}
		stmts = append(stmts, secondary[td.name]...)
		jobs = append(jobs, func(c sqldb.Conn) error {
			if err := workload.ExecAll(ctx, c, stmts); err != nil {
				return err
			}
			return d.Maintain(ctx, c, td.name)
		})
	}
	return jobs
}

// parallel runs jobs on up to threads connections; see workload.OnConnections.
func parallel(ctx context.Context, env *workload.Env, threads int, jobs []func(c sqldb.Conn) error) error {
	return workload.OnConnections(ctx, env, threads, jobs, func(c sqldb.Conn, job func(sqldb.Conn) error) error { return job(c) })
}

// loader generates one unit's rows and hands full batches to a sender goroutine that runs them on
// the connection, so generating the next batch overlaps with the server storing the last one.
type loader struct {
	ctx      context.Context
	conn     sqldb.Conn
	g        gen
	now      string
	progress func(int64)

	batches chan batch
	free    chan []byte
	done    chan struct{}
	failed  atomic.Bool
	err     error // the sender's first error; read after done is closed

	scratch []byte
	// table maps a TPC-C table name to the one loaded (sysbench-tpcc's "stock1"); nil loads the
	// names as they are.
	table func(string) string
}

type batch struct {
	table string
	cols  []string
	data  []byte
	rows  int64
}

func newLoader(ctx context.Context, c sqldb.Conn, g gen, now string, progress func(int64)) *loader {
	l := &loader{ctx: ctx, conn: c, g: g, now: now, progress: progress,
		batches: make(chan batch, 1), free: make(chan []byte, 3), done: make(chan struct{})}
	go l.send()
	return l
}

func (l *loader) send() {
	defer close(l.done)
	for b := range l.batches {
		if l.err == nil {
			if err := dialect.LoaderFor(l.conn.Kind()).Load(l.ctx, l.conn, b.table, b.cols, bytes.NewReader(b.data)); err != nil {
				l.err = fmt.Errorf("%s: %w", b.table, err)
				l.failed.Store(true)
			} else {
				l.progress(b.rows)
			}
		}
		select {
		case l.free <- b.data[:0]:
		default:
		}
	}
}

// close waits for the last batch and returns the first error the sender met.
func (l *loader) close() error {
	close(l.batches)
	<-l.done
	return l.err
}

func (l *loader) buffer() []byte {
	select {
	case b := <-l.free:
		return b
	default:
		return make([]byte, 0, batchBytes+64<<10)
	}
}

// sink writes one table's rows in the bulk loaders' text format (tab-separated, \N for NULL),
// which dialect.Loader sends as COPY, LOAD DATA or, where a server refuses both, INSERTs.
type sink struct {
	l     *loader
	table string
	cols  []string
	b     []byte
	rows  int64
	nf    int
}

func (l *loader) sink(table string, cols []string) *sink {
	if l.table != nil {
		table = l.table(table)
	}
	s := &sink{l: l, table: table, cols: cols}
	s.b = l.buffer()
	return s
}

func (s *sink) begin() { s.nf = 0 }

func (s *sink) sep() {
	if s.nf > 0 {
		s.b = append(s.b, '\t')
	}
	s.nf++
}

func (s *sink) int(v int) {
	s.sep()
	s.b = strconv.AppendInt(s.b, int64(v), 10)
}

// dec writes v/10^scale.
func (s *sink) dec(v int64, scale int) {
	s.sep()
	s.b = appendDec(s.b, v, scale)
}

func (s *sink) null() {
	s.sep()
	s.b = append(s.b, `\N`...)
}

// str writes a value that needs no escaping (generated letters, digits, spaces, dates).
func (s *sink) str(v []byte) {
	s.sep()
	s.b = append(s.b, v...)
}

func (s *sink) strs(v string) {
	s.sep()
	s.b = append(s.b, v...)
}

// astring writes a random a-string of lo..hi characters in place, without a scratch copy.
func (s *sink) astring(lo, hi int) {
	s.sep()
	s.b = s.l.g.astring(s.b, lo, hi)
}

func (s *sink) end() error {
	s.b = append(s.b, '\n')
	s.rows++
	if len(s.b) >= batchBytes {
		return s.flush()
	}
	return nil
}

func (s *sink) flush() error {
	if s.l.failed.Load() {
		// The sender has failed: stop generating and let close report why.
		return fmt.Errorf("load stopped")
	}
	if s.rows == 0 {
		return nil
	}
	select {
	case s.l.batches <- batch{table: s.table, cols: s.cols, data: s.b, rows: s.rows}:
	case <-s.l.ctx.Done():
		return s.l.ctx.Err()
	}
	s.b, s.rows = s.l.buffer(), 0
	return nil
}

// finish drops the generator's "load stopped" when the sender failed, so that close reports why.
func (l *loader) finish(err error) error {
	if err != nil && l.failed.Load() {
		return nil
	}
	return err
}

func (l *loader) items() error {
	s := l.sink("item", itemCols)
	for i := 1; i <= items; i++ {
		s.begin()
		s.int(i)
		s.int(l.g.intn(1, 10000))
		s.astring(14, 24)
		s.dec(int64(l.g.intn(100, 10000)), 2)
		l.scratch = l.g.data(l.scratch[:0])
		s.str(l.scratch)
		if err := s.end(); err != nil {
			return l.finish(err)
		}
	}
	return l.finish(s.flush())
}

func (l *loader) stock(w int) error {
	s := l.sink("stock", stockCols)
	for i := 1; i <= items; i++ {
		s.begin()
		s.int(i)
		s.int(w)
		s.int(l.g.intn(10, 100))
		for d := 0; d < 10; d++ {
			s.astring(24, 24)
		}
		s.int(0)
		s.int(0)
		s.int(0)
		l.scratch = l.g.data(l.scratch[:0])
		s.str(l.scratch)
		if err := s.end(); err != nil {
			return l.finish(err)
		}
	}
	return l.finish(s.flush())
}

// address writes street 1, street 2, city, state and zip (clause 4.3.3.1).
func (l *loader) address(s *sink) {
	s.astring(10, 20)
	s.astring(10, 20)
	s.astring(10, 20)
	l.scratch = l.g.state(l.scratch[:0])
	s.str(l.scratch)
	l.scratch = l.g.zip(l.scratch[:0])
	s.str(l.scratch)
}

func (l *loader) warehouse(w int) error {
	s := l.sink("warehouse", warehouseCols)
	s.begin()
	s.int(w)
	s.astring(6, 10)
	l.address(s)
	s.dec(int64(l.g.intn(0, 2000)), 4)
	s.dec(30000000, 2)
	if err := s.end(); err != nil {
		return l.finish(err)
	}
	if err := s.flush(); err != nil {
		return l.finish(err)
	}
	s = l.sink("district", districtCols)
	for d := 1; d <= districtsPerWH; d++ {
		s.begin()
		s.int(d)
		s.int(w)
		s.astring(6, 10)
		l.address(s)
		s.dec(int64(l.g.intn(0, 2000)), 4)
		s.dec(3000000, 2)
		s.int(ordersPerDist + 1)
		if err := s.end(); err != nil {
			return l.finish(err)
		}
	}
	return l.finish(s.flush())
}

// customers writes a warehouse's customers and, for each, its one history row.
func (l *loader) customers(w int) error {
	s := l.sink("customer", customerCols)
	h := l.sink("history", historyCols)
	for d := 1; d <= districtsPerWH; d++ {
		for c := 1; c <= customersPerDist; c++ {
			s.begin()
			s.int(c)
			s.int(d)
			s.int(w)
			s.astring(8, 16)
			s.strs("OE")
			n := c - 1
			if c > 1000 {
				n = l.g.nurand(255, cLoad, 0, 999)
			}
			l.scratch = lastName(l.scratch[:0], n)
			s.str(l.scratch)
			l.address(s)
			l.scratch = l.g.nstring(l.scratch[:0], 16)
			s.str(l.scratch)
			s.strs(l.now)
			if l.g.chance(10) {
				s.strs("BC")
			} else {
				s.strs("GC")
			}
			s.dec(5000000, 2)
			s.dec(int64(l.g.intn(0, 5000)), 4)
			s.dec(-1000, 2)
			s.dec(1000, 2)
			s.int(1)
			s.int(0)
			s.astring(300, 500)
			if err := s.end(); err != nil {
				return l.finish(err)
			}

			h.begin()
			h.int(c)
			h.int(d)
			h.int(w)
			h.int(d)
			h.int(w)
			h.strs(l.now)
			h.dec(1000, 2)
			h.astring(12, 24)
			if err := h.end(); err != nil {
				return l.finish(err)
			}
		}
	}
	if err := s.flush(); err != nil {
		return l.finish(err)
	}
	return l.finish(h.flush())
}

// orders writes a warehouse's orders, their order lines, and the new_order rows of the last 900
// orders of each district, which are the undelivered ones.
func (l *loader) orders(w int) error {
	o := l.sink("orders", ordersCols)
	ol := l.sink("order_line", orderLineCols)
	no := l.sink("new_order", newOrderCols)
	perm := make([]int, customersPerDist)
	for d := 1; d <= districtsPerWH; d++ {
		// O_C_ID follows a random permutation of the customers, so each has exactly one order.
		for i := range perm {
			perm[i] = i + 1
		}
		for i := len(perm) - 1; i > 0; i-- {
			j := l.g.intn(0, i)
			perm[i], perm[j] = perm[j], perm[i]
		}
		for id := 1; id <= ordersPerDist; id++ {
			delivered := id < firstUndelivered
			cnt := l.g.intn(5, 15)
			o.begin()
			o.int(id)
			o.int(d)
			o.int(w)
			o.int(perm[id-1])
			o.strs(l.now)
			if delivered {
				o.int(l.g.intn(1, 10))
			} else {
				o.null()
			}
			o.int(cnt)
			o.int(1)
			if err := o.end(); err != nil {
				return l.finish(err)
			}
			for n := 1; n <= cnt; n++ {
				ol.begin()
				ol.int(id)
				ol.int(d)
				ol.int(w)
				ol.int(n)
				ol.int(l.g.intn(1, items))
				ol.int(w)
				if delivered {
					ol.strs(l.now)
				} else {
					ol.null()
				}
				ol.int(5)
				if delivered {
					ol.dec(0, 2)
				} else {
					ol.dec(int64(l.g.intn(1, 999999)), 2)
				}
				ol.astring(24, 24)
				if err := ol.end(); err != nil {
					return l.finish(err)
				}
			}
			if !delivered {
				no.begin()
				no.int(id)
				no.int(d)
				no.int(w)
				if err := no.end(); err != nil {
					return l.finish(err)
				}
			}
		}
	}
	for _, s := range []*sink{o, ol, no} {
		if err := s.flush(); err != nil {
			return l.finish(err)
		}
	}
	return nil
}
