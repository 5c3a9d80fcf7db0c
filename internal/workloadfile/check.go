package workloadfile

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/fairbench/fairbench/internal/dialect"
	"github.com/fairbench/fairbench/internal/sqldb"
)

// identifier is a name every engine takes unquoted: fairbench creates these tables and names them
// in its own SQL, and the user's statements name them too.
var identifier = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// gensFor are the generators that fit a column type.
var gensFor = map[string][]string{
	"smallint":  {"sequence", "uniform", "random", "ref", "pick"},
	"int":       {"sequence", "uniform", "random", "ref", "pick"},
	"bigint":    {"sequence", "uniform", "random", "ref", "pick"},
	"decimal":   {"decimal", "uniform", "random", "pick"},
	"varchar":   {"string", "pattern", "pick", "sequence", "uniform", "random"},
	"text":      {"string", "pattern", "pick", "sequence", "uniform", "random"},
	"bool":      {"uniform", "pick"},
	"date":      {"time", "pick"},
	"timestamp": {"time", "pick"},
}

// checker reports the first problem, with its place in the file.
type checker struct {
	path string
	err  error
	f    *File
}

func (c *checker) fail(at pos, format string, args ...any) {
	if c.err == nil {
		c.err = &Error{Path: c.path, Line: at.line, Col: at.col, Msg: fmt.Sprintf(format, args...)}
	}
}

// check verifies what the YAML's shape cannot: names, references between tables and columns,
// generators that fit their columns, and statements whose parameters are all declared.
func check(f *File, path string) error {
	c := &checker{path: path, f: f}
	if !identifier.MatchString(f.Name) {
		c.fail(pos{1, 1}, "name %q must be a lowercase name of letters, digits and _ (it names the data set)", f.Name)
	}
	if len(f.Tables) == 0 {
		c.fail(pos{1, 1}, "no tables: list at least one under tables:")
	}
	if len(f.Transactions) == 0 {
		c.fail(pos{1, 1}, "no transactions: list at least one under transactions:")
	}
	seen := map[string]bool{}
	for _, t := range f.Tables {
		if seen[t.Name] {
			c.fail(t.at, "table %s is listed twice", t.Name)
		}
		seen[t.Name] = true
		if f.Existing {
			c.existingTable(t)
		} else {
			c.table(t)
		}
	}
	c.transactions()
	c.checks()
	return c.err
}

// checks verifies each check's name and that each of its forms is one read without parameters.
func (c *checker) checks() {
	names := map[string]bool{}
	for _, ck := range c.f.Checks {
		if !identifier.MatchString(ck.Name) || names[ck.Name] {
			c.fail(ck.at, "check name %q: give each a distinct lowercase name of letters, digits and _", ck.Name)
		}
		names[ck.Name] = true
		if ck.Query.SQL == "" && len(ck.Query.Engines) < len(engineKinds) {
			c.fail(ck.at, "check %s needs its sql:, or a form of its own for each of postgres, mysql and mariadb", ck.Name)
			return
		}
		for _, form := range ck.Query.forms() {
			if err := form.bind(); err != nil {
				c.fail(form.at, "check %s: %v", ck.Name, err)
				return
			}
			if form.Kind != "read" || len(form.Params) > 0 {
				c.fail(form.at, "check %s must be a query without parameters that returns one value, e.g. SELECT count(*) FROM t WHERE x < 0", ck.Name)
			}
		}
	}
}

// existingTable checks a table of the user's: named only, since its columns, rows and keys are
// the database's.
func (c *checker) existingTable(t *Table) {
	if !identifier.MatchString(t.Name) {
		c.fail(t.at, "table name %q: use lowercase letters, digits and _", t.Name)
	}
	if t.Rows != 0 || len(t.Columns) > 0 || len(t.PrimaryKey) > 0 || t.NoPrimaryKey || len(t.Indexes) > 0 || len(t.ForeignKeys) > 0 {
		c.fail(t.at, "table %s already exists (existing_tables: true): give its name only, since fairbench neither creates nor loads it", t.Name)
	}
}

