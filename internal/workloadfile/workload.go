package workloadfile

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/fairbench/fairbench/internal/dialect"
	"github.com/fairbench/fairbench/internal/randgen"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/workload"
)

// OptScale multiplies every table's rows.
const OptScale = "scale"

func init() {
	workload.FileLoader = SpecOf
	workload.FileOptions = []workload.Option{scaleOption, writeExistingOption}
}

var (
	scaleOption         = workload.Option{Name: OptScale, Default: "1", Help: "multiplies every table's rows", Max: 1 << 20}
	writeExistingOption = workload.Option{Name: OptWriteExisting, Default: "off",
		Help: "on: run a workload file's transactions that write to its existing tables, which fairbench did not create"}
)

// SpecOf makes a workload.Spec of the file at path: its tables are its data set, named after the
// file's name and a digest of its tables, so that a changed schema or generator is another
// data set that must be prepared again.
func SpecOf(path string) (workload.Spec, error) {
	f, err := Load(path)
	if err != nil {
		return workload.Spec{}, err
	}
	b, _ := os.ReadFile(path)
	sum := sha256.Sum256(b)
	spec := workload.Spec{
		Name:        path,
		Title:       f.Name,
		Description: f.Description,
		Options:     []workload.Option{scaleOption},
		Dataset:     "file:" + f.Name + ":" + hex.EncodeToString(sum[:6]),
		DataOptions: []string{OptScale},
	}
	if f.Existing {
		spec.Options = []workload.Option{writeExistingOption}
		spec.DataOptions = nil
	}
	spec.New = func(o workload.Options) (workload.Workload, error) {
		scale := 1
		if !f.Existing {
			var err error
			if scale, err = o.Int(OptScale, 1); err != nil {
				return nil, err
			}
		}
		// A fresh parse for each workload: references are resolved at its scale, and next's
		// counters belong to it alone.
		own, err := Parse(b, path)
		if err != nil {
			return nil, err
		}
		writes, err := mayWriteExisting(own, o)
		if err != nil {
			return nil, err
		}
		w, err := newFileWorkload(own, int64(scale))
		if err != nil {
			return nil, err
		}
		w.readOnly = own.Existing && !writes
		return w, nil
	}
	return spec, nil
}

// OptWriteExisting lets a file on existing tables write to them.
const OptWriteExisting = "write-existing-tables"

// mayWriteExisting says whether a file on existing tables may write to them, and refuses one
// whose transactions write unless the user said they may: fairbench never changes a table it did
// not create without being told to.
func mayWriteExisting(f *File, o workload.Options) (bool, error) {
	if !f.Existing {
		return true, nil
	}
	if on, err := o.Bool(OptWriteExisting); err != nil || on {
		return on, err
	}
	for _, tx := range f.Transactions {
		for i, st := range tx.Statements {
			for _, form := range st.forms() {
				if form.Kind != "read" {
					return false, workload.Refusef("%s: transaction %s, statement %d (%s) may change the existing tables, which fairbench did not create: "+
						"give --%s on to run it anyway, or leave only reads in the file", f.Path, tx.Name, i+1, short(form.SQL), OptWriteExisting)
				}
			}
		}
	}
	return false, nil
}

// guard makes the session read-only where the file runs on existing tables without leave to
// write: the server then refuses whatever write a statement hides (a data-modifying WITH, a
// function that writes), which no reading of the text can promise.
func (w *fileWorkload) guard(ctx context.Context, c sqldb.Conn) error {
	if !w.readOnly {
		return nil
	}
	if err := c.Exec(ctx, dialect.Of(c).ReadOnlySession()); err != nil {
		return fmt.Errorf("making the session read-only for the existing tables on %s: %w", c.Kind(), err)
	}
	return nil
}

// refusedWrite is the guard's refusal of a write, where err is one: not wrapped, since a
// read-only refusal is otherwise a replica's, which the runner reconnects from; here the run must
// stop and say why.
func (w *fileWorkload) refusedWrite(err error) error {
	if !w.readOnly || !sqldb.IsReadOnlyTransaction(err) {
		return nil
	}
	return fmt.Errorf("the server refused a write to the existing tables (%v): their sessions are read-only without --%s on", err, OptWriteExisting)
}

