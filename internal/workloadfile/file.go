// Package workloadfile is a user's own workload, from a YAML file: tables with portable column
// types, the rows to load (a generator per column, deterministic by seed, so every engine loads
// the same data), and weighted transactions of SQL statements with named parameters. It runs
// wherever a built-in workload does (--workload FILE.yaml, a suite step), through the same loaders,
// runner and checks. docs/workload-files.md is the reference.
//
// The model is BenchBase's templated benchmark and pgbench's custom scripts: the schema and the
// statements are the user's; fairbench owns the data generation, the timing and the counting.
package workloadfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/fairbench/fairbench/internal/inputfile"
	"github.com/fairbench/fairbench/internal/sqldb"
)

// MaxFileBytes bounds a workload file: a schema and statements, not data.
const MaxFileBytes = 1 << 20

// File is a parsed, checked workload file.
type File struct {
	Path         string
	Name         string
	Description  string
	Tables       []*Table
	Transactions []*Transaction
	// Checks are SQL conditions that must hold after every run, on every engine.
	Checks []*Check
	// Existing is `existing_tables: true`: the tables are the user's, already in the target
	// database. fairbench creates, loads, checks and drops none of them, and runs transactions
	// that write only with --write-existing-tables on.
	Existing bool
}

// Table is one table: its columns, keys and how many rows to load (times --scale).
type Table struct {
	Name       string
	Rows       int64
	Columns    []*Column
	PrimaryKey []string
	// NoPrimaryKey is `primary_key: []`: a table kept as its source has it, without one (InnoDB
	// then clusters rows by a hidden row id; PostgreSQL's heap never depends on a key).
	NoPrimaryKey bool
	Indexes      [][]string
	ForeignKeys  []*ForeignKey
	at           pos
}

// Column is a column with a portable type and the generator of its values.
type Column struct {
	Name          string
	Type          string // one of dialect.Types
	Length, Scale int    // varchar(Length), decimal(Length, Scale)
	Gen           *Gen
	Null          float64 // share of rows that are NULL
	at            pos
}

// ForeignKey is columns that reference another table's key.
type ForeignKey struct {
	Columns    []string
	RefTable   string
	RefColumns []string
	at         pos
}

// Transaction is one kind of transaction: its statements run in order, in one database
// transaction when there are several, with parameters drawn afresh each time.
type Transaction struct {
	Name       string
	Weight     int
	Params     map[string]*Gen
	Statements []*Statement
	// Isolation is the level the transaction runs at ("SERIALIZABLE"); "" is the engine's
	// default, the fairness profile's.
	Isolation string
	// ThinkMin and ThinkMax bound the pause before each transaction (a user reading the last
	// page), drawn uniformly; it is left out of the latency, as TPC-C's think time is.
	ThinkMin, ThinkMax time.Duration
	// Source is, for a captured transaction, its share of the source server's calls and server
	// time in percent (`source: {calls: 16.6, time: 12.0}`), which the report sets beside the
	// replay's; nil for one written by hand.
	Source *Source
	at     pos
}

// Check is an invariant: a query whose one value must equal Equals after a run (`SELECT count(*)
// FROM products WHERE stock < 0` equals 0), in each engine's own form where the file gives one.
type Check struct {
	Name   string
	Query  *Statement
	Equals string
	at     pos
}

// Source is a captured transaction's share of its source server's workload, in percent.
type Source struct{ Calls, Time float64 }

// pos is where something stands in the file, for messages.
type pos struct{ line, col int }

// Error is a problem in a workload file: where, what, and how to fix it.
type Error struct {
	Path      string
	Line, Col int
	Msg       string
}

// Error is one line: a name from the file may hold a line break (a folded YAML scalar), written
// as \n.
func (e *Error) Error() string {
	msg := strings.ReplaceAll(e.Msg, "\n", `\n`)
	if e.Line == 0 {
		return fmt.Sprintf("%s: %s", e.Path, msg)
	}
	return fmt.Sprintf("%s:%d:%d: %s", e.Path, e.Line, e.Col, msg)
}

