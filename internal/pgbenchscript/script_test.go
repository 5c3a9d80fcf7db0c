package pgbenchscript

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/fairbench/fairbench/internal/sqldb"
)

// Every built-in parses into pgbench's commands: four \set, then the SQL.
func TestBuiltinsParse(t *testing.T) {
	for _, name := range BuiltinNames() {
		text, full, ok := Builtin(name)
		if !ok || full != name {
			t.Fatalf("builtin %s: %v %s", name, ok, full)
		}
		s, err := Parse(name, text)
		if err != nil {
			t.Fatal(err)
		}
		if s.Commands[0].Kind != Set || s.Commands[0].Var != "aid" {
			t.Errorf("%s starts with %+v", name, s.Commands[0])
		}
	}
	if _, full, ok := Builtin("tpcb"); !ok || full != "tpcb-like" {
		t.Errorf("prefix tpcb: %v %s, want tpcb-like as pgbench -b takes it", ok, full)
	}
	if _, _, ok := Builtin("s"); ok {
		t.Error("prefix s matches two built-ins and must be refused")
	}
}

func TestParseSQL(t *testing.T) {
	s, err := Parse("t.sql", `-- a comment
SELECT abalance
  FROM pgbench_accounts   -- trailing comment; not the end
  WHERE aid = :aid AND note <> ':not_a_var;' AND x::int = :n;
BEGIN; UPDATE t SET v = :v WHERE k = :k; END;
SELECT abalance AS bal FROM pgbench_accounts WHERE aid = :aid \gset p_
`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range s.Commands {
		got = append(got, strings.Join(strings.Fields(c.SQL), " ")+" "+strings.Join(c.Vars, ",")+" "+c.Control)
	}
	want := []string{
		"SELECT abalance FROM pgbench_accounts WHERE aid = ? AND note <> ':not_a_var;' AND x::int = ? aid,n ",
		"BEGIN  BEGIN",
		"UPDATE t SET v = ? WHERE k = ? v,k ",
		"END  COMMIT",
		"SELECT abalance AS bal FROM pgbench_accounts WHERE aid = ? aid ",
	}
	if !slices.Equal(got, want) {
		t.Errorf("commands:\n%q\nwant\n%q", got, want)
	}
	if last := s.Commands[4]; !last.Gset || last.Prefix != "p_" || last.Line != 6 {
		t.Errorf("gset command %+v", last)
	}
	if s.Commands[0].Class != sqldb.Read || s.Commands[2].Class != sqldb.Write || s.Commands[1].Class != sqldb.Other {
		t.Errorf("classes %v %v %v", s.Commands[0].Class, s.Commands[2].Class, s.Commands[1].Class)
	}
}

// A statement that changes data is a write wherever it hides, and pgbench's \gset keeps the row
// of any statement that returns one, as pgbench does: an UPDATE ... RETURNING, a data-modifying
// WITH.
func TestWritesThatReturnRows(t *testing.T) {
	s, err := Parse("t.sql", `UPDATE t SET v = v + 1 WHERE k = :k RETURNING v \gset
WITH x AS (UPDATE t SET v = 0 WHERE k = :k RETURNING v) SELECT v FROM x \gset w_
`)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range s.Commands {
		if c.Class != sqldb.Write || !c.Gset {
			t.Errorf("%q: class %v, gset %v; want a write that keeps its row", c.SQL, c.Class, c.Gset)
		}
	}
}

// Bad scripts are refused with the file, the line and what to do.
func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"", "t.sql:1: the script has no commands"},
		{"SELECT 1", "t.sql:1: the SQL command starting here has no closing semicolon"},
		{"\\set aid\n", `t.sql:1: \set needs a variable name and an expression`},
		{"SELECT 1;\n\\set x 1 +\n", `t.sql:2: \set x: unexpected "end of the expression"`},
		{"\\set x nosuch(1)\n", `t.sql:1: \set x: unknown function "nosuch"`},
		{"\\set x random(1)\n", "random() takes 2 arguments, got 1"},
		{"\\shell ls\n", `t.sql:1: \shell is not supported`},
		{"\\setshell x echo 1\n", `\setshell is not supported`},
		{"\\startpipeline\n", `\startpipeline is not supported`},
		{"\\bogus\n", `unknown meta-command \bogus`},
		{"\\sleep 5 hours\n", `\sleep unit "hours": use us, ms or s`},
		{"\\sleep -1\n", `\sleep -1: give a whole number or a :variable`},
		{"\\if 1\nSELECT 1;\n", `t.sql:1: \if without \endif`},
		{"\\else\n", `t.sql:1: \else without \if`},
		{"\\endif\n", `\endif without \if`},
		{"\\if 1\n\\else\n\\elif 0\n\\endif\n", `t.sql:3: \elif after \else`},
		{"BEGIN \\gset\n", `\gset needs a query that returns a row`},
		{"SELECT 1 \\sleep 1\n", `only \gset may end a query`},
		{"\\gset\n", `\gset must end a query`},
		{"BEGIN ISOLATION LEVEL SERIALIZABLE;\nSELECT 1;\nEND;\n", `t.sql:1: "BEGIN ISOLATION LEVEL SERIALIZABLE": fairbench sends BEGIN as each engine spells it`},
		{"START TRANSACTION READ ONLY;\nSELECT 1;\nEND;\n", `without options such as an isolation level or READ ONLY`},
	} {
		_, err := Parse("t.sql", c.text)
		var pe *ParseError
		if err == nil || !errors.As(err, &pe) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want a ParseError with %q", c.text, err, c.want)
		}
	}
}