// fileWorkload is a workload file with its rows scaled and its references resolved.
type fileWorkload struct {
	f *File
	// readOnly is a file on existing tables without --write-existing-tables: every session it
	// opens is read-only on the server (guard).
	readOnly bool
	rows     map[string]int64 // per table, scaled
	kinds    []string
	// labels name every statement for the per-statement latency (Traits.StatementLabels), transaction
	// by transaction, each multi-statement one's COMMIT last; first is each transaction's first
	// index into labels.
	labels []string
	first  []int
}

func newFileWorkload(f *File, scale int64) (*fileWorkload, error) {
	w := &fileWorkload{f: f, rows: map[string]int64{}}
	for _, t := range f.Tables {
		w.rows[t.Name] = t.Rows * scale
	}
	for _, t := range f.Tables {
		for _, c := range t.Columns {
			w.resolve(c.Gen)
		}
	}
	for _, tx := range f.Transactions {
		w.kinds = append(w.kinds, tx.Name)
		for _, g := range tx.Params {
			w.resolve(g)
		}
		w.first = append(w.first, len(w.labels))
		for i, st := range tx.Statements {
			w.labels = append(w.labels, fmt.Sprintf("%s #%d: %s", tx.Name, i+1, short(st.forms()[0].SQL)))
		}
		if explicit(tx) {
			w.labels = append(w.labels, tx.Name+": COMMIT")
		}
	}
	return w, nil
}

// Traits: the file's transactions counted apart, its statements timed apart (pgbench -r), its
// size at the least, whether it only reads, and the user's tables where it runs on them.
func (w *fileWorkload) Traits() workload.Traits {
	return workload.Traits{TransactionKinds: w.kinds, StatementLabels: w.labels, MinDataBytes: w.minDataBytes(),
		ReadOnly: w.readsOnly(), ExistingTables: w.existingTables()}
}

// resolve gives ref and next the key range of the sequence they name, at this scale. next
// starts above the loaded keys and is shared by every worker, so no two INSERTs draw one key.
func (w *fileWorkload) resolve(g *Gen) {
	if g == nil || (g.Kind != "ref" && g.Kind != "next") {
		return
	}
	tn, cn, _ := strings.Cut(g.Ref, ".")
	seq := w.f.table(tn).column(cn).Gen
	n := w.rows[tn]
	g.Min, g.Max = seq.Min, seq.Min+max(n, 1)-1
	if g.Kind == "next" {
		g.next = &atomic.Int64{}
		g.next.Store(seq.Min + n - 1)
	}
}

func (w *fileWorkload) tableNames() []string {
	out := make([]string, len(w.f.Tables))
	for i, t := range w.f.Tables {
		out[i] = t.Name
	}
	return out
}

// existingTables lists the file's tables where they are the user's (existing_tables: true), which
// fairbench neither creates nor drops; nil where fairbench creates them.
func (w *fileWorkload) existingTables() []string {
	if !w.f.Existing {
		return nil
	}
	return w.tableNames()
}

// readsOnly says whether every statement of the file only reads.
func (w *fileWorkload) readsOnly() bool {
	for _, tx := range w.f.Transactions {
		for _, st := range tx.Statements {
			for _, form := range st.forms() {
				if form.Kind != "read" {
					return false
				}
			}
		}
	}
	return true
}

// Cleanup drops the file's tables that fairbench created, children first.
func (w *fileWorkload) Cleanup(ctx context.Context, env *workload.Env) error {
	c, err := env.Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	return workload.DropOwned(ctx, c, w.tableNames())
}

// Check verifies the data as Verdicts does, returning the first condition that failed.
func (w *fileWorkload) Check(ctx context.Context, env *workload.Env) error {
	vs, err := w.Verdicts(ctx, env)
	return workload.CheckFromVerdicts("the workload file's checks", vs, err)
}