// Load reads and checks a workload file.
func Load(path string) (*File, error) {
	data, err := inputfile.Read(path, MaxFileBytes)
	if err != nil {
		var big *inputfile.TooLargeError
		if errors.As(err, &big) {
			return nil, &Error{Path: path, Msg: "larger than 1 MiB: a workload file holds a schema and statements; its rows come from generators"}
		}
		return nil, &Error{Path: path, Msg: fmt.Sprintf("cannot be read (%v): give the path of a workload YAML file", unwrapPath(err))}
	}
	return Parse(data, path)
}

// Parse reads a workload file's YAML and checks it: every error is one line naming the file,
// line and column, the problem and the fix.
func Parse(data []byte, path string) (*File, error) {
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&root); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &Error{Path: path, Msg: "is empty: write name:, tables: and transactions: (see docs/workload-files.md)"}
		}
		return nil, &Error{Path: path, Msg: "is not valid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	p := &parser{path: path}
	f := p.file(&root)
	if p.err != nil {
		return nil, p.err
	}
	f.Path = path
	if err := check(f, path); err != nil {
		return nil, err
	}
	return f, nil
}

// parser walks the YAML tree, keeping the first error.
type parser struct {
	path string
	err  error
	// existing is the file's existing_tables: its tables are named only.
	existing bool
}

func (p *parser) fail(n *yaml.Node, format string, args ...any) {
	if p.err == nil {
		p.err = &Error{Path: p.path, Line: n.Line, Col: n.Column, Msg: fmt.Sprintf(format, args...)}
	}
}

// fields checks that n is a mapping of known keys and returns them by name.
func (p *parser) fields(n *yaml.Node, what string, known ...string) map[string]*yaml.Node {
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	if n.Kind != yaml.MappingNode {
		p.fail(n, "%s must be a mapping of %s", what, strings.Join(known, ", "))
		return nil
	}
	out := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if !slices.Contains(known, k.Value) {
			p.fail(k, "%s has no key %q: use %s", what, k.Value, strings.Join(known, ", "))
			return nil
		}
		if _, dup := out[k.Value]; dup {
			p.fail(k, "%s gives %q twice: keep one", what, k.Value)
			return nil
		}
		out[k.Value] = n.Content[i+1]
	}
	return out
}

func (p *parser) str(n *yaml.Node, what string) string {
	if n == nil {
		return ""
	}
	if n.Kind != yaml.ScalarNode {
		p.fail(n, "%s must be a single value", what)
		return ""
	}
	return n.Value
}

func (p *parser) int(n *yaml.Node, what string, min, max int64) int64 {
	var v int64
	// yaml.v3 decodes 0.5 into an int64 as 0 without an error: a float is taken only when it is
	// whole (1e6), and a fraction refused.
	var f float64
	switch {
	case n == nil || n.Kind != yaml.ScalarNode:
		p.fail(orAt(n), "%s must be a whole number", what)
		return 0
	case n.Tag == "!!float":
		if n.Decode(&f) != nil || f != math.Trunc(f) || math.Abs(f) > 1<<62 {
			p.fail(n, "%s must be a whole number", what)
			return 0
		}
		v = int64(f)
	case n.Decode(&v) != nil:
		p.fail(n, "%s must be a whole number", what)
		return 0
	}
	if v < min || v > max {
		p.fail(n, "%s is %d: use a number from %d to %d", what, v, min, max)
	}
	return v
}

func (p *parser) float(n *yaml.Node, what string, min, max float64) float64 {
	var v float64
	if n == nil || n.Kind != yaml.ScalarNode || n.Decode(&v) != nil || v != v {
		p.fail(orAt(n), "%s must be a number", what)
		return 0
	}
	if v < min || v > max {
		p.fail(n, "%s is %g: use a number from %g to %g", what, v, min, max)
	}
	return v
}

func (p *parser) list(n *yaml.Node, what string) []*yaml.Node {
	if n == nil {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		p.fail(n, "%s must be a list", what)
		return nil
	}
	return n.Content
}

