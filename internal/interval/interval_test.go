package interval

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// sample draws n throughputs around center with multiplicative noise of the given relative
// standard deviation, plus, when paired, a per-round machine factor shared by both engines.
func sample(rng *rand.Rand, n int, center, noise float64, round []float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = center * math.Exp(rng.NormFloat64()*noise+round[i])
	}
	return out
}

func rounds(rng *rand.Rand, n int, drift float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = rng.NormFloat64() * drift
	}
	return out
}

// TestSyntheticRates runs the method on samples of known difference many times: with none, it
// must call a difference no more often than 1 − Confidence says (within sampling error); with a
// real one well above the noise, it must find it almost always and put the truth inside the
// interval at the stated rate.
func TestSyntheticRates(t *testing.T) {
	const trials = 4000
	cases := []struct {
		name         string
		n            int
		ratio, noise float64
		drift        float64 // per-round machine factor, shared by both sides
		paired       bool
		minFound     float64 // share of trials whose interval excludes 1
		maxFound     float64
		minCoverage  float64 // share whose interval holds the true ratio
	}{
		{"no difference, 3 rounds, paired", 3, 1, 0.08, 0.15, true, 0, 0.065, 0.935},
		{"no difference, 5 runs, unpaired", 5, 1, 0.08, 0, false, 0, 0.07, 0.93},
		{"25% apart, 3 rounds, 3% noise", 3, 1.25, 0.03, 0.15, true, 0.97, 1, 0.935},
		{"25% apart, 5 runs unpaired, 5% noise", 5, 1.25, 0.05, 0, false, 0.97, 1, 0.93},
		{"2% apart, 3 rounds, 10% noise: mostly a tie", 3, 1.02, 0.10, 0, true, 0, 0.10, 0.935},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(c.n)))
			found, covered := 0, 0
			for range trials {
				shared := rounds(rng, c.n, c.drift)
				a := sample(rng, c.n, 1000*c.ratio, c.noise, shared)
				b := sample(rng, c.n, 1000, c.noise, shared)
				r, ok := Of(a, b, c.paired)
				if !ok {
					t.Fatal("no interval from two samples of", c.n)
				}
				if r.Excludes(1) {
					found++
				}
				if r.Lo <= c.ratio && c.ratio <= r.Hi {
					covered++
				}
			}
			f, cov := float64(found)/trials, float64(covered)/trials
			if f < c.minFound || f > c.maxFound {
				t.Errorf("called a difference in %.1f%% of trials, want %.1f%%–%.1f%%", 100*f, 100*c.minFound, 100*c.maxFound)
			}
			if cov < c.minCoverage {
				t.Errorf("interval held the true ratio %.2f in %.1f%% of trials, want at least %.1f%%", c.ratio, 100*cov, 100*c.minCoverage)
			}
		})
	}
}

func TestOf(t *testing.T) {
	cases := []struct {
		name   string
		a, b   []float64
		paired bool
		ok     bool
		want   string
	}{
		{"single run", []float64{100}, []float64{90, 91}, true, false, ""},
		{"zeros left out", []float64{100, 0}, []float64{90, 91}, true, false, ""},
		{"no noise", []float64{120, 120, 120}, []float64{100, 100, 100}, true, true, "1.20× [1.20, 1.20]"},
		{"paired drift cancels", []float64{110, 220, 330}, []float64{100, 200, 300}, true, true, "1.10× [1.10, 1.10]"},
		{"same drift unpaired is wide", []float64{110, 220, 330}, []float64{100, 200, 300}, false, true, "1.10× [0.31, 3.88]"},
		{"unequal lengths fall back to unpaired", []float64{110, 112, 108, 111}, []float64{100, 101, 99}, true, true, "1.10× [1.08, 1.13]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, ok := Of(c.a, c.b, c.paired)
			if ok != c.ok {
				t.Fatalf("ok = %v, want %v", ok, c.ok)
			}
			if ok && r.String() != c.want {
				t.Errorf("got %s, want %s", r, c.want)
			}
		})
	}
}

