package tpch

import (
	"embed"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
)

// The 22 queries are kept as data, one file per query for every engine, with the substitution
// parameters of the specification's clause 2.4 as [NAME] placeholders (the spec's own notation).
//
//go:embed queries
var queryFiles embed.FS

const numQueries = 22

// queryText returns the query's statements with params substituted. Q15 has three (create view,
// select, drop view); the others one. stream names Q15's view so concurrent streams do not collide.
func queryText(q int, params map[string]string, stream int) ([]string, error) {
	// One text serves every engine: interval '3' month and aliased derived-table columns are
	// accepted by PostgreSQL, MySQL and MariaDB alike.
	b, err := queryFiles.ReadFile(fmt.Sprintf("queries/q%d.sql", q))
	if err != nil {
		return nil, fmt.Errorf("no text for Q%d: %w", q, err)
	}
	all := map[string]string{"STREAM": strconv.Itoa(stream)}
	for k, v := range params {
		all[k] = v
	}
	text, err := substitute(stripComments(string(b)), all)
	if err != nil {
		return nil, fmt.Errorf("query Q%d: %w", q, err)
	}
	var stmts []string
	for _, s := range strings.Split(text, ";\n") {
		if s = strings.TrimSpace(s); s != "" {
			stmts = append(stmts, s)
		}
	}
	return stmts, nil
}

var placeholder = regexp.MustCompile(`\[([A-Z][A-Z0-9_]*)\]`)

