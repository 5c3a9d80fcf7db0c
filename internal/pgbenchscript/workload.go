package pgbenchscript

import (
	"cmp"
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/fairbench/fairbench/internal/inputfile"
	"github.com/fairbench/fairbench/internal/randgen"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/workload"
	_ "github.com/fairbench/fairbench/internal/workload/tpcb" // pgbench's tables
)

// Name is the workload's name: pgbench's scripts on pgbench's tables.
const Name = "pgbench"

// maxScriptBytes bounds a script file: scripts are a few lines; anything larger is a mistake.
const maxScriptBytes = 1 << 20

func init() {
	workload.Register(workload.Spec{
		Name: Name,
		Description: "pgbench scripts as they are (pgbench -f FILE@W, -b tpcb-like|simple-update|select-only) on pgbench's " +
			"tables, run alike on every engine: \\set, \\sleep, \\if, \\gset and :variables",
		Options: []workload.Option{
			{Name: "script", Default: "tpcb-like", Help: "comma list of scripts, each a file or a built-in (tpcb-like, simple-update, select-only) with an optional @weight, as pgbench -f/-b take them: tpcb-like@9,mine.sql@1"},
			{Name: "scale", Default: "1", Help: "pgbench scale factor: 1 branch, 10 tellers and 100,000 accounts per unit (pgbench -s); :scale in the scripts"},
			{Name: "fillfactor", Default: "100", Help: "fillfactor of pgbench_branches, _tellers and _accounts on PostgreSQL (pgbench -F); ignored on MySQL/MariaDB"},
		},
		// The same tables as the tpcb workload, so a suite prepares them once for both.
		Dataset:     "pgbench",
		DataOptions: []string{"scale", "fillfactor"},
		New:         newWorkload,
	})
}

type scripts struct {
	workload.Workload // the tpcb workload: pgbench's tables, prepared as pgbench -i does
	list              []*Script
	total             int
	scale             int64
	tpcbOnly          bool
	// labels name each SQL command of every script for its latency (pgbench -r); index maps a
	// script's command to its label, -1 for meta-commands.
	labels []string
	index  [][]int
}

func newWorkload(o workload.Options) (workload.Workload, error) {
	tables, err := workload.Lookup("tpcb")
	if err != nil {
		return nil, err
	}
	base, err := tables.New(o)
	if err != nil {
		return nil, err
	}
	w := &scripts{Workload: base, tpcbOnly: true}
	if w.scale, err = strconv.ParseInt(o["scale"], 10, 64); err != nil {
		return nil, fmt.Errorf("--scale %q: give a whole number", o["scale"])
	}
	for _, arg := range strings.Split(o["script"], ",") {
		s, err := Load(strings.TrimSpace(arg))
		if err != nil {
			return nil, err
		}
		w.list = append(w.list, s)
		w.total += s.Weight
		w.tpcbOnly = w.tpcbOnly && s.Name == "tpcb-like"
	}
	if w.total == 0 {
		return nil, fmt.Errorf("--script %q: every weight is 0, so no script would run; give one a weight of 1 or more", o["script"])
	}
	w.labelCommands()
	return w, nil
}

// labelCommands names every SQL command "script:line: text", as pgbench -r lists them.
func (w *scripts) labelCommands() {
	for _, s := range w.list {
		idx := make([]int, len(s.Commands))
		for pc, c := range s.Commands {
			idx[pc] = -1
			if c.Kind == SQL {
				idx[pc] = len(w.labels)
				w.labels = append(w.labels, fmt.Sprintf("%s:%d: %s", s.Name, c.Line, workload.ShortSQL(cmp.Or(c.Control, c.SQL))))
			}
		}
		w.index = append(w.index, idx)
	}
}

// Traits: each script counted apart, as pgbench's per-script report does, and the scripts' SQL
// commands timed apart (-r).
func (w *scripts) Traits() workload.Traits {
	return workload.Traits{TransactionKinds: w.scriptNames(), StatementLabels: w.labels}
}

// Load reads "NAME[@WEIGHT]": a built-in script, else a file.
func Load(arg string) (*Script, error) {
	name, weight, err := ParseWeighted(arg)
	if err != nil {
		return nil, err
	}
	text, full, ok := Builtin(name)
	if !ok {
		b, err := inputfile.Read(name, maxScriptBytes)
		if err != nil {
			return nil, fmt.Errorf("script %s: %w (give a file, or a built-in: %s)", name, err, strings.Join(BuiltinNames(), ", "))
		}
		text, full = string(b), name
	}
	s, err := Parse(full, text)
	if err != nil {
		return nil, err
	}
	s.Weight = weight
	return s, nil
}

// scriptNames names each script.
func (w *scripts) scriptNames() []string {
	out := make([]string, len(w.list))
	for i, s := range w.list {
		out[i] = s.Name
	}
	return out
}

// Check is the tpcb workload's balance check when every script is tpcb-like, whose
// transactions keep the four sums equal; another script's changes have no invariant fairbench
// knows, so its data is not checked.
func (w *scripts) Check(ctx context.Context, env *workload.Env) error {
	if !w.tpcbOnly {
		return nil
	}
	return w.Workload.Check(ctx, env)
}

