package capture

import (
	"fmt"
	"strings"
	"testing"
)

// Statements seen together in the source's transactions become one transaction kind, with the
// copies their calls give and in the order they ran; what the copies leave of a statement's calls
// is one more copy run by chance, so the source's transactions and its statement mix both hold.
func TestGroupStatements(t *testing.T) {
	type want struct {
		groups string // "a,b×10,c+0.5" per group (+ a copy's chance), groups joined by " | "
		alone  string // "name:calls" of what stays alone
	}
	for _, tc := range []struct {
		name  string
		calls map[string]int64
		seen  [][]string // each twice a source transaction: statement ids in the order they ran
		once  [][]string // each once
		want  want
	}{
		{"two kinds apart, a repeated line, a lone statement",
			map[string]int64{"wh": 1000, "line": 10000, "ins": 1000, "pay": 500, "hist": 500, "ping": 300},
			[][]string{{"wh", "line"}, {"line", "ins"}, {"pay", "hist"}}, nil,
			want{"wh,line×10,ins | pay,hist", "ping:300"}},
		{"a statement run in some transactions only runs by chance",
			map[string]int64{"a": 1000, "b": 1000, "byname": 600},
			[][]string{{"a", "b"}, {"b", "byname"}}, nil,
			want{"a,b,byname+0.6", ""}},
		{"TPC-C's 5 to 15 order lines: ten copies and one by chance",
			map[string]int64{"a": 1000, "line": 10570},
			[][]string{{"a", "line"}}, nil,
			want{"a,line×10+0.57", ""}},
		{"calls a little off the count are the count's",
			map[string]int64{"a": 1000, "b": 990, "c": 1990},
			[][]string{{"a", "b", "c"}}, nil,
			want{"a,b,c×2", ""}},
		{"calls half again the count: one copy, and one by chance",
			map[string]int64{"a": 1000, "b": 1000, "c": 1500},
			[][]string{{"a", "b", "c"}}, nil,
			want{"a,b,c+0.5", ""}},
		{"one sighting does not join two kinds",
			map[string]int64{"a": 1000, "b": 1000, "pay": 500, "hist": 500},
			[][]string{{"a", "b"}, {"pay", "hist"}}, [][]string{{"b", "pay"}},
			want{"a,b | pay,hist", ""}},
		{"two sightings among many do not either",
			map[string]int64{"a": 1000, "b": 1000, "pay": 500, "hist": 500},
			[][]string{{"a", "b"}, {"a", "b"}, {"a", "b"}, {"a", "b"}, {"a", "b"}, {"a", "b"}, {"a", "b"}, {"a", "b"}, {"a", "b"}, {"a", "b"},
				{"pay", "hist"}, {"pay", "hist"}, {"pay", "hist"}, {"pay", "hist"}, {"pay", "hist"}, {"pay", "hist"}, {"pay", "hist"}, {"pay", "hist"}, {"pay", "hist"}, {"pay", "hist"}},
			[][]string{{"b", "pay"}, {"b", "pay"}},
			want{"a,b | pay,hist", ""}},
		{"nothing seen together: every statement alone",
			map[string]int64{"a": 10, "b": 20},
			[][]string{{"a"}, {"b"}}, nil,
			want{"", "a:10,b:20"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var kept []*txn
			for _, id := range []string{"wh", "line", "ins", "pay", "hist", "ping", "a", "b", "byname", "c"} {
				if n, ok := tc.calls[id]; ok {
					kept = append(kept, &txn{name: id, ids: []string{"id-" + id}, calls: n, totalMS: float64(n)})
				}
			}
			seen := observed{}
			for i, ids := range append(append(tc.seen, tc.seen...), tc.once...) {
				m := map[string]float64{}
				for j, id := range ids {
					m["id-"+id] = float64(j)
				}
				seen[[2]string{"session", fmt.Sprint(i)}] = m
			}
			groups, alone := groupStatements(kept, seen)
			var gs, as []string
			for _, g := range groups {
				var ms []string
				for _, m := range g.members {
					s := m.st.name
					if m.copies > 1 {
						s += fmt.Sprintf("×%d", m.copies)
					}
					if m.chance > 0 {
						s += fmt.Sprintf("+%g", m.chance)
					}
					ms = append(ms, s)
				}
				gs = append(gs, strings.Join(ms, ","))
			}
			for _, a := range alone {
				as = append(as, fmt.Sprintf("%s:%d", a.name, a.calls))
			}
			if got := (want{strings.Join(gs, " | "), strings.Join(as, ",")}); got != tc.want {
				t.Errorf("got groups %q, alone %q; want %q, %q", got.groups, got.alone, tc.want.groups, tc.want.alone)
			}
			// Every call is run: the grouped copies and what stays alone add up to the source's.
			for _, k := range kept {
				if k.calls+k.grouped != tc.calls[k.name] && k.calls+k.grouped < tc.calls[k.name]*95/100 {
					t.Errorf("%s: %d alone + %d grouped, the source ran %d", k.name, k.calls, k.grouped, tc.calls[k.name])
				}
			}
		})
	}
}

