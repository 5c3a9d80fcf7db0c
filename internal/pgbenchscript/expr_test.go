package pgbenchscript

import (
	"math"
	"strings"
	"testing"

	"github.com/fairbench/fairbench/internal/randgen"
)

func newState(seed uint64) *state {
	cfg := randgen.DefaultConfig("uniform")
	if err := cfg.Init(); err != nil {
		panic(err)
	}
	return &state{rng: cfg.New(seed), defaultSeed: 5432, vars: map[string]value{
		"scale": intOf(10), "x": doubleOf(2.5), "s": {kind: stringValue, s: "42"}, "n": {},
	}}
}

func eval(t *testing.T, s *state, text string) (value, error) {
	t.Helper()
	e, err := parseExpr(text)
	if err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	return e.eval(s)
}

// Operators, precedence and types as pgbench computes them (PostgreSQL 17 documentation's
// examples where it gives them).
func TestEval(t *testing.T) {
	for _, c := range []struct{ expr, want string }{
		{"1 + 2 * 3", "7"},
		{"(1 + 2) * 3", "9"},
		{"7 / 2", "3"},
		{"-7 / 2", "-3"},
		{"7 % 3", "1"},
		{"7.0 / 2", "3.5"},
		{"100000 * :scale", "1000000"},
		{":x * 2", "5"},
		{":s + 1", "43"},
		{"1 << 4 | 1", "17"},
		{"5 # 1", "4"},
		{"~0", "-1"},
		{"-(3)", "-3"},
		{"1 < 2 and 2 < 3", "true"},
		{"1 = 2 or not 1 = 2", "true"},
		{"not 1 = 2 and 1 = 2", "false"},
		{":n is null", "true"},
		{"1 is not null", "true"},
		{":n isnull", "true"},
		{":n + 1", "NULL"},
		{"case when 1 > 2 then 10 when 2 > 1 then 20 else 30 end", "20"},
		{"case when false then 1 end", "NULL"},
		{"abs(-5)", "5"},
		{"abs(-5.5)", "5.5"},
		{"int(5.9)", "5"},
		{"int(-5.9)", "-5"},
		{"double(5)", "5"},
		{"greatest(1, 3, 2)", "3"},
		{"greatest(1, 3.5, 2)", "3.5"},
		{"least(4, 2, 7)", "2"},
		{"mod(-7, 3)", "-1"},
		{"pow(2, 10)", "1024"},
		{"sqrt(2.0)", "1.4142135623730951"},
		{"pi()", "3.141592653589793"},
		{"1 <> 2", "true"},
		{"1 != 1", "false"},
		{"2 >= 2.0", "true"},
	} {
		v, err := eval(t, newState(1), c.expr)
		if err != nil || v.String() != c.want {
			t.Errorf("%s = %s (%v), want %s", c.expr, v, err, c.want)
		}
	}
}

func TestEvalErrors(t *testing.T) {
	for _, c := range []struct{ expr, want string }{
		{"1 / 0", "division by zero"},
		{"1 % 0", "division by zero"},
		{"9223372036854775807 + 1", "bigint out of range"},
		{"-9223372036854775807 - 2", "bigint out of range"},
		{"4611686018427387904 * 2", "bigint out of range"},
		{":nosuch + 1", "undefined variable :nosuch"},
		{"random(5, 1)", "empty range given to random"},
		{"random_zipfian(1, 10, 0.5)", "parameter must be in [1.001, 1000]"},
		{"random_gaussian(1, 10, 1)", "parameter must be at least 2.0"},
		{"random_exponential(1, 10, 0)", "parameter must be greater than 0"},
	} {
		_, err := eval(t, newState(1), c.expr)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.expr, err, c.want)
		}
	}
}

// The random functions stay in their bounds and have the shape pgbench gives them: uniform's
// mean in the middle, exponential and zipfian crowded at the low end, gaussian centred.
func TestRandomShapes(t *testing.T) {
	s := newState(7)
	const n = 20000
	for _, c := range []struct {
		expr           string
		lo, hi         int64
		meanLo, meanHi float64
	}{
		{"random(1, 100)", 1, 100, 49, 52},
		{"random(-5000, 5000)", -5000, 5000, -100, 100},
		{"random_exponential(1, 100, 5)", 1, 100, 15, 25},
		{"random_gaussian(1, 100, 3)", 1, 100, 49, 52},
		{"random_zipfian(1, 100, 1.5)", 1, 100, 1, 15},
	} {
		e, err := parseExpr(c.expr)
		if err != nil {
			t.Fatal(err)
		}
		sum := 0.0
		for range n {
			v, err := e.eval(s)
			if err != nil {
				t.Fatal(err)
			}
			if v.i < c.lo || v.i > c.hi {
				t.Fatalf("%s gave %d", c.expr, v.i)
			}
			sum += float64(v.i)
		}
		if mean := sum / n; mean < c.meanLo || mean > c.meanHi || math.IsNaN(mean) {
			t.Errorf("%s: mean %.1f, want %.0f–%.0f", c.expr, mean, c.meanLo, c.meanHi)
		}
	}
}

// The hash functions give pgbench's own values (pgbench's documentation: hash_fnv1a(10, 5432)
// and hash_murmur2(10, 5432)); hash is murmur2 with :default_seed.
func TestHash(t *testing.T) {
	for _, c := range []struct {
		expr string
		want int64
	}{
		{"hash_fnv1a(10, 5432)", -7793829335365542153},
		{"hash_murmur2(10, 5432)", -5817877081768721676},
		{"hash(10)", -5817877081768721676}, // the test state's default seed is 5432
	} {
		v, err := eval(t, newState(1), c.expr)
		if err != nil || v.i != c.want {
			t.Errorf("%s = %v (%v), want %d", c.expr, v, err, c.want)
		}
	}
}

// permute is a permutation of [0, size): every value once, for sizes around powers of two.
func TestPermuteIsAPermutation(t *testing.T) {
	for _, size := range []int64{2, 3, 7, 8, 9, 100, 1000, 1024, 1025} {
		seen := make([]bool, size)
		for i := range size {
			p := permute(i, size, 5432)
			if p < 0 || p >= size || seen[p] {
				t.Fatalf("permute(%d, %d) = %d: out of range or repeated", i, size, p)
			}
			seen[p] = true
		}
	}
	if permute(3, 10, 1) == permute(3, 10, 2) && permute(4, 10, 1) == permute(4, 10, 2) {
		t.Error("the seed does not change the permutation")
	}
}
