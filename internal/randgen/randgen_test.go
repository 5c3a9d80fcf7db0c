package randgen

import (
	"math"
	"testing"
)

func newRand(t *testing.T, typ string) *Rand {
	t.Helper()
	c := DefaultConfig(typ)
	if err := c.Init(); err != nil {
		t.Fatal(err)
	}
	return c.New(42)
}

// Every distribution must stay inside [a, b], as sysbench's do; ids outside would miss rows.
func TestDefaultStaysInRange(t *testing.T) {
	for _, typ := range Types {
		t.Run(typ, func(t *testing.T) {
			r := newRand(t, typ)
			for i := 0; i < 200000; i++ {
				v := r.Default(1, 1000)
				if v < 1 || v > 1000 {
					t.Fatalf("%s gave %d outside [1, 1000]", typ, v)
				}
			}
		})
	}
}

// The shapes that make the distributions what they are, checked with sysbench's default parameters.
func TestDistributionShapes(t *testing.T) {
	const n, draws = 10000, 400000
	hist := func(typ string) []int {
		r := newRand(t, typ)
		h := make([]int, n+1)
		for i := 0; i < draws; i++ {
			h[r.Default(1, n)]++
		}
		return h
	}
	share := func(h []int, lo, hi int) float64 {
		s := 0
		for i := lo; i <= hi; i++ {
			s += h[i]
		}
		return float64(s) / draws
	}
	cases := []struct {
		typ      string
		lo, hi   int
		min, max float64
		whatItIs string
	}{
		{"uniform", 1, n / 10, 0.09, 0.11, "a tenth of the range gets a tenth of the draws"},
		// special: 75% of values fall in the 1% band at the centre (4950..5050), plus the gaussian share there.
		{"special", 4950, 5051, 0.75, 0.80, "three quarters of the draws hit the central 1%"},
		{"gaussian", 4000, 6000, 0.74, 0.80, "the mean of 12 uniforms has sigma = range/12: ±1.2 sigma holds 77%"},
		{"pareto", 1, n / 5, 0.75, 0.85, "80/20: a fifth of the keys get about 80% of the draws"},
		{"zipfian", 1, 10, 0.12, 0.145, "exponent 0.8: the first 10 of 10,000 ranks take H(10)/H(10000) = 13%"},
	}
	for _, c := range cases {
		t.Run(c.typ, func(t *testing.T) {
			got := share(hist(c.typ), c.lo, c.hi)
			if got < c.min || got > c.max {
				t.Errorf("%s: share of [%d, %d] = %.3f, want %.2f..%.2f (%s)", c.typ, c.lo, c.hi, got, c.min, c.max, c.whatItIs)
			}
		})
	}
}

func TestUniformMeanAndEnds(t *testing.T) {
	r := newRand(t, "uniform")
	sum, seenLo, seenHi := 0.0, false, false
	for i := 0; i < 100000; i++ {
		v := r.Uniform(1, 10)
		sum += float64(v)
		seenLo = seenLo || v == 1
		seenHi = seenHi || v == 10
	}
	if mean := sum / 100000; math.Abs(mean-5.5) > 0.05 {
		t.Errorf("mean of uniform(1,10) = %.3f, want 5.5", mean)
	}
	if !seenLo || !seenHi {
		t.Errorf("uniform(1,10) must reach both ends: 1 seen %v, 10 seen %v", seenLo, seenHi)
	}
}

func TestFillStringKeepsTemplateShape(t *testing.T) {
	r := newRand(t, "uniform")
	tmpl := "###########-@@@-###########"
	buf := make([]byte, len(tmpl))
	r.FillString(buf, tmpl)
	for i, ch := range buf {
		switch tmpl[i] {
		case '#':
			if ch < '0' || ch > '9' {
				t.Fatalf("position %d: %q is not a digit", i, ch)
			}
		case '@':
			if ch < 'a' || ch > 'z' {
				t.Fatalf("position %d: %q is not a letter", i, ch)
			}
		default:
			if ch != tmpl[i] {
				t.Fatalf("position %d: %q, want %q", i, ch, tmpl[i])
			}
		}
	}
}

func TestSameSeedSameStream(t *testing.T) {
	a, b := newRand(t, "special"), newRand(t, "special")
	for i := 0; i < 1000; i++ {
		if x, y := a.Default(1, 1e6), b.Default(1, 1e6); x != y {
			t.Fatalf("draw %d differs: %d vs %d", i, x, y)
		}
	}
}

func TestBadConfig(t *testing.T) {
	for _, c := range []Config{
		{Type: "lognormal", SpecIter: 12, ParetoH: 0.2},
		{Type: "special", SpecIter: 0, ParetoH: 0.2},
		{Type: "pareto", SpecIter: 12, ParetoH: 1.5},
		{Type: "zipfian", SpecIter: 12, ParetoH: 0.2, ZipfExp: -1},
	} {
		if err := c.Init(); err == nil {
			t.Errorf("%+v: want an error", c)
		}
	}
}
