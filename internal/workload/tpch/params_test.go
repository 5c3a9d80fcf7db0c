package tpch

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/fairbench/fairbench/internal/sqldb"
)

func oneLine(stmts []string) string {
	return strings.Join(strings.Fields(strings.Join(stmts, " ; ")), " ")
}

// The validation parameters reach the query text where the specification puts them, in each
// dialect's own syntax.
func TestValidationSubstitution(t *testing.T) {
	cases := []struct {
		kind sqldb.Kind
		q    int
		sf   float64
		want []string
	}{
		{sqldb.Postgres, 1, 1, []string{"l_shipdate <= date '1998-12-01' - interval '90' day"}},
		{sqldb.MariaDB, 1, 1, []string{"l_shipdate <= date '1998-12-01' - interval '90' day"}},
		{sqldb.Postgres, 2, 1, []string{"p_size = 15", "p_type like '%BRASS'", "r_name = 'EUROPE'", "limit 100"}},
		{sqldb.MySQL, 6, 1, []string{"l_discount between 0.06 - 0.01 and 0.06 + 0.01", "l_quantity < 24", "date '1994-01-01' + interval '1' year"}},
		{sqldb.Postgres, 11, 1, []string{"* 0.0001000000", "n_name = 'GERMANY'"}},
		{sqldb.Postgres, 11, 0.01, []string{"* 0.0100000000"}},
		{sqldb.Postgres, 13, 1, []string{"o_comment not like '%special%requests%'", "count(o_orderkey) as c_count"}},
		{sqldb.MySQL, 13, 1, []string{"count(o_orderkey) as c_count", ") as c_orders group by"}},
		{sqldb.Postgres, 15, 1, []string{"create view fb_revenue0 (supplier_no, total_revenue)", "from supplier, fb_revenue0 where", "; drop view fb_revenue0"}},
		{sqldb.Postgres, 16, 1, []string{"p_brand <> 'Brand#45'", "p_type not like 'MEDIUM POLISHED%'", "p_size in (49, 14, 23, 45, 19, 3, 36, 9)"}},
		{sqldb.MariaDB, 19, 1, []string{"p_brand = 'Brand#12'", "l_quantity >= 1 and l_quantity <= 1 + 10", "l_quantity >= 20 and l_quantity <= 20 + 10"}},
		{sqldb.Postgres, 22, 1, []string{"in ('13', '31', '23', '29', '30', '18', '17')"}},
	}
	for _, tc := range cases {
		t.Run(string(tc.kind)+"/Q"+strconv.Itoa(tc.q), func(t *testing.T) {
			stmts, err := queryText(tc.q, params(tc.q, tc.sf, 0, 0), 0)
			if err != nil {
				t.Fatal(err)
			}
			text := oneLine(stmts)
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("no %q in %s", w, text)
				}
			}
		})
	}
}

// Every query of every dialect has a value for each of its placeholders, for the validation
// values and for random ones, and Q15 alone has several statements.
func TestEveryQuerySubstitutes(t *testing.T) {
	left := regexp.MustCompile(`\[[A-Z0-9_]+\]`)
	for _, kind := range []sqldb.Kind{sqldb.Postgres, sqldb.MySQL} {
		for q := 1; q <= numQueries; q++ {
			for _, seed := range []uint64{0, 1, 99} {
				stmts, err := queryText(q, params(q, 1, seed, 3), 3)
				if err != nil {
					t.Fatalf("%s Q%d seed %d: %v", kind, q, seed, err)
				}
				if want := map[bool]int{true: 3, false: 1}[q == 15]; len(stmts) != want {
					t.Errorf("%s Q%d: %d statements, want %d", kind, q, len(stmts), want)
				}
				if m := left.FindString(oneLine(stmts)); m != "" {
					t.Errorf("%s Q%d seed %d: %s left in the text", kind, q, seed, m)
				}
			}
		}
	}
	if _, err := substitute("x = [NOPE]", map[string]string{}); err == nil || !strings.Contains(err.Error(), "NOPE") {
		t.Errorf("a missing parameter was not refused: %v", err)
	}
}