// Each copy of a grouped statement draws its own values: its parameters get the copy's place,
// and a PostgreSQL cast after one is left alone. Statements at one copy that compare with the
// same column, drawn the same way, share its value; a sequence's next value, a parameter tied to
// no column, and other copies do not.
func TestGroupParams(t *testing.T) {
	id := param{name: "id", gen: "uniform: [1, 1000]"}
	qty := param{name: "qty", gen: "uniform: [1, 10]"}
	next := param{name: "o_id", gen: "next: orders.o_id"}
	free := param{name: "p1", gen: "uniform: [1, 100]", note: "capture found no column this value meets"}
	var g groupParams
	got := []string{
		g.add("SELECT qty FROM stock WHERE id = :id FOR UPDATE", []param{id}, 1, 0),
		g.add("SELECT qty FROM stock WHERE id = :id FOR UPDATE", []param{id}, 2, 1),
		g.add("UPDATE stock SET qty = qty - :qty WHERE id = :id AND qty >= :qty AND note = :id::text", []param{qty, id}, 3, 0),
		g.add("UPDATE stock SET qty = qty - :qty WHERE id = :id", []param{qty, id}, 4, 1),
		g.add("INSERT INTO orders VALUES (:o_id, :p1)", []param{next, free}, 5, 0),
		g.add("INSERT INTO orders VALUES (:o_id, :p1)", []param{next, free}, 6, 0),
	}
	want := []string{
		"SELECT qty FROM stock WHERE id = :id_1 FOR UPDATE",
		"SELECT qty FROM stock WHERE id = :id_2 FOR UPDATE",
		"UPDATE stock SET qty = qty - :qty_3 WHERE id = :id_1 AND qty >= :qty_3 AND note = :id_1::text",
		"UPDATE stock SET qty = qty - :qty_4 WHERE id = :id_2",
		"INSERT INTO orders VALUES (:o_id_5, :p1_5)",
		"INSERT INTO orders VALUES (:o_id_6, :p1_6)",
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("statement %d:\n%s\nwant\n%s", i+1, got[i], want[i])
		}
	}
	var names []string
	for _, p := range g.params {
		names = append(names, p.name)
	}
	if want := "id_1 id_2 qty_3 qty_4 o_id_5 p1_5 o_id_6 p1_6"; strings.Join(names, " ") != want {
		t.Errorf("parameters %s, want %s", strings.Join(names, " "), want)
	}
	if !strings.Contains(g.params[0].note, "one value for every statement") || g.params[2].note != "" {
		t.Errorf("notes: %q, %q", g.params[0].note, g.params[2].note)
	}
}

