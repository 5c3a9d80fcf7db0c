package tpch

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func ans(rows ...string) Answer {
	a := Answer{Columns: []string{"a", "b"}}
	for _, r := range rows {
		a.Rows = append(a.Rows, strings.Split(r, "|"))
	}
	return a
}

// The precision rules of TPC-H clause 2.1.3.5 as the brief states them: money to the cent,
// averages and ratios within 1%, counts and strings exact, the same rows.
func TestCompareAnswers(t *testing.T) {
	cases := []struct {
		name      string
		q         int
		got, want Answer
		ok        bool
		detail    string // part of the detail on a mismatch
	}{
		{"identical", 6, ans("123141078.23"), ans("123141078.23"), true, ""},
		{"a cent off is still money to the cent", 6, ans("123141078.24"), ans("123141078.23"), true, ""},
		{"rounded to the reference's cents first", 6, ans("123141078.2349"), ans("123141078.23"), true, ""},
		{"two cents off", 6, ans("123141078.25"), ans("123141078.23"), false, "more than a cent off"},
		{"money far off", 3, ans("2456423|406181.01"), ans("2456423|406180.01"), false, "row 1 column 2 (b)"},
		{"padding and trailing zeros", 5, ans("INDONESIA  |55502041.1700"), ans("INDONESIA|55502041.17"), true, ""},
		{"count exact", 4, ans("1-URGENT|10594"), ans("1-URGENT|10594"), true, ""},
		{"count off by one", 4, ans("1-URGENT|10595"), ans("1-URGENT|10594"), false, "got 10595, expected 10594"},
		{"count with a zero fraction equals the integer", 12, ans("MAIL|6202.00"), ans("MAIL|6202"), true, ""},
		{"average within 1%", 1, ans("x|x|1|1|1|1|25.60|38273.13|0.05|1"), ans("x|x|1|1|1|1|25.52|38273.13|0.05|1"), true, ""},
		{"average more than 1% off", 1, ans("x|x|1|1|1|1|25.90|38273.13|0.05|1"), ans("x|x|1|1|1|1|25.52|38273.13|0.05|1"), false, "more than 1% off"},
		{"ratio rounded before the 1% rule", 8, ans("1995|0.0344"), ans("1995|0.03"), true, ""},
		{"ratio off", 8, ans("1995|0.0444"), ans("1995|0.03"), false, "row 1 column 2"},
		{"string differs", 5, ans("JAPAN|1.00"), ans("CHINA|1.00"), false, "got JAPAN, expected CHINA"},
		{"string is not a number", 6, ans("abc"), ans("1.00"), false, "row 1"},
		{"fewer rows", 13, ans("0|5"), ans("0|5", "9|6"), false, "1 rows, expected 2"},
		{"more rows", 13, ans("0|5", "9|6"), ans("0|5"), false, "2 rows, expected 1"},
		{"order matters", 13, ans("9|6", "0|5"), ans("0|5", "9|6"), false, "row 1 column 1"},
		{"no rows on both sides", 17, ans(), ans(), true, ""},
		{"NULL against a value", 17, Normalize(ans("")), ans("348406.02"), false, "got NULL"},
		{"NULL against NULL", 17, Normalize(ans("")), Normalize(ans("")), true, ""},
		{"fewer columns", 6, ans("1.00"), ans("1.00|2.00"), false, "1 columns, expected 2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ok, detail := CompareAnswers(tc.q, tc.got, tc.want)
			if ok != tc.ok {
				t.Fatalf("ok = %v (%s), want %v", ok, detail, tc.ok)
			}
			if !ok && !strings.Contains(detail, tc.detail) {
				t.Errorf("detail %q does not say %q", detail, tc.detail)
			}
		})
	}
}

func TestNormalize(t *testing.T) {
	got := Normalize(Answer{Columns: []string{" a "}, Rows: [][]string{
		{"  Supplier#000000001 ", "25.5220058532573370", "12", "1995-03-05", "", "-0.00005", "7.12345"},
	}})
	want := []string{"Supplier#000000001", "25.5220", "12", "1995-03-05", "NULL", "-0.0001", "7.1235"}
	if strings.Join(got.Rows[0], "|") != strings.Join(want, "|") {
		t.Errorf("Normalize = %v, want %v", got.Rows[0], want)
	}
	if got.Columns[0] != "a" {
		t.Errorf("column %q not trimmed", got.Columns[0])
	}
}

// An answer written by one engine and read back compares equal, and the official files' layout
// (padded columns, a header) reads as it is meant.
func TestAnswerFilesRoundTrip(t *testing.T) {
	dir := t.TempDir()
	a := Normalize(Answer{Columns: columnNames[3], Rows: [][]string{{"2456423", "406181.0111", "1995-03-05", "0"}}})
	if err := WriteAnswer(filepath.Join(dir, "a", "q3.out"), a); err != nil {
		t.Fatal(err)
	}
	official := "l_orderkey            |revenue        |o_orderdat|o_shippriority\n" +
		"               2456423|406181.01|1995-03-05|                   0\n"
	if err := os.MkdirAll(filepath.Join(dir, "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "b", "q3.out"), []byte(official), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := ReadAnswer(filepath.Join(dir, "b", "q3.out"))
	if err != nil {
		t.Fatal(err)
	}
	if b.Columns[2] != "o_orderdat" || len(b.Rows) != 1 {
		t.Fatalf("read %+v", b)
	}
	diffs, err := CompareAnswerDirs(filepath.Join(dir, "a"), filepath.Join(dir, "b"))
	if err != nil || len(diffs) != 0 {
		t.Fatalf("CompareAnswerDirs = %v, %v; want no differences", diffs, err)
	}
	// The first answer becomes the cache's reference; a different one is then wrong.
	cache := filepath.Join(dir, "cache")
	if ok, d, err := checkCached(cache, "q3.out", 3, a, "postgres 15"); !ok || err != nil {
		t.Fatalf("first answer: %v %s %v", ok, d, err)
	}
	a.Rows[0][1] = "406191.0111"
	ok, d, err := checkCached(cache, "q3.out", 3, a, "mariadb 10.11")
	if ok || err != nil || !strings.Contains(d, "postgres 15") {
		t.Fatalf("second answer: %v %q %v; want a mismatch naming the reference engine", ok, d, err)
	}
}

// The official answers shipped beside the repository parse and hold the row counts the
// specification lists for SF 1 (Q2 100, Q3 10, Q10 20, Q18 57, Q21 100 ...).
func TestOfficialAnswersReadable(t *testing.T) {
	dir := officialAnswersDir("")
	if dir == "" {
		t.Skip("no official answers beside the repository")
	}
	rows := map[int]int{1: 4, 2: 100, 3: 10, 4: 5, 6: 1, 10: 20, 11: 1048, 13: 42, 15: 1, 16: 18314, 18: 57, 20: 186, 21: 100, 22: 7}
	for q := 1; q <= numQueries; q++ {
		a, err := ReadAnswer(filepath.Join(dir, fmt.Sprintf("q%d.out", q)))
		if err != nil {
			t.Fatal(err)
		}
		if len(a.Columns) != len(columnNames[q]) {
			t.Errorf("Q%d: %d columns in the official answer, %d in columnNames", q, len(a.Columns), len(columnNames[q]))
		}
		if want, ok := rows[q]; ok && len(a.Rows) != want {
			t.Errorf("Q%d: %d rows, want %d", q, len(a.Rows), want)
		}
	}
}