func (p *parser) names(n *yaml.Node, what string) []string {
	var out []string
	for _, c := range p.list(n, what) {
		out = append(out, p.str(c, what))
	}
	return out
}

// orAt is n, or a zero node (no position) where n is missing.
func orAt(n *yaml.Node) *yaml.Node {
	if n == nil {
		return &yaml.Node{}
	}
	return n
}

func (p *parser) file(root *yaml.Node) *File {
	f := &File{}
	m := p.fields(root, "the workload file", "name", "description", "existing_tables", "tables", "transactions", "checks")
	if m == nil {
		return f
	}
	f.Name = p.str(m["name"], "name")
	if e := m["existing_tables"]; e != nil {
		if e.Kind != yaml.ScalarNode || e.Decode(&f.Existing) != nil {
			p.fail(e, "existing_tables must be true or false")
		}
		p.existing = f.Existing
	}
	f.Description = strings.TrimSpace(p.str(m["description"], "description"))
	for _, t := range p.list(m["tables"], "tables") {
		f.Tables = append(f.Tables, p.table(t))
	}
	for _, t := range p.list(m["transactions"], "transactions") {
		f.Transactions = append(f.Transactions, p.transaction(t))
	}
	for _, c := range p.list(m["checks"], "checks") {
		f.Checks = append(f.Checks, p.check(c))
	}
	return f
}

// check reads `{name: no_negative_stock, sql: SELECT count(*) ..., equals: 0}`, with engines'
// own forms as a statement has them.
func (p *parser) check(n *yaml.Node) *Check {
	c := &Check{at: pos{n.Line, n.Column}, Query: &Statement{at: pos{n.Line, n.Column}, Expect: Expect{Rows: -1}}}
	keys := []string{"name", "sql", "equals"}
	for _, k := range engineKinds {
		keys = append(keys, string(k))
	}
	m := p.fields(n, "a check", keys...)
	if m == nil {
		return c
	}
	c.Name = p.str(m["name"], "a check's name")
	c.Query.SQL = strings.TrimSpace(p.str(m["sql"], "check "+c.Name+"'s sql"))
	p.engineForms(c.Query, m)
	if m["equals"] == nil {
		p.fail(n, "check %s has no equals: give the value its query must return, e.g. equals: 0", c.Name)
		return c
	}
	c.Equals = canonicalValue(p.str(m["equals"], "check "+c.Name+"'s equals"))
	return c
}

// engineForms reads a statement's postgres:, mysql: and mariadb: forms.
func (p *parser) engineForms(st *Statement, m map[string]*yaml.Node) {
	for _, k := range engineKinds {
		if e := m[string(k)]; e != nil {
			if st.Engines == nil {
				st.Engines = map[sqldb.Kind]*Statement{}
			}
			st.Engines[k] = &Statement{SQL: strings.TrimSpace(p.str(e, "a statement's "+string(k)+" form")), at: pos{e.Line, e.Column}}
		}
	}
}

func (p *parser) table(n *yaml.Node) *Table {
	t := &Table{at: pos{n.Line, n.Column}}
	m := p.fields(n, "a table", "name", "rows", "columns", "primary_key", "indexes", "foreign_keys")
	if m == nil {
		return t
	}
	t.Name = p.str(m["name"], "a table's name")
	if m["rows"] != nil || !p.existing {
		t.Rows = p.int(m["rows"], "table "+t.Name+"'s rows", 0, 1<<40)
	}
	for _, c := range p.list(m["columns"], "columns") {
		t.Columns = append(t.Columns, p.column(c, t.Name))
	}
	t.PrimaryKey = p.names(m["primary_key"], "primary_key")
	t.NoPrimaryKey = m["primary_key"] != nil && len(t.PrimaryKey) == 0
	for _, ix := range p.list(m["indexes"], "indexes") {
		t.Indexes = append(t.Indexes, p.names(ix, "an index (a list of columns)"))
	}
	for _, fk := range p.list(m["foreign_keys"], "foreign_keys") {
		t.ForeignKeys = append(t.ForeignKeys, p.foreignKey(fk))
	}
	return t
}