// A one-row INSERT whose digest collapsed placeholders around a current time is written out when
// the columns' types allow one reading only.
func TestExpandMixedRow(t *testing.T) {
	ts := func(name string, cols ...string) *table {
		tb := &table{name: name}
		for _, c := range cols {
			typ := "int"
			if strings.HasSuffix(c, "_date") || strings.HasSuffix(c, "_d") {
				typ = "timestamp"
			}
			tb.columns = append(tb.columns, &column{name: c, portable: typ})
		}
		return tb
	}
	tables := map[string]*table{
		"orders":  ts("orders", "o_id", "o_d_id", "o_w_id", "o_c_id", "o_entry_d", "o_carrier_id", "o_ol_cnt", "o_all_local"),
		"history": ts("history", "h_c_id", "h_c_d_id", "h_c_w_id", "h_d_id", "h_w_id", "h_date", "h_amount", "h_data"),
		"twice":   ts("twice", "a_d", "b", "c", "d_d", "e", "f"),
	}
	for _, tc := range []struct{ in, want string }{
		{"INSERT INTO orders(o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local) VALUES (?, ..., CURRENT_TIMESTAMP, ?, ...)",
			"INSERT INTO orders(o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local) VALUES (?, ?, ?, ?, CURRENT_TIMESTAMP, ?, ?, ?)"},
		{"INSERT INTO HISTORY(h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data) VALUES (?, ..., CURRENT_TIMESTAMP, ?, ...)",
			"INSERT INTO HISTORY(h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data) VALUES (?, ?, ?, ?, ?, CURRENT_TIMESTAMP, ?, ?)"},
		// Runs around a NULL: four readings fit, so none is taken.
		{"INSERT INTO orders(o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local) VALUES (?, ..., NULL, ?, ...)",
			"INSERT INTO orders(o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local) VALUES (?, ..., NULL, ?, ...)"},
		// Two time columns, but runs of two or more leave the time one place only.
		{"INSERT INTO twice(a_d, b, c, d_d, e, f) VALUES (?, ..., CURRENT_TIMESTAMP, ?, ...)",
			"INSERT INTO twice(a_d, b, c, d_d, e, f) VALUES (?, ?, ?, CURRENT_TIMESTAMP, ?, ?)"},
		{"INSERT INTO nowhere(a, b, c) VALUES (?, ..., CURRENT_TIMESTAMP)", "INSERT INTO nowhere(a, b, c) VALUES (?, ..., CURRENT_TIMESTAMP)"},
	} {
		if got := expandMixedRow(tc.in, tables); got != tc.want {
			t.Errorf("expandMixedRow(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
}

// Statements are ordered by which started first where both were seen in one transaction, not by
// their mean offset over all sightings: a statement seen alone late in slow transactions must not
// move behind one it always precedes.
func TestGroupOrderFollowsTransactions(t *testing.T) {
	kept := []*txn{{name: "second", ids: []string{"s"}, calls: 100}, {name: "first", ids: []string{"f"}, calls: 100}}
	seen := observed{}
	for i := range 4 {
		seen[[2]string{"a", fmt.Sprint(i)}] = map[string]float64{"f": 1, "s": 2}
	}
	for i := range 6 {
		seen[[2]string{"b", fmt.Sprint(i)}] = map[string]float64{"f": 90} // waited on a lock
	}
	groups, _ := groupStatements(kept, seen)
	if len(groups) != 1 || groups[0].members[0].st.name != "first" {
		t.Fatalf("groups %+v: want first, then second", groups)
	}
}

// Two accounts that read the same once typed are one statement, their calls and identifiers
// joined (MySQL 9.7 kept two digests of one New-Order statement).
func TestSameStatements(t *testing.T) {
	kept := []*txn{
		{name: "select_warehouse", sql: "SELECT w_tax FROM warehouse WHERE w_id = :w_id", ids: []string{"a"}, calls: 950, rows: 950, totalMS: 9.5},
		{name: "select_district", sql: "SELECT d_tax FROM district WHERE d_id = :d_id", ids: []string{"b"}, calls: 900},
		{name: "select_warehouse_2", sql: "SELECT w_tax FROM warehouse WHERE w_id = :w_id", ids: []string{"c"}, calls: 50, rows: 50, totalMS: 0.5},
	}
	got := sameStatements(kept)
	if len(got) != 2 || got[0].calls != 1000 || got[0].rows != 1000 || got[0].totalMS != 10 || strings.Join(got[0].ids, ",") != "a,c" || got[1].name != "select_district" {
		t.Errorf("merged: %+v, %+v", got[0], got[1:])
	}
}
