package workload

import (
	"reflect"
	"testing"

	"github.com/fairbench/fairbench/internal/dialect"
	"github.com/fairbench/fairbench/internal/sqldb"
)

// A declared table's DDL on each engine: the primary key up front on InnoDB and after the load
// on PostgreSQL, NOT NULL unless allowed, the fill factor where the engine has one, indexes and
// the serial counter after the load, trusted and checked foreign keys apart.
func TestTableSQL(t *testing.T) {
	tb := Table{Name: "t", Columns: []Column{{Name: "id", Type: "bigserial"}, {Name: "v", Type: "varchar", Length: 8, Null: true},
		{Name: "p", Type: "int"}}, PrimaryKey: []string{"id"}, FillFactor: 90, Rows: 10, Serial: "id",
		Indexes:     []Index{{Name: "t_v", Columns: []string{"v", "id"}}},
		ForeignKeys: []ForeignKey{{Name: "t_fk1", Columns: []string{"p"}, RefTable: "u", RefColumns: []string{"id"}, Trusted: true}}}
	cases := []struct {
		kind    sqldb.Kind
		create  string
		keys    []string
		trusted []string
	}{
		{sqldb.Postgres, "CREATE TABLE t (id bigserial, v varchar(8), p integer NOT NULL) with (fillfactor=90)",
			[]string{"ALTER TABLE t ADD PRIMARY KEY (id)", "CREATE INDEX t_v ON t (v, id)", "SELECT setval(pg_get_serial_sequence('t', 'id'), 10)"},
			[]string{"ALTER TABLE t ADD CONSTRAINT t_fk1 FOREIGN KEY (p) REFERENCES u (id)"}},
		{sqldb.MySQL, "CREATE TABLE t (id bigint NOT NULL AUTO_INCREMENT, v varchar(8), p int NOT NULL, PRIMARY KEY (id))",
			[]string{"CREATE INDEX t_v ON t (v, id)"},
			[]string{"ALTER TABLE t ADD CONSTRAINT t_fk1 FOREIGN KEY (p) REFERENCES u (id)"}},
	}
	for _, c := range cases {
		d := dialect.For(c.kind)
		if got := createSQL(d, tb); got != c.create {
			t.Errorf("%s create:\n%s\nwant\n%s", c.kind, got, c.create)
		}
		if got := keysSQL(d, tb); !reflect.DeepEqual(got, c.keys) {
			t.Errorf("%s keys: %q, want %q", c.kind, got, c.keys)
		}
		if got := foreignKeysSQL(tb, true); !reflect.DeepEqual(got, c.trusted) {
			t.Errorf("%s trusted keys: %q, want %q", c.kind, got, c.trusted)
		}
		if got := foreignKeysSQL(tb, false); len(got) != 0 {
			t.Errorf("%s checked keys: %q, want none", c.kind, got)
		}
	}
	if got := (&Table{Columns: []Column{{Name: "a"}, {Name: "b"}}}).loadColumns(); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Errorf("load columns %q, want every column", got)
	}
}