func (p *parser) column(n *yaml.Node, table string) *Column {
	c := &Column{at: pos{n.Line, n.Column}}
	m := p.fields(n, "a column", "name", "type", "gen", "null")
	if m == nil {
		return c
	}
	c.Name = p.str(m["name"], "a column's name")
	what := "column " + table + "." + c.Name
	p.columnType(c, m["type"], what)
	if m["gen"] == nil {
		p.fail(n, "%s has no gen: give its values' generator, e.g. gen: {sequence: 1} or gen: {uniform: [1, 100]}", what)
		return c
	}
	c.Gen = p.gen(m["gen"], what)
	if m["null"] != nil {
		c.Null = p.float(m["null"], what+"'s null", 0, 1)
	}
	return c
}

// columnType reads "bigint", "varchar(40)", "decimal(12,2)".
func (p *parser) columnType(c *Column, n *yaml.Node, what string) {
	s := strings.ToLower(strings.ReplaceAll(p.str(n, what+"'s type"), " ", ""))
	base, args, hasArgs := strings.Cut(s, "(")
	c.Type = base
	switch {
	case n == nil:
		p.fail(orAt(n), "%s has no type", what)
	case base == "varchar" && hasArgs:
		_, err := fmt.Sscanf(args, "%d)", &c.Length)
		if err != nil || c.Length < 1 || c.Length > 16383 {
			p.fail(n, "%s: varchar needs a length from 1 to 16383, e.g. varchar(40)", what)
		}
	case base == "decimal" && hasArgs:
		_, err := fmt.Sscanf(args, "%d,%d)", &c.Length, &c.Scale)
		if err != nil || c.Length < 1 || c.Length > 38 || c.Scale < 0 || c.Scale > c.Length {
			p.fail(n, "%s: decimal needs a precision from 1 to 38 and a scale up to it, e.g. decimal(12,2)", what)
		}
	case base == "varchar" || base == "decimal":
		p.fail(n, "%s: %s needs its size, e.g. varchar(40) or decimal(12,2)", what, base)
	case hasArgs || !slices.Contains([]string{"smallint", "int", "bigint", "text", "bool", "date", "timestamp"}, base):
		p.fail(n, "%s has type %q, which not every engine stores alike: use smallint, int, bigint, decimal(P,S), varchar(N), text, bool, date or timestamp", what, s)
	}
}

func (p *parser) foreignKey(n *yaml.Node) *ForeignKey {
	fk := &ForeignKey{at: pos{n.Line, n.Column}}
	m := p.fields(n, "a foreign key", "columns", "references")
	if m == nil {
		return fk
	}
	fk.Columns = p.names(m["columns"], "a foreign key's columns")
	ref := p.str(m["references"], "references")
	table, cols, ok := strings.Cut(strings.TrimSuffix(ref, ")"), "(")
	if !ok || table == "" || cols == "" {
		p.fail(orAt(m["references"]), "references must name a table and its columns, e.g. references: customers(id)")
		return fk
	}
	fk.RefTable = strings.TrimSpace(table)
	for _, c := range strings.Split(cols, ",") {
		fk.RefColumns = append(fk.RefColumns, strings.TrimSpace(c))
	}
	return fk
}

