package capture

import (
	"slices"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/fairbench/fairbench/internal/dialect"
)

// hostile are catalog names a source may hold (each under PostgreSQL's 63 bytes): a captured
// column named like the first once added a check that read a file with the checking user's
// rights.
var hostile = []string{
	"x\nchecks:\n  - {name: own, sql: \"SELECT pg_read_file('/etc/shadow')\", equals: 0}",
	"a # not a comment", "k: v", "{a: 1}", `say "hi"`, "it's", "`tick`", "yes", "- item", "x\u2028checks: []", "\r\nname: other",
}

// What capture writes reads back as exactly the tables, columns, keys, transactions and
// parameters it captured, whatever the source named them, and every note stays a comment.
func TestRenderHoldsHostileNames(t *testing.T) {
	var tables []*table
	for i, name := range hostile {
		col := &column{name: name, portable: "int", gen: "uniform: [1, 9]", note: "from " + name}
		tables = append(tables, &table{name: name, rows: int64(i + 1), columns: []*column{col}, primaryKey: []string{name},
			indexes: [][]string{{name}}, foreignKeys: []dialect.CatalogForeignKey{{Columns: []string{name}, RefTable: name, RefColumns: []string{name}}},
			notes: []string{"column " + name + " (" + name + ") left out"}})
	}
	txns := []*txn{{name: hostile[0], sql: "SELECT 1 FROM t WHERE a = :p", calls: 3,
		params: []param{{name: hostile[1], gen: "uniform: [1, 9]", note: hostile[0]}}}}
	left := []dropped{{sql: hostile[0], why: hostile[0], calls: 1}}
	out := render(Options{Name: hostile[0], Source: hostile[0], Top: 1}, hostile[0], hostile[0], tables, hostile, nil, txns, left)

	var got struct {
		Name   string
		Checks []any
		Tables []struct {
			Name       string
			Rows       int64
			Columns    []struct{ Name, Type string }
			PrimaryKey []string `yaml:"primary_key"`
			Indexes    [][]string
			Foreign    []struct {
				Columns    []string
				References string
			} `yaml:"foreign_keys"`
		}
		Transactions []struct {
			Name   string
			Params map[string]any
		}
	}
	if err := yaml.Unmarshal(out, &got); err != nil {
		t.Fatalf("the captured file does not parse: %v\n%s", err, out)
	}
	if got.Name != hostile[0] || got.Checks != nil {
		t.Errorf("name %q, checks %v: want the source's name as data and no checks\n%s", got.Name, got.Checks, out)
	}
	var names []string
	for i, tb := range got.Tables {
		names = append(names, tb.Name)
		want := hostile[i]
		if tb.Rows != int64(i+1) || len(tb.Columns) != 1 || tb.Columns[0].Name != want || tb.Columns[0].Type != "int" ||
			!slices.Equal(tb.PrimaryKey, []string{want}) || len(tb.Indexes) != 1 || !slices.Equal(tb.Indexes[0], []string{want}) ||
			len(tb.Foreign) != 1 || tb.Foreign[0].References != want+"("+want+")" {
			t.Errorf("table %d read back as %+v, want every name %q", i, tb, want)
		}
	}
	if !slices.Equal(names, hostile) {
		t.Errorf("tables read back as %q, want %q", names, hostile)
	}
	if len(got.Transactions) != 1 || got.Transactions[0].Name != hostile[0] || len(got.Transactions[0].Params) != 1 || got.Transactions[0].Params[hostile[1]] == nil {
		t.Errorf("transactions read back as %+v", got.Transactions)
	}
}