func (c *checker) table(t *Table) {
	if !identifier.MatchString(t.Name) || strings.HasPrefix(t.Name, "fairbench_") {
		c.fail(t.at, "table name %q: use lowercase letters, digits and _, not starting with fairbench_", t.Name)
	}
	if len(t.Columns) == 0 {
		c.fail(t.at, "table %s has no columns", t.Name)
	}
	names := map[string]bool{}
	for _, col := range t.Columns {
		if !identifier.MatchString(col.Name) {
			c.fail(col.at, "column name %q in table %s: use lowercase letters, digits and _", col.Name, t.Name)
		}
		if names[col.Name] {
			c.fail(col.at, "table %s has two columns named %s", t.Name, col.Name)
		}
		names[col.Name] = true
		c.columnGen(t, col)
	}
	if len(t.PrimaryKey) == 0 && !t.NoPrimaryKey {
		c.fail(t.at, "table %s has no primary_key: give one (InnoDB clusters rows by it, and every engine then stores the table alike), or write primary_key: [] for a table that has none on purpose", t.Name)
	}
	keys := append([][]string{t.PrimaryKey}, t.Indexes...)
	for _, fk := range t.ForeignKeys {
		keys = append(keys, fk.Columns)
	}
	for _, k := range keys {
		for _, name := range k {
			c.indexable(t, name)
		}
	}
	for _, fk := range t.ForeignKeys {
		c.foreignKey(t, fk)
	}
}

// indexable checks that a key's column exists and that every engine can index it as declared.
func (c *checker) indexable(t *Table, name string) {
	col := t.column(name)
	if col == nil {
		c.fail(t.at, "table %s has no column %s to index", t.Name, name)
		return
	}
	if col.Type != "text" {
		return
	}
	for _, k := range []sqldb.Kind{sqldb.Postgres, sqldb.MySQL, sqldb.MariaDB} {
		if !dialect.For(k).Caps().IndexesText {
			c.fail(col.at, "column %s.%s is text and in a key or index, which %s cannot index without a prefix length: use varchar(N)", t.Name, name, k)
			return
		}
	}
}

func (c *checker) columnGen(t *Table, col *Column) {
	g := col.Gen
	if g == nil || g.Kind == "" {
		return
	}
	if !slices.Contains(gensFor[col.Type], g.Kind) {
		c.fail(g.at, "column %s.%s is %s: generate it with %s, not %s", t.Name, col.Name, col.Type, strings.Join(gensFor[col.Type], ", "), g.Kind)
		return
	}
	switch g.Kind {
	case "decimal":
		g.Scale = col.Scale
	case "time":
		g.date = col.Type == "date"
	case "string":
		if col.Type == "varchar" && g.Max > int64(col.Length) {
			c.fail(g.at, "column %s.%s is varchar(%d) but its strings are up to %d long: shorten them or widen the column", t.Name, col.Name, col.Length, g.Max)
		}
	case "ref":
		c.ref(g)
	}
	if col.Type == "bool" && g.Kind == "uniform" && (g.Min < 0 || g.Max > 1) {
		c.fail(g.at, "column %s.%s is bool: draw it from [0, 1]", t.Name, col.Name)
	}
}

// ref checks that table.column is another table's sequence, whose keys a row or a parameter
// draws from.
func (c *checker) ref(g *Gen) (*Table, *Column) {
	tn, cn, _ := strings.Cut(g.Ref, ".")
	t := c.f.table(tn)
	if t == nil {
		c.fail(g.at, "%s %s: there is no table %s", g.Kind, g.Ref, tn)
		return nil, nil
	}
	if c.f.Existing {
		c.fail(g.at, "%s %s: fairbench did not load %s (existing_tables: true), so it does not know its keys: draw them with uniform: [MIN, MAX]", g.Kind, g.Ref, tn)
		return nil, nil
	}
	col := t.column(cn)
	if col == nil || col.Gen == nil || col.Gen.Kind != "sequence" || col.Gen.Cycle > 0 {
		c.fail(g.at, "%s %s: %s must be a column of %s generated by sequence without cycle (its keys are then known)", g.Kind, g.Ref, cn, tn)
		return nil, nil
	}
	return t, col
}

func (c *checker) foreignKey(t *Table, fk *ForeignKey) {
	parent := c.f.table(fk.RefTable)
	if parent == nil || slices.Index(c.f.Tables, parent) >= slices.Index(c.f.Tables, t) {
		c.fail(fk.at, "foreign key of %s references %s, which must be a table listed before it", t.Name, fk.RefTable)
		return
	}
	if !slices.Equal(fk.RefColumns, parent.PrimaryKey) || len(fk.Columns) != len(fk.RefColumns) {
		c.fail(fk.at, "foreign key of %s must reference %s's primary key (%s), column for column", t.Name, parent.Name, strings.Join(parent.PrimaryKey, ", "))
	}
}