// substitute replaces every [NAME] and refuses a placeholder without a value, so a typo in a
// query file cannot reach the server as literal text that happens to parse.
func substitute(text string, params map[string]string) (string, error) {
	var missing []string
	out := placeholder.ReplaceAllStringFunc(text, func(m string) string {
		name := m[1 : len(m)-1]
		v, ok := params[name]
		if !ok {
			missing = append(missing, name)
			return m
		}
		return v
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("no value for parameter(s) %s", strings.Join(missing, ", "))
	}
	return out, nil
}

func stripComments(s string) string {
	var b strings.Builder
	for _, line := range strings.Split(s, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "--") {
			continue
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String()
}

// validationParams are the specification's validation (qualification) values, the ones the
// official answers were produced with (qgen -d). Q11's FRACTION depends on the scale factor.
func validationParams(q int, sf float64) map[string]string {
	switch q {
	case 1:
		return map[string]string{"DELTA": "90"}
	case 2:
		return map[string]string{"SIZE": "15", "TYPE": "BRASS", "REGION": "EUROPE"}
	case 3:
		return map[string]string{"SEGMENT": "BUILDING", "DATE": "1995-03-15"}
	case 4:
		return map[string]string{"DATE": "1993-07-01"}
	case 5:
		return map[string]string{"REGION": "ASIA", "DATE": "1994-01-01"}
	case 6:
		return map[string]string{"DATE": "1994-01-01", "DISCOUNT": "0.06", "QUANTITY": "24"}
	case 7:
		return map[string]string{"NATION1": "FRANCE", "NATION2": "GERMANY"}
	case 8:
		return map[string]string{"NATION": "BRAZIL", "REGION": "AMERICA", "TYPE": "ECONOMY ANODIZED STEEL"}
	case 9:
		return map[string]string{"COLOR": "green"}
	case 10:
		return map[string]string{"DATE": "1993-10-01"}
	case 11:
		return map[string]string{"NATION": "GERMANY", "FRACTION": q11Fraction(sf)}
	case 12:
		return map[string]string{"SHIPMODE1": "MAIL", "SHIPMODE2": "SHIP", "DATE": "1994-01-01"}
	case 13:
		return map[string]string{"WORD1": "special", "WORD2": "requests"}
	case 14:
		return map[string]string{"DATE": "1995-09-01"}
	case 15:
		return map[string]string{"DATE": "1996-01-01"}
	case 16:
		p := map[string]string{"BRAND": "Brand#45", "TYPE": "MEDIUM POLISHED"}
		for i, s := range []string{"49", "14", "23", "45", "19", "3", "36", "9"} {
			p["SIZE"+strconv.Itoa(i+1)] = s
		}
		return p
	case 17:
		return map[string]string{"BRAND": "Brand#23", "CONTAINER": "MED BOX"}
	case 18:
		return map[string]string{"QUANTITY": "300"}
	case 19:
		return map[string]string{"BRAND1": "Brand#12", "BRAND2": "Brand#23", "BRAND3": "Brand#34",
			"QUANTITY1": "1", "QUANTITY2": "10", "QUANTITY3": "20"}
	case 20:
		return map[string]string{"COLOR": "forest", "DATE": "1994-01-01", "NATION": "CANADA"}
	case 21:
		return map[string]string{"NATION": "SAUDI ARABIA"}
	case 22:
		p := map[string]string{}
		for i, s := range []string{"13", "31", "23", "29", "30", "18", "17"} {
			p["I"+strconv.Itoa(i+1)] = s
		}
		return p
	}
	return nil
}

// q11Fraction is 0.0001/SF, printed as qgen prints it (%11.10f).
func q11Fraction(sf float64) string { return strconv.FormatFloat(0.0001/sf, 'f', 10, 64) }

// Value lists of the specification's clause 4.2.2.13 and 4.2.3 that the parameters draw from.
var (
	regions = []string{"AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST"}
	// nations in n_nationkey order with the index of their region.
	nations = []struct {
		name   string
		region int
	}{
		{"ALGERIA", 0}, {"ARGENTINA", 1}, {"BRAZIL", 1}, {"CANADA", 1}, {"EGYPT", 4}, {"ETHIOPIA", 0},
		{"FRANCE", 3}, {"GERMANY", 3}, {"INDIA", 2}, {"INDONESIA", 2}, {"IRAN", 4}, {"IRAQ", 4},
		{"JAPAN", 2}, {"JORDAN", 4}, {"KENYA", 0}, {"MOROCCO", 0}, {"MOZAMBIQUE", 0}, {"PERU", 1},
		{"CHINA", 2}, {"ROMANIA", 3}, {"SAUDI ARABIA", 4}, {"VIETNAM", 2}, {"RUSSIA", 3},
		{"UNITED KINGDOM", 3}, {"UNITED STATES", 1},
	}
	typeSyllable1      = []string{"STANDARD", "SMALL", "MEDIUM", "LARGE", "ECONOMY", "PROMO"}
	typeSyllable2      = []string{"ANODIZED", "BURNISHED", "PLATED", "POLISHED", "BRUSHED"}
	typeSyllable3      = []string{"TIN", "NICKEL", "BRASS", "STEEL", "COPPER"}
	containerSyllable1 = []string{"SM", "LG", "MED", "JUMBO", "WRAP"}
	containerSyllable2 = []string{"CASE", "BOX", "BAG", "JAR", "PKG", "PACK", "CAN", "DRUM"}
	segments           = []string{"AUTOMOBILE", "BUILDING", "FURNITURE", "MACHINERY", "HOUSEHOLD"}
	shipModes          = []string{"REG AIR", "AIR", "RAIL", "SHIP", "TRUCK", "MAIL", "FOB"}
	q13Word1           = []string{"special", "pending", "unusual", "express"}
	q13Word2           = []string{"packages", "requests", "accounts", "deposits"}
	colors             = strings.Fields(`almond antique aquamarine azure beige bisque black blanched blue
		blush brown burlywood burnished chartreuse chiffon chocolate coral cornflower cornsilk cream
		cyan dark deep dim dodger drab firebrick floral forest frosted gainsboro ghost goldenrod green
		grey honeydew hot indian ivory khaki lace lavender lawn lemon light lime linen magenta maroon
		medium metallic midnight mint misty moccasin navajo navy olive orange orchid pale papaya peach
		peru pink plum powder puff purple red rose rosy royal saddle salmon sandy seashell sienna sky
		slate smoke snow spring steel tan thistle tomato turquoise violet wheat white yellow`)
)

// randomParams draws one query's substitution parameters as clause 2.4.N.3 of the specification
// (and qgen's varsub.c) define them. The values follow the spec's ranges; the random stream is
// fairbench's own (qgen's generator is not reproduced), so a seed gives the same parameters on
// every engine and every run, not the ones qgen would print for that seed.
//
// It stays one function over 80 lines on purpose: it is a table, one short case per query in the
// spec's order, read side by side with clause 2.4; split, a reader would hunt for query N's
// parameters across functions, and the draws of each case must stay in their order for a seed to
// keep giving the same parameters.
func randomParams(q int, sf float64, seed uint64, stream int) map[string]string {
	r := rand.New(rand.NewPCG(seed, uint64(stream)<<8|uint64(q)))
	pick := func(list []string) string { return list[r.IntN(len(list))] }
	between := func(lo, hi int) int { return lo + r.IntN(hi-lo+1) }
	month := func(first, last int) string { // months counted from January 1993 = 0
		m := between(first, last)
		return fmt.Sprintf("%d-%02d-01", 1993+m/12, m%12+1)
	}
	year := func() string { return fmt.Sprintf("%d-01-01", between(1993, 1997)) }
	brand := func() string { return fmt.Sprintf("Brand#%d%d", between(1, 5), between(1, 5)) }
	nation := func() int { return r.IntN(len(nations)) }
	switch q {
	case 1:
		return map[string]string{"DELTA": strconv.Itoa(between(60, 120))}
	case 2:
		return map[string]string{"SIZE": strconv.Itoa(between(1, 50)), "TYPE": pick(typeSyllable3), "REGION": pick(regions)}
	case 3:
		return map[string]string{"SEGMENT": pick(segments), "DATE": fmt.Sprintf("1995-03-%02d", between(1, 31))}
	case 4:
		return map[string]string{"DATE": month(0, 57)} // January 1993 to October 1997
	case 5:
		return map[string]string{"REGION": pick(regions), "DATE": year()}
	case 6:
		return map[string]string{"DATE": year(), "DISCOUNT": fmt.Sprintf("0.%02d", between(2, 9)), "QUANTITY": strconv.Itoa(between(24, 25))}
	case 7:
		n1 := nation()
		n2 := nation()
		for n2 == n1 {
			n2 = nation()
		}
		return map[string]string{"NATION1": nations[n1].name, "NATION2": nations[n2].name}
	case 8:
		n := nations[nation()]
		return map[string]string{"NATION": n.name, "REGION": regions[n.region],
			"TYPE": pick(typeSyllable1) + " " + pick(typeSyllable2) + " " + pick(typeSyllable3)}
	case 9:
		return map[string]string{"COLOR": pick(colors)}
	case 10:
		return map[string]string{"DATE": month(1, 24)} // February 1993 to January 1995
	case 11:
		return map[string]string{"NATION": nations[nation()].name, "FRACTION": q11Fraction(sf)}
	case 12:
		m1 := pick(shipModes)
		m2 := pick(shipModes)
		for m2 == m1 {
			m2 = pick(shipModes)
		}
		return map[string]string{"SHIPMODE1": m1, "SHIPMODE2": m2, "DATE": year()}
	case 13:
		return map[string]string{"WORD1": pick(q13Word1), "WORD2": pick(q13Word2)}
	case 14:
		return map[string]string{"DATE": month(0, 59)} // any month of 1993 to 1997
	case 15:
		return map[string]string{"DATE": month(0, 57)} // January 1993 to October 1997
	case 16:
		p := map[string]string{"BRAND": brand(), "TYPE": pick(typeSyllable1) + " " + pick(typeSyllable2)}
		for i, s := range r.Perm(50)[:8] {
			p["SIZE"+strconv.Itoa(i+1)] = strconv.Itoa(s + 1)
		}
		return p
	case 17:
		return map[string]string{"BRAND": brand(), "CONTAINER": pick(containerSyllable1) + " " + pick(containerSyllable2)}
	case 18:
		return map[string]string{"QUANTITY": strconv.Itoa(between(312, 315))}
	case 19:
		return map[string]string{"BRAND1": brand(), "BRAND2": brand(), "BRAND3": brand(),
			"QUANTITY1": strconv.Itoa(between(1, 10)), "QUANTITY2": strconv.Itoa(between(10, 20)),
			"QUANTITY3": strconv.Itoa(between(20, 30))}
	case 20:
		return map[string]string{"COLOR": pick(colors), "DATE": year(), "NATION": nations[nation()].name}
	case 21:
		return map[string]string{"NATION": nations[nation()].name}
	case 22:
		p := map[string]string{}
		for i, c := range r.Perm(len(nations))[:7] {
			p["I"+strconv.Itoa(i+1)] = strconv.Itoa(10 + c) // country codes are n_nationkey + 10
		}
		return p
	}
	return nil
}

// params is the parameter set a query runs with: the validation values for seed 0, else random
// values for that seed and stream.
func params(q int, sf float64, seed uint64, stream int) map[string]string {
	if seed == 0 {
		return validationParams(q, sf)
	}
	return randomParams(q, sf, seed, stream)
}

// permutation is the specification's Appendix A: the order of the 22 queries in each query
// stream. Row 0 is the power test's stream; throughput stream s (from 1) uses row s mod 41.
var permutation = [41][numQueries]int{
	{14, 2, 9, 20, 6, 17, 18, 8, 21, 13, 3, 22, 16, 4, 11, 15, 1, 10, 19, 5, 7, 12},
	{21, 3, 18, 5, 11, 7, 6, 20, 17, 12, 16, 15, 13, 10, 2, 8, 14, 19, 9, 22, 1, 4},
	{6, 17, 14, 16, 19, 10, 9, 2, 15, 8, 5, 22, 12, 7, 13, 18, 1, 4, 20, 3, 11, 21},
	{8, 5, 4, 6, 17, 7, 1, 18, 22, 14, 9, 10, 15, 11, 20, 2, 21, 19, 13, 16, 12, 3},
	{5, 21, 14, 19, 15, 17, 12, 6, 4, 9, 8, 16, 11, 2, 10, 18, 1, 13, 7, 22, 3, 20},
	{21, 15, 4, 6, 7, 16, 19, 18, 14, 22, 11, 13, 3, 1, 2, 5, 8, 20, 12, 17, 10, 9},
	{10, 3, 15, 13, 6, 8, 9, 7, 4, 11, 22, 18, 12, 1, 5, 16, 2, 14, 19, 20, 17, 21},
	{18, 8, 20, 21, 2, 4, 22, 17, 1, 11, 9, 19, 3, 13, 5, 7, 10, 16, 6, 14, 15, 12},
	{19, 1, 15, 17, 5, 8, 9, 12, 14, 7, 4, 3, 20, 16, 6, 22, 10, 13, 2, 21, 18, 11},
	{8, 13, 2, 20, 17, 3, 6, 21, 18, 11, 19, 10, 15, 4, 22, 1, 7, 12, 9, 14, 5, 16},
	{6, 15, 18, 17, 12, 1, 7, 2, 22, 13, 21, 10, 14, 9, 3, 16, 20, 19, 11, 4, 8, 5},
	{15, 14, 18, 17, 10, 20, 16, 11, 1, 8, 4, 22, 5, 12, 3, 9, 21, 2, 13, 6, 19, 7},
	{1, 7, 16, 17, 18, 22, 12, 6, 8, 9, 11, 4, 2, 5, 20, 21, 13, 10, 19, 3, 14, 15},
	{21, 17, 7, 3, 1, 10, 12, 22, 9, 16, 6, 11, 2, 4, 5, 14, 8, 20, 13, 18, 15, 19},
	{2, 9, 5, 4, 18, 1, 20, 15, 16, 17, 7, 21, 13, 14, 19, 8, 22, 11, 10, 3, 12, 6},
	{16, 9, 17, 8, 14, 11, 10, 12, 6, 21, 7, 3, 15, 5, 22, 20, 1, 13, 19, 2, 4, 18},
	{1, 3, 6, 5, 2, 16, 14, 22, 17, 20, 4, 9, 10, 11, 15, 8, 12, 19, 18, 13, 7, 21},
	{3, 16, 5, 11, 21, 9, 2, 15, 10, 18, 17, 7, 8, 19, 14, 13, 1, 4, 22, 20, 6, 12},
	{14, 4, 13, 5, 21, 11, 8, 6, 3, 17, 2, 20, 1, 19, 10, 9, 12, 18, 15, 7, 22, 16},
	{4, 12, 22, 14, 5, 15, 16, 2, 8, 10, 17, 9, 21, 7, 3, 6, 13, 18, 11, 20, 19, 1},
	{16, 15, 14, 13, 4, 22, 18, 19, 7, 1, 12, 17, 5, 10, 20, 3, 9, 21, 11, 2, 6, 8},
	{20, 14, 21, 12, 15, 17, 4, 19, 13, 10, 11, 1, 16, 5, 18, 7, 8, 22, 9, 6, 3, 2},
	{16, 14, 13, 2, 21, 10, 11, 4, 1, 22, 18, 12, 19, 5, 7, 8, 6, 3, 15, 20, 9, 17},
	{18, 15, 9, 14, 12, 2, 8, 11, 22, 21, 16, 1, 6, 17, 5, 10, 19, 4, 20, 13, 3, 7},
	{7, 3, 10, 14, 13, 21, 18, 6, 20, 4, 9, 8, 22, 15, 2, 1, 5, 12, 19, 17, 11, 16},
	{18, 1, 13, 7, 16, 10, 14, 2, 19, 5, 21, 11, 22, 15, 8, 17, 20, 3, 4, 12, 6, 9},
	{13, 2, 22, 5, 11, 21, 20, 14, 7, 10, 4, 9, 19, 18, 6, 3, 1, 8, 15, 12, 17, 16},
	{14, 17, 21, 8, 2, 9, 6, 4, 5, 13, 22, 7, 15, 3, 1, 18, 16, 11, 10, 12, 20, 19},
	{10, 22, 1, 12, 13, 18, 21, 20, 2, 14, 16, 7, 15, 3, 4, 17, 5, 19, 6, 8, 9, 11},
	{10, 8, 9, 18, 12, 6, 1, 5, 20, 11, 17, 22, 16, 3, 13, 2, 15, 21, 14, 19, 7, 4},
	{7, 17, 22, 5, 3, 10, 13, 18, 9, 1, 14, 15, 21, 19, 16, 12, 8, 6, 11, 20, 4, 2},
	{2, 9, 21, 3, 4, 7, 1, 11, 16, 5, 20, 19, 18, 8, 17, 13, 10, 12, 15, 6, 14, 22},
	{15, 12, 8, 4, 22, 13, 16, 17, 18, 3, 7, 5, 6, 1, 9, 11, 21, 10, 14, 20, 19, 2},
	{15, 16, 2, 11, 17, 7, 5, 14, 20, 4, 21, 3, 10, 9, 12, 8, 13, 6, 18, 19, 22, 1},
	{1, 13, 11, 3, 4, 21, 6, 14, 15, 22, 18, 9, 7, 5, 10, 20, 12, 16, 17, 8, 19, 2},
	{14, 17, 22, 20, 8, 16, 5, 10, 1, 13, 2, 21, 12, 9, 4, 18, 3, 7, 6, 19, 15, 11},
	{9, 17, 7, 4, 5, 13, 21, 18, 11, 3, 22, 1, 6, 16, 20, 14, 15, 10, 8, 2, 12, 19},
	{13, 14, 5, 22, 19, 11, 9, 6, 18, 15, 8, 10, 7, 4, 17, 16, 3, 1, 12, 2, 21, 20},
	{20, 5, 4, 14, 11, 1, 6, 16, 8, 22, 7, 3, 2, 12, 21, 19, 17, 13, 10, 15, 18, 9},
	{3, 7, 14, 15, 6, 5, 21, 20, 18, 10, 4, 16, 19, 1, 13, 9, 8, 17, 11, 12, 22, 2},
	{13, 15, 17, 1, 22, 11, 3, 4, 7, 20, 14, 21, 9, 8, 2, 18, 16, 6, 10, 12, 5, 19},
}

// streamOrder is the order a throughput stream (from 1) runs the selected queries in: the
// permutation's order, restricted to the queries asked for.
func streamOrder(stream int, selected []int) []int {
	want := map[int]bool{}
	for _, q := range selected {
		want[q] = true
	}
	var out []int
	for _, q := range permutation[stream%len(permutation)] {
		if want[q] {
			out = append(out, q)
		}
	}
	return out
}