func (p *parser) transaction(n *yaml.Node) *Transaction {
	t := &Transaction{at: pos{n.Line, n.Column}, Params: map[string]*Gen{}, Weight: 1}
	m := p.fields(n, "a transaction", "name", "weight", "params", "statements", "isolation", "think", "source")
	if m == nil {
		return t
	}
	t.Name = p.str(m["name"], "a transaction's name")
	if sn := m["source"]; sn != nil {
		if sm := p.fields(sn, "transaction "+t.Name+"'s source", "calls", "time"); sm != nil {
			t.Source = &Source{Calls: p.float(sm["calls"], "source calls", 0, 100), Time: p.float(sm["time"], "source time", 0, 100)}
		}
	}
	if m["weight"] != nil {
		t.Weight = int(p.int(m["weight"], "transaction "+t.Name+"'s weight", 0, 1000000))
	}
	if pm := m["params"]; pm != nil {
		if pm.Kind != yaml.MappingNode {
			p.fail(pm, "params must map each parameter's name to its generator, e.g. params: {c: {ref: customers.id}}")
			return t
		}
		for i := 0; i+1 < len(pm.Content); i += 2 {
			t.Params[pm.Content[i].Value] = p.gen(pm.Content[i+1], "parameter :"+pm.Content[i].Value)
		}
	}
	if m["isolation"] != nil {
		t.Isolation = p.isolation(m["isolation"], t.Name)
	}
	if m["think"] != nil {
		t.ThinkMin, t.ThinkMax = p.think(m["think"], t.Name)
	}
	for _, s := range p.list(m["statements"], "statements") {
		t.Statements = append(t.Statements, p.statement(s, t.Name))
	}
	return t
}

// isolationLevels are the levels every engine has, as the file may write them.
var isolationLevels = []string{"READ COMMITTED", "REPEATABLE READ", "SERIALIZABLE"}

func (p *parser) isolation(n *yaml.Node, tx string) string {
	level := strings.ToUpper(strings.NewReplacer("_", " ", "-", " ").Replace(p.str(n, "isolation")))
	if !slices.Contains(isolationLevels, level) {
		p.fail(n, "transaction %s's isolation %q: use read committed, repeatable read or serializable", tx, n.Value)
	}
	return level
}

// think reads `think: 100ms` or `think: [50ms, 150ms]`.
func (p *parser) think(n *yaml.Node, tx string) (lo, hi time.Duration) {
	what := "transaction " + tx + "'s think"
	parts := []*yaml.Node{n}
	if n.Kind == yaml.SequenceNode {
		parts = n.Content
	}
	if len(parts) < 1 || len(parts) > 2 {
		p.fail(n, "%s must be a time (think: 100ms) or a range (think: [50ms, 150ms])", what)
		return 0, 0
	}
	var d [2]time.Duration
	for i, part := range parts {
		v, err := time.ParseDuration(p.str(part, what))
		if err != nil || v < 0 || v > time.Hour {
			p.fail(part, "%s: %q is not a time from 0 to 1h such as 100ms or 2s", what, part.Value)
			return 0, 0
		}
		d[i] = v
	}
	if len(parts) == 1 {
		return d[0], d[0]
	}
	if d[1] < d[0] {
		p.fail(n, "%s: the range [%v, %v] ends before it starts", what, d[0], d[1])
	}
	return d[0], d[1]
}

// statement reads a statement: its SQL alone, or a mapping of its portable sql, engines' own
// forms, into and expect.
func (p *parser) statement(n *yaml.Node, tx string) *Statement {
	st := &Statement{at: pos{n.Line, n.Column}, Expect: Expect{Rows: -1}}
	if n.Kind == yaml.ScalarNode {
		st.SQL = strings.TrimSpace(n.Value)
		return st
	}
	keys := []string{"sql", "into", "expect", "chance"}
	for _, k := range engineKinds {
		keys = append(keys, string(k))
	}
	m := p.fields(n, "a statement of transaction "+tx, keys...)
	if m == nil {
		return st
	}
	st.SQL = strings.TrimSpace(p.str(m["sql"], "a statement's sql"))
	p.engineForms(st, m)
	st.Into = p.names(m["into"], "into (the names of the first row's columns)")
	if e := m["expect"]; e != nil {
		if em := p.fields(e, "expect", "rows"); em != nil {
			st.Expect.Rows = p.int(em["rows"], "expect's rows", 0, 1<<40)
		}
	}
	if c := m["chance"]; c != nil {
		st.Chance = p.float(c, "a statement's chance (the share of the transaction's runs it runs in)", 0.0001, 1)
	}
	return st
}

func unwrapPath(err error) error {
	var pe interface{ Unwrap() error }
	if errors.As(err, &pe) {
		if u := pe.Unwrap(); u != nil {
			return u
		}
	}
	return err
}