func (c *checker) transactions() {
	names := map[string]bool{}
	weight := 0
	for _, tx := range c.f.Transactions {
		if !identifier.MatchString(tx.Name) || names[tx.Name] {
			c.fail(tx.at, "transaction name %q: give each a distinct lowercase name of letters, digits and _", tx.Name)
		}
		names[tx.Name] = true
		weight += tx.Weight
		if len(tx.Statements) == 0 {
			c.fail(tx.at, "transaction %s has no statements", tx.Name)
		}
		for _, g := range tx.Params {
			if g.Kind == "ref" || g.Kind == "next" {
				c.ref(g)
			}
		}
		c.statements(tx)
		for name := range tx.Params {
			if !c.used(tx, name) {
				c.fail(tx.at, "transaction %s gives parameter %s, which no statement uses: remove it or use :%s", tx.Name, name, name)
			}
		}
	}
	if weight == 0 && len(c.f.Transactions) > 0 {
		c.fail(c.f.Transactions[0].at, "the transactions' weights add up to 0: give at least one a weight")
	}
}

// statements binds each statement's forms and checks that they agree, and that every :name is a
// parameter or an earlier statement's into.
func (c *checker) statements(tx *Transaction) {
	given := map[string]bool{}
	for name := range tx.Params {
		given[name] = true
	}
	for _, st := range tx.Statements {
		if st.SQL == "" && len(st.Engines) < len(engineKinds) {
			c.fail(st.at, "transaction %s: a statement needs its sql:, or a form of its own for each of postgres, mysql and mariadb", tx.Name)
			return
		}
		forms := st.forms()
		for _, form := range forms {
			if err := form.bind(); err != nil {
				c.fail(form.at, "transaction %s: %v", tx.Name, err)
				return
			}
			for _, p := range form.Params {
				if !given[p] {
					c.fail(form.at, "transaction %s uses :%s, which its params: do not give and no statement before it sets with into: add %s: {GENERATOR} under params", tx.Name, p, p)
				}
			}
		}
		c.formsAgree(tx, forms)
		if st.SQL == "" {
			st.Kind, st.Params = forms[0].Kind, forms[0].Params
		}
		if len(st.Into) > 0 && !st.Always() {
			c.fail(st.at, "transaction %s: a statement with a chance below 1 cannot set parameters with into: the statements after it could not count on them; drop chance or into", tx.Name)
		}
		for _, name := range st.Into {
			if !identifier.MatchString(name) || given[name] {
				c.fail(st.at, "transaction %s: into names %q, which is not a new lowercase name of letters, digits and _ (a parameter or an earlier into has it)", tx.Name, name)
			}
			given[name] = true
		}
	}
}

// formsAgree checks that an engine's own form of a statement does the same kind of work with the
// same parameters as the others, so every engine counts and binds it alike.
func (c *checker) formsAgree(tx *Transaction, forms []*Statement) {
	first := forms[0]
	want := slices.Sorted(slices.Values(first.Params))
	for _, form := range forms[1:] {
		if form.Kind != first.Kind {
			c.fail(form.at, "transaction %s: this form of the statement is a %s and %q a %s: every engine's form must do the same kind of work", tx.Name, form.Kind, short(first.SQL), first.Kind)
		}
		if !slices.Equal(slices.Compact(slices.Sorted(slices.Values(form.Params))), slices.Compact(want)) {
			c.fail(form.at, "transaction %s: this form of the statement takes :%s and %q takes :%s: give every form the same parameters", tx.Name, strings.Join(form.Params, ", :"), short(first.SQL), strings.Join(first.Params, ", :"))
		}
	}
}

// used says whether a statement of tx uses the parameter name, in any form.
func (c *checker) used(tx *Transaction, name string) bool {
	for _, st := range tx.Statements {
		for _, form := range st.forms() {
			if slices.Contains(form.Params, name) {
				return true
			}
		}
	}
	return false
}

func (f *File) table(name string) *Table {
	for _, t := range f.Tables {
		if t.Name == name {
			return t
		}
	}
	return nil
}

func (t *Table) column(name string) *Column {
	for _, c := range t.Columns {
		if c.Name == name {
			return c
		}
	}
	return nil
}