// One median and one margin for the report and the studies: the middle (the mean of the two
// middle ones), 0 for none; a tie only when the whole interval lies within ±5%.
func TestMedianAndMargin(t *testing.T) {
	for _, c := range []struct {
		xs   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{3, 1}, 2}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := Median(c.xs); got != c.want {
			t.Errorf("Median(%v) = %v, want %v", c.xs, got, c.want)
		}
	}
	for _, c := range []struct {
		r    Ratio
		want bool
	}{{Ratio{Lo: 0.97, Hi: 1.04}, true}, {Ratio{Lo: 0.95, Hi: 1.01}, false}, {Ratio{Lo: 1.0, Hi: 1.06}, false}, {Ratio{Lo: 1 / 1.05, Hi: 1.05}, true}} {
		if got := c.r.WithinMargin(); got != c.want {
			t.Errorf("%+v.WithinMargin() = %v, want %v", c.r, got, c.want)
		}
	}
}

// An effect is judged as a pick is: none within ±Margin, open while its interval includes no
// change and reaches further, and under a sequential rule at the look its rounds reached.
func TestRuleEffect(t *testing.T) {
	for _, c := range []struct {
		name                  string
		rule                  Rule
		flipped, base         []float64
		expect                int
		real, none, open, bad bool
	}{
		{"a clear gain", Fixed, []float64{1500, 1520, 1490}, []float64{1000, 1010, 990}, 1, true, false, false, false},
		{"no effect within the margin", Fixed, []float64{1001, 1011, 991}, []float64{1000, 1010, 990}, 0, false, true, false, false},
		{"wide: open", Fixed, []float64{1200, 900, 1000}, []float64{1000, 1000, 1000}, 0, false, false, true, false},
		{"the wrong sign for the knob", Fixed, []float64{700, 710, 690}, []float64{1000, 1010, 990}, 1, false, false, false, true},
		{"one round: no interval, not open", Fixed, []float64{1500}, []float64{1000}, 0, false, false, false, false},
	} {
		e := c.rule.EffectOf(c.flipped, c.base, c.expect)
		if e.Real != c.real || e.None != c.none || e.Open() != c.open || e.WrongSign != c.bad {
			t.Errorf("%s: %+v (open %v); want real %v none %v open %v wrong sign %v", c.name, e, e.Open(), c.real, c.none, c.open, c.bad)
		}
	}
	if s := Fixed.EffectOf([]float64{1001, 1011, 991}, []float64{1000, 1010, 990}, 0).String(); !strings.Contains(s, "(none: within ±5%)") {
		t.Errorf("no effect reads %q", s)
	}
	// Logs ±0.035 around a 10% gain: decided by a fixed 95% interval, open at the first look.
	f, b := []float64{1073, 1105, 1150}, []float64{1000, 1000, 1000}
	if e := Fixed.EffectOf(f, b, 0); !e.Real {
		t.Errorf("fixed: %+v, want a gain", e)
	}
	e := Sequential(3).EffectOf(f, b, 0)
	if !e.Open() || e.Ratio.Look != 1 {
		t.Errorf("sequential: %+v, want open at look 1", e)
	}
	// An open effect says what would decide it, as an open pick does.
	if n, _ := Sequential(3).RoundsToDecide(e.Ratio); n == 0 || e.ToDecide != n || !strings.Contains(e.String(), fmt.Sprintf("(within noise; about %d rounds in all would decide)", n)) {
		t.Errorf("open effect %q, ToDecide %d, want the rounds that would decide it (%d)", e.String(), e.ToDecide, n)
	}
}

// How near an interval is to a decision: the share of its width a decision lets it keep.
func TestNearness(t *testing.T) {
	for _, tc := range []struct {
		lo, hi, want float64
	}{
		{1.10, 1.30, 1}, // excludes 1: decided
		{0.98, 1.02, 1}, // within ±5%: decided (a tie)
		{0.95, 1.15, math.Log(1.15*0.95) / math.Log(1.15/0.95)},
		{0.80, 1.25, math.Log(1.05) / math.Log(1.25)}, // centred on 1: only a tie can come
	} {
		got := Ratio{Lo: tc.lo, Hi: tc.hi}.Nearness()
		if tc.want >= 1 {
			if got < 1 {
				t.Errorf("[%.2f, %.2f]: nearness %.3f, want at least 1 (decided)", tc.lo, tc.hi, got)
			}
			continue
		}
		if math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("[%.2f, %.2f]: nearness %.4f, want %.4f", tc.lo, tc.hi, got, tc.want)
		}
	}
}