// Random parameters stay within clause 2.4's ranges and are the same for the same seed.
func TestRandomParamsInRange(t *testing.T) {
	dateRE := regexp.MustCompile(`^(\d{4})-(\d{2})-(\d{2})$`)
	monthIndex := func(t *testing.T, d string) int {
		m := dateRE.FindStringSubmatch(d)
		if m == nil {
			t.Fatalf("not a date: %q", d)
		}
		y, _ := strconv.Atoi(m[1])
		mo, _ := strconv.Atoi(m[2])
		return (y-1993)*12 + mo - 1
	}
	num := func(s string) int { n, _ := strconv.Atoi(s); return n }
	for seed := uint64(1); seed <= 200; seed++ {
		p := func(q int) map[string]string { return randomParams(q, 1, seed, int(seed%5)) }
		if d := num(p(1)["DELTA"]); d < 60 || d > 120 {
			t.Fatalf("Q1 DELTA %d", d)
		}
		if s := num(p(2)["SIZE"]); s < 1 || s > 50 {
			t.Fatalf("Q2 SIZE %d", s)
		}
		if d := p(3)["DATE"]; !strings.HasPrefix(d, "1995-03-") || num(d[8:]) < 1 || num(d[8:]) > 31 {
			t.Fatalf("Q3 DATE %s", d)
		}
		if m := monthIndex(t, p(4)["DATE"]); m < 0 || m > 57 {
			t.Fatalf("Q4 DATE %s", p(4)["DATE"])
		}
		if m := monthIndex(t, p(10)["DATE"]); m < 1 || m > 24 {
			t.Fatalf("Q10 DATE %s", p(10)["DATE"])
		}
		q6 := p(6)
		if d := q6["DISCOUNT"]; d < "0.02" || d > "0.09" || len(d) != 4 {
			t.Fatalf("Q6 DISCOUNT %s", d)
		}
		if q := num(q6["QUANTITY"]); q != 24 && q != 25 {
			t.Fatalf("Q6 QUANTITY %d", q)
		}
		if q7 := p(7); q7["NATION1"] == q7["NATION2"] {
			t.Fatalf("Q7 nations equal: %v", q7)
		}
		q8 := p(8)
		for _, n := range nations {
			if n.name == q8["NATION"] && regions[n.region] != q8["REGION"] {
				t.Fatalf("Q8 %s is not in %s", q8["NATION"], q8["REGION"])
			}
		}
		if q12 := p(12); q12["SHIPMODE1"] == q12["SHIPMODE2"] {
			t.Fatalf("Q12 ship modes equal: %v", q12)
		}
		q16 := p(16)
		seen := map[string]bool{}
		for i := 1; i <= 8; i++ {
			s := q16["SIZE"+strconv.Itoa(i)]
			if seen[s] || num(s) < 1 || num(s) > 50 {
				t.Fatalf("Q16 sizes %v", q16)
			}
			seen[s] = true
		}
		if q := num(p(18)["QUANTITY"]); q < 312 || q > 315 {
			t.Fatalf("Q18 QUANTITY %d", q)
		}
		q19 := p(19)
		if a, b, c := num(q19["QUANTITY1"]), num(q19["QUANTITY2"]), num(q19["QUANTITY3"]); a < 1 || a > 10 || b < 10 || b > 20 || c < 20 || c > 30 {
			t.Fatalf("Q19 quantities %v", q19)
		}
		codes := map[string]bool{}
		for i := 1; i <= 7; i++ {
			c := p(22)["I"+strconv.Itoa(i)]
			if codes[c] || num(c) < 10 || num(c) > 34 {
				t.Fatalf("Q22 codes %v", p(22))
			}
			codes[c] = true
		}
	}
	a, b := randomParams(9, 1, 42, 1), randomParams(9, 1, 42, 1)
	if a["COLOR"] != b["COLOR"] {
		t.Errorf("the same seed gave %s and %s", a["COLOR"], b["COLOR"])
	}
	if len(colors) != 92 {
		t.Errorf("%d colours, the specification lists 92", len(colors))
	}
}

// Each permutation row is a permutation of 1..22, stream 0 starts as Appendix A does, and a
// --queries subset keeps the stream's order.
func TestPermutation(t *testing.T) {
	for i, row := range permutation {
		seen := map[int]bool{}
		for _, q := range row {
			if q < 1 || q > numQueries || seen[q] {
				t.Fatalf("row %d is not a permutation: %v", i, row)
			}
			seen[q] = true
		}
	}
	if got := intsString(streamOrder(1, []int{1, 3, 5, 18, 21})); got != "21 3 18 5 1" {
		t.Errorf("stream 1 order of 1,3,5,18,21 = %s, want 21 3 18 5 1", got)
	}
	if got := intsString(streamOrder(42, []int{14, 2})); got != "2 14" {
		t.Errorf("stream 42 (row 1 again) order of 14,2 = %s, want 2 14", got)
	}
}

func intsString(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, " ")
}

func TestParseQueries(t *testing.T) {
	cases := []struct {
		in   string
		want string
		bad  bool
	}{
		{"", "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22", false},
		{"18,21", "18 21", false},
		{"q1, 3-5, 3", "1 3 4 5", false},
		{"0", "", true},
		{"23", "", true},
		{"5-2", "", true},
		{"x", "", true},
	}
	for _, tc := range cases {
		got, err := parseQueries(tc.in)
		if (err != nil) != tc.bad {
			t.Errorf("parseQueries(%q) error %v", tc.in, err)
			continue
		}
		if !tc.bad && intsString(got) != tc.want {
			t.Errorf("parseQueries(%q) = %v, want %s", tc.in, got, tc.want)
		}
	}
}