// Verdicts are the file's data check: every table still holds at least the rows it was loaded
// with (transactions may add rows; a table with fewer lost some), where fairbench loaded them,
// and each of the file's checks holds.
func (w *fileWorkload) Verdicts(ctx context.Context, env *workload.Env) ([]workload.Verdict, error) {
	c, err := env.Connect(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if err := w.guard(ctx, c); err != nil {
		return nil, err
	}
	var out []workload.Verdict
	if !w.f.Existing {
		v := workload.Verdict{Name: "rows kept", OK: true, Detail: "every table holds at least the rows it was loaded with"}
		if err := w.countRows(ctx, c); err != nil {
			var np *workload.NotPreparedError
			if errors.As(err, &np) || ctx.Err() != nil {
				return nil, err
			}
			v.OK, v.Detail = false, err.Error()
		}
		out = append(out, v)
	}
	for _, ck := range w.f.Checks {
		out = append(out, runCheck(ctx, c, ck))
	}
	return out, nil
}

func (w *fileWorkload) countRows(ctx context.Context, c sqldb.Conn) error {
	for _, t := range w.f.Tables {
		rows, err := c.Query(ctx, "SELECT count(*) FROM "+t.Name)
		if err != nil {
			return w.missing(err, t.Name)
		}
		n, _ := strconv.ParseInt(rows[0][0], 10, 64)
		if n < w.rows[t.Name] && !w.deletes(t.Name) {
			return fmt.Errorf("table %s holds %d rows, fewer than the %d loaded, and no transaction deletes from it", t.Name, n, w.rows[t.Name])
		}
	}
	return nil
}

// runCheck runs one of the file's checks in the engine's form: its one value must equal the
// file's, compared as the answer checks compare values (booleans as 1/0).
func runCheck(ctx context.Context, c sqldb.Conn, ck *Check) workload.Verdict {
	v := workload.Verdict{Name: ck.Name}
	form := ck.Query.On(c.Kind())
	rows, err := c.Query(ctx, form.Text)
	switch {
	case err != nil:
		v.Detail = fmt.Sprintf("%s failed: %s", short(form.SQL), firstLine(err.Error()))
	case len(rows) != 1 || len(rows[0]) != 1:
		v.Detail = fmt.Sprintf("%s returned %d rows: a check must return one value", short(form.SQL), len(rows))
	case canonicalValue(rows[0][0]) != ck.Equals:
		v.Detail = fmt.Sprintf("%s returned %s, not %s", short(form.SQL), rows[0][0], ck.Equals)
	default:
		v.OK, v.Detail = true, short(form.SQL)+" = "+ck.Equals
	}
	return v
}

// deletes says whether a transaction deletes from the table.
func (w *fileWorkload) deletes(table string) bool {
	for _, tx := range w.f.Transactions {
		for _, st := range tx.Statements {
			up := strings.ToUpper(st.Text)
			if strings.HasPrefix(up, "DELETE") && strings.Contains(strings.ToLower(st.Text), table) {
				return true
			}
		}
	}
	return false
}

func (w *fileWorkload) missing(err error, table string) error {
	if sqldb.IsUndefinedTable(err) {
		return &workload.NotPreparedError{Workload: w.f.Path, Detail: "table " + table + " not found"}
	}
	return err
}

// explicit says whether a transaction runs in BEGIN ... COMMIT: when it has several statements,
// or one whose expected count, when missed, must be undone.
func explicit(tx *Transaction) bool {
	if len(tx.Statements) > 1 {
		return true
	}
	st := tx.Statements[0]
	return st.Expect.Expecting() && st.Kind != "read"
}

// worker runs the file's transactions on one connection, its statements prepared once.
type worker struct {
	w     *fileWorkload
	conn  sqldb.Conn
	rng   *randgen.Rand
	kind  int   // the transaction in flight, which its retries run again
	cum   []int // cumulative weights of the transactions
	stmts [][]sqldb.Stmt
	args  []any
	// values are this transaction's parameters (bound.gens order, drawn once for all its
	// statements), then the values its statements set with into.
	values []any
	bound  []boundTx
	// level is the session's isolation level now, and defaultLevel the engine's (the profile's),
	// which a transaction without its own runs at; both "" when no transaction sets one.
	level, defaultLevel string
}

// boundTx is a transaction on one engine: its parameters in a fixed order, then its into names,
// and each statement's arguments and into columns as indexes into them, so a transaction draws
// and binds without a map.
type boundTx struct {
	gens  []*Gen
	args  [][]int
	into  [][]int
	forms []*Statement
	slots int
}

func bind(tx *Transaction, kind sqldb.Kind) boundTx {
	var b boundTx
	index := map[string]int{}
	for _, name := range slices.Sorted(maps.Keys(tx.Params)) {
		index[name] = len(b.gens)
		b.gens = append(b.gens, tx.Params[name])
	}
	b.slots = len(b.gens)
	for _, st := range tx.Statements {
		form := st.On(kind)
		b.forms = append(b.forms, form)
		idx := make([]int, len(form.Params))
		for i, p := range form.Params {
			idx[i] = index[p]
		}
		b.args = append(b.args, idx)
		var into []int
		for _, name := range st.Into {
			index[name] = b.slots
			into = append(into, b.slots)
			b.slots++
		}
		b.into = append(b.into, into)
	}
	return b
}

// NewWorker prepares every statement of every transaction on conn, in the engine's own form
// where the file gives one.
func (w *fileWorkload) NewWorker(ctx context.Context, conn sqldb.Conn, rng *randgen.Rand, thread, threads int) (workload.Worker, error) {
	wk := &worker{w: w, conn: conn, rng: rng}
	if err := w.guard(ctx, conn); err != nil {
		return nil, err
	}
	if err := wk.readIsolation(ctx); err != nil {
		return nil, err
	}
	sum := 0
	for _, tx := range w.f.Transactions {
		sum += tx.Weight
		wk.cum = append(wk.cum, sum)
		b := bind(tx, conn.Kind())
		wk.bound = append(wk.bound, b)
		var sts []sqldb.Stmt
		for _, s := range b.forms {
			st, err := conn.Prepare(ctx, s.Text)
			if err != nil {
				if refused := w.refusedWrite(err); refused != nil {
					return nil, fmt.Errorf("transaction %s: %w", tx.Name, refused)
				}
				if sqldb.IsUndefinedTable(err) {
					return nil, w.missing(err, "of "+w.f.Name)
				}
				return nil, fmt.Errorf("transaction %s: preparing %q on %s: %w", tx.Name, short(s.SQL), conn.Kind(), err)
			}
			sts = append(sts, st)
		}
		wk.stmts = append(wk.stmts, sts)
	}
	return wk, nil
}

// readIsolation learns the session's isolation level, which transactions without a level of
// their own return to, where any transaction sets one.
func (wk *worker) readIsolation(ctx context.Context) error {
	if !slices.ContainsFunc(wk.w.f.Transactions, func(tx *Transaction) bool { return tx.Isolation != "" }) {
		return nil
	}
	rows, err := wk.conn.Query(ctx, dialect.Of(wk.conn).IsolationQuery())
	if err != nil || len(rows) == 0 {
		return fmt.Errorf("reading the session's isolation level on %s: %w", wk.conn.Kind(), err)
	}
	row := rows[0]
	wk.defaultLevel = strings.ToUpper(strings.ReplaceAll(row[len(row)-1], "-", " "))
	wk.level = wk.defaultLevel
	return nil
}

// Transaction runs one transaction, chosen by weight: after its think time, at its isolation
// level, its statements in BEGIN/COMMIT when there are several, alone in autocommit when there is
// one (as pgbench and sysbench run a one-statement transaction). A retry (q.Retry) runs the same
// kind of transaction again, without its think time; its values are drawn afresh: a duplicate
// key drawn once would be drawn again by a replay of the same values, every try.
func (wk *worker) Transaction(ctx context.Context, q *workload.Txn) error {
	if !q.Retry {
		wk.kind = wk.pick()
	}
	k := wk.kind
	q.Kind = k
	tx, b := wk.w.f.Transactions[k], &wk.bound[k]
	if !q.Retry && tx.ThinkMax > 0 {
		q.Paused += wk.think(ctx, tx)
	}
	if err := wk.isolate(ctx, tx); err != nil {
		return err
	}
	wk.values = wk.values[:0]
	for _, g := range b.gens {
		wk.values = append(wk.values, g.Value(wk.rng))
	}
	for len(wk.values) < b.slots {
		wk.values = append(wk.values, nil)
	}
	multi := explicit(tx)
	if multi {
		if err := wk.conn.Exec(ctx, "BEGIN"); err != nil {
			return err
		}
	}
	first := wk.w.first[k]
	for i := range tx.Statements {
		if st := tx.Statements[i]; !st.Always() && wk.rng.Float64() >= st.Chance {
			continue
		}
		began := time.Now()
		err := wk.statement(ctx, tx.Statements[i], b, i, wk.stmts[k][i])
		q.Times.Add(first+i, time.Since(began), err != nil)
		if err != nil {
			return fmt.Errorf("transaction %s, statement %d: %w", tx.Name, i+1, err)
		}
	}
	if multi {
		began := time.Now()
		err := wk.conn.Exec(ctx, "COMMIT")
		q.Times.Add(first+len(tx.Statements), time.Since(began), err != nil)
		return err
	}
	return nil
}

func (wk *worker) pick() int {
	x := int(wk.rng.Float64() * float64(wk.cum[len(wk.cum)-1]))
	k := 0
	for k < len(wk.cum)-1 && x >= wk.cum[k] {
		k++
	}
	return k
}

// think pauses for the transaction's think time, or until the run is stopped, and returns the
// time paused.
func (wk *worker) think(ctx context.Context, tx *Transaction) time.Duration {
	d := tx.ThinkMin + time.Duration(wk.rng.Float64()*float64(tx.ThinkMax-tx.ThinkMin))
	began := time.Now()
	_ = workload.Pause(ctx, d) // a stopped run ends the pause; the transaction then sees ctx
	return time.Since(began)
}

// isolate sets the session to the transaction's isolation level where it is at another: one
// statement per change, the same on every engine.
func (wk *worker) isolate(ctx context.Context, tx *Transaction) error {
	want := cmp.Or(tx.Isolation, wk.defaultLevel)
	if want == wk.level {
		return nil
	}
	if err := wk.conn.Exec(ctx, dialect.Of(wk.conn).Isolation(want)); err != nil {
		return fmt.Errorf("setting isolation level %s for transaction %s: %w", want, tx.Name, err)
	}
	wk.level = want
	return nil
}

// statement runs statement i of the transaction with its arguments, keeps the values it sets
// with into, and checks the rows it returned or changed against its expected count.
func (wk *worker) statement(ctx context.Context, s *Statement, b *boundTx, i int, st sqldb.Stmt) error {
	wk.args = wk.args[:0]
	for _, a := range b.args[i] {
		wk.args = append(wk.args, wk.values[a])
	}
	var n int64
	var err error
	switch {
	case len(s.Into) > 0:
		n, err = wk.into(ctx, s, b.into[i], st)
	case s.Kind == "read":
		n, err = st.Query(ctx, wk.args...)
	default:
		n, err = st.Exec(ctx, wk.args...)
	}
	if s.Kind == "read" {
	} else if s.Kind == "write" {
	} else {
	}
	if refused := wk.w.refusedWrite(err); refused != nil {
		return refused
	}
	if (err == nil || errors.Is(err, errNoRow)) && s.Expect.Expecting() && n != s.Expect.Rows {
		return fmt.Errorf("%w: %s %d rows, expected %d", workload.ErrRolledBack, verbOf(s), n, s.Expect.Rows)
	}
	return err
}

// errNoRow is a statement with into: that returned no row to set its names from.
var errNoRow = errors.New("returned no row")

// into runs a statement whose first row's columns become parameters of the statements after it.
func (wk *worker) into(ctx context.Context, s *Statement, slots []int, st sqldb.Stmt) (int64, error) {
	_, row, n, err := st.FirstRow(ctx, wk.args...)
	if err != nil {
		return n, err
	}
	if n == 0 {
		return 0, fmt.Errorf("%w, and into: sets :%s from its first", errNoRow, strings.Join(s.Into, ", :"))
	}
	if len(row) < len(slots) {
		return n, fmt.Errorf("returned %d columns, and into: names %d", len(row), len(slots))
	}
	for k, slot := range slots {
		if row[k] == nil {
			wk.values[slot] = nil
		} else {
			wk.values[slot] = *row[k]
		}
	}
	return n, nil
}

func verbOf(s *Statement) string {
	if s.Kind == "read" {
		return "returned"
	}
	return "changed"
}