// \if, \elif and \else link to the next branch and to \endif, nested too.
func TestBranchLinks(t *testing.T) {
	s, err := Parse("t.sql", `\if :a = 1
SELECT 1;
\elif :a = 2
\if :b
SELECT 2;
\endif
\else
SELECT 3;
\endif
`)
	if err != nil {
		t.Fatal(err)
	}
	c := s.Commands
	// 0 \if, 1 SELECT 1, 2 \elif, 3 \if, 4 SELECT 2, 5 \endif, 6 \else, 7 SELECT 3, 8 \endif
	for _, w := range []struct{ i, jump, end int }{{0, 2, 8}, {2, 6, 8}, {6, 8, 8}, {3, 5, 5}} {
		if c[w.i].Jump != w.jump || c[w.i].End != w.end {
			t.Errorf("command %d: jump %d end %d, want %d %d", w.i, c[w.i].Jump, c[w.i].End, w.jump, w.end)
		}
	}
}

func TestParseWeighted(t *testing.T) {
	for _, c := range []struct {
		arg    string
		name   string
		weight int
		err    string
	}{
		{"tpcb-like", "tpcb-like", 1, ""},
		{"my.sql@5", "my.sql", 5, ""},
		{"select-only@0", "select-only", 0, ""},
		{"x@-1", "", 0, "whole number from 0 up"},
		{"x@a", "", 0, "whole number from 0 up"},
		{"@3", "", 0, "empty script name"},
	} {
		name, w, err := ParseWeighted(c.arg)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: %v, want %q", c.arg, err, c.err)
			}
			continue
		}
		if err != nil || name != c.name || w != c.weight {
			t.Errorf("%s: %s %d %v", c.arg, name, w, err)
		}
	}
}

// FuzzParse: no script text makes the parser panic or accept a script whose branches do not
// link, and a parsed script's commands are all well formed.
func FuzzParse(f *testing.F) {
	for _, name := range BuiltinNames() {
		text, _, _ := Builtin(name)
		f.Add(text)
	}
	f.Add("\\if :a > 1 and not :b\nSELECT 1 \\gset\n\\elif case when :x then 1 else 0 end\n\\sleep :d ms\n\\else\n\\endif\n")
	f.Add("\\set x greatest(1, 2.5, -3) * hash(7) % 5 << 2 | ~1\nSELECT ':y', :x::text;\n")
	f.Add("\\set x " + strings.Repeat("-(", 40) + "1" + strings.Repeat(")", 40) + "\n")
	f.Fuzz(func(t *testing.T, text string) {
		s, err := Parse("fuzz.sql", text)
		if err != nil {
			return
		}
		for i, c := range s.Commands {
			switch c.Kind {
			case If, Elif, Else:
				if c.Jump <= i || c.End < c.Jump || c.End >= len(s.Commands) || s.Commands[c.End].Kind != Endif {
					t.Fatalf("command %d %+v does not link to its \\endif", i, c)
				}
			case SQL:
				if strings.Count(c.SQL, "?") < len(c.Vars) {
					t.Fatalf("command %d: %d variables but %q", i, len(c.Vars), c.SQL)
				}
			}
		}
	})
}

// An expression's nesting, its length and a script's size are bounded, each refused in one line
// naming the file and line (a 1 MiB `\set x ---...-1` took 1.6 GB to parse). What real
// scripts write, a few levels deep, still parses.
func TestBoundedExpressions(t *testing.T) {
	deep := "\\set a 1\n\\set x " + strings.Repeat("-", 1<<20-40) + "1\nSELECT :x;\n"
	cases := []struct{ name, text, want string }{
		{"1 MiB of minus signs", deep, `big.sql:2: \set x: the expression has more than 10000 tokens`},
		{"minus signs", "\\set x " + strings.Repeat("-", 100) + "1\n", `big.sql:1: \set x: the expression nests deeper than 64 levels`},
		{"parentheses", "\\set x " + strings.Repeat("(", 65) + "1" + strings.Repeat(")", 65) + "\n", "big.sql:1: \\set x: the expression nests deeper than 64 levels"},
		{"function calls", "\\if " + strings.Repeat("abs(", 70) + "1" + strings.Repeat(")", 70) + "\n\\endif\n", "big.sql:1: \\if: the expression nests deeper"},
		{"tokens", "\\set x 1" + strings.Repeat(" + 1", 6000) + "\n", "big.sql:1: \\set x: the expression has more than 10000 tokens"},
		{"script", strings.Repeat("SELECT 1;\n", maxScriptBytes/10+1), "big.sql:1: the script is 1048580 bytes, more than the 1048576"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("big.sql", c.text)
			if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("Parse = %v\nwant one line with %q", err, c.want)
			}
		})
	}
	ok := "\\set x " + strings.Repeat("(", 20) + "-abs(:a) * 2" + strings.Repeat(")", 20) + " + 1" + strings.Repeat(" + 1", 4000) + "\n\\set a 1\nSELECT :x;\n"
	if _, err := Parse("ok.sql", ok); err != nil {
		t.Errorf("20 levels and 8,000 tokens: %v", err)
	}
}