// NewWorker prepares every SQL command of every script on the thread's connection.
func (w *scripts) NewWorker(ctx context.Context, conn sqldb.Conn, rng *randgen.Rand, thread, threads int) (workload.Worker, error) {
	// The tpcb worker of the first thread checks that the tables are there and match --scale,
	// as pgbench does before it starts.
	if thread == 0 {
		if _, err := w.Workload.NewWorker(ctx, conn, rng, thread, threads); err != nil {
			return nil, err
		}
	}
	wk := &worker{conn: conn, w: w, st: state{rng: rng, defaultSeed: rng.Uint64(), vars: map[string]value{
		"scale": intOf(w.scale), "client_id": intOf(int64(thread)),
	}}}
	wk.st.vars["default_seed"] = intOf(int64(wk.st.defaultSeed))
	wk.st.vars["random_seed"] = intOf(int64(rng.Uint64()))
	for _, s := range w.list {
		stmts := make([]sqldb.Stmt, len(s.Commands))
		for i, c := range s.Commands {
			if c.Kind != SQL || c.Control != "" {
				continue
			}
			st, err := conn.Prepare(ctx, c.SQL)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %w", s.Name, c.Line, err)
			}
			stmts[i] = st
		}
		wk.stmts = append(wk.stmts, stmts)
	}
	return wk, nil
}

// state is a client's variables and random source, kept across its transactions as pgbench
// keeps a client's.
type state struct {
	vars        map[string]value
	rng         *randgen.Rand
	defaultSeed uint64
}

type worker struct {
	conn  sqldb.Conn
	w     *scripts
	st    state
	stmts [][]sqldb.Stmt // per script, per command (nil for meta-commands and BEGIN/COMMIT)
	args  []any          // reused for every statement's parameters: no allocation per statement
	kind  int            // the script in flight, which its retries run again
}

// Transaction runs one script, chosen by weight as pgbench chooses, from its first command to
// its last. A retry (q.Retry) runs the same script again, as pgbench's --max-tries does; its
// \set values are drawn afresh (pgbench replays them; it never retries a duplicate key, which a
// replay would repeat).
func (wk *worker) Transaction(ctx context.Context, q *workload.Txn) error {
	if !q.Retry {
		wk.kind = wk.pick()
	}
	k := wk.kind
	q.Kind = k
	s := wk.w.list[k]
	for pc := 0; pc < len(s.Commands); {
		next, err := wk.step(ctx, k, pc, q)
		if err != nil {
			return fmt.Errorf("%s:%d: %w", s.Name, s.Commands[pc].Line, err)
		}
		pc = next
	}
	return nil
}

func (wk *worker) pick() int {
	x := uniform(wk.st.rng, 0, int64(wk.w.total-1))
	for i, s := range wk.w.list {
		if x < int64(s.Weight) {
			return i
		}
		x -= int64(s.Weight)
	}
	return len(wk.w.list) - 1
}

// step runs command pc of script k and says which runs next.
func (wk *worker) step(ctx context.Context, k, pc int, q *workload.Txn) (int, error) {
	cmds := wk.w.list[k].Commands
	c := &cmds[pc]
	switch c.Kind {
	case SQL:
		began := time.Now()
		err := wk.sql(ctx, c, wk.stmts[k][pc])
		q.Times.Add(wk.w.index[k][pc], time.Since(began), err != nil)
		return pc + 1, err
	case Set:
		v, err := c.Expr.eval(&wk.st)
		wk.st.vars[c.Var] = v
		return pc + 1, err
	case Sleep:
		return pc + 1, wk.sleep(ctx, c)
	case If:
		return wk.branch(cmds, pc)
	case Elif, Else:
		return c.End + 1, nil // a branch before this one ran
	}
	return pc + 1, nil // \endif
}

// branch evaluates the conditions from pc on until one holds (or \else, or \endif) and gives
// the first command of the branch that runs.
func (wk *worker) branch(cmds []Command, pc int) (int, error) {
	for {
		c := &cmds[pc]
		switch c.Kind {
		case If, Elif:
			v, err := c.Expr.eval(&wk.st)
			if err != nil {
				return 0, err
			}
			ok, err := v.truthy()
			if err != nil || ok {
				return pc + 1, err
			}
			pc = c.Jump
		default: // \else or \endif
			return pc + 1, nil
		}
	}
}

func (wk *worker) sleep(ctx context.Context, c *Command) error {
	v, err := c.Expr.eval(&wk.st)
	if err != nil {
		return err
	}
	n, err := v.asInt()
	if err != nil || n <= 0 {
		return err
	}
	return workload.Pause(ctx, time.Duration(n)*c.Unit)
}

// sql sends one SQL command with its variables bound as parameters, and keeps a \gset row.
func (wk *worker) sql(ctx context.Context, c *Command, st sqldb.Stmt) error {
	if c.Control != "" {
		return wk.conn.Exec(ctx, c.Control)
	}
	args := wk.args[:0]
	for _, name := range c.Vars {
		v, ok := wk.st.vars[name]
		if !ok {
			return fmt.Errorf("undefined variable :%s", name)
		}
		args = append(args, v.param())
	}
	wk.args = args
	if !c.Gset {
		if c.Class == sqldb.Read {
			_, err := st.Query(ctx, args...)
			return err
		}
		_, err := st.Exec(ctx, args...)
		return err
	}
	names, row, n, err := st.FirstRow(ctx, args...)
	if err != nil {
		return err
	}
	if n != 1 {
		return fmt.Errorf(`\gset: the query returned %d rows, it must return exactly one`, n)
	}
	for i, name := range names {
		v := value{}
		if row[i] != nil {
			v = value{kind: stringValue, s: *row[i]}
		}
		wk.st.vars[c.Prefix+name] = v
	}
	return nil
}
