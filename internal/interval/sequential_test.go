package interval

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// machine draws one round's log ratio best/other around the truth: normal noise of the given
// standard deviation, and on a noisy machine now and then a round in which one engine alone was
// slowed by a quarter (a neighbour's burst, a checkpoint), which no pairing cancels.
type machine struct {
	name      string
	noise     float64
	burstProb float64
}

func (m machine) round(rng *rand.Rand, truth float64) float64 {
	d := math.Log(truth) + rng.NormFloat64()*m.noise
	if rng.Float64() < m.burstProb {
		if rng.IntN(2) == 0 {
			d += math.Log(0.75)
		} else {
			d -= math.Log(0.75)
		}
	}
	return d
}

// claim is what one look decided of a over b: +1 a faster, -1 b faster, 0 equal; ok false
// while the interval leaves it open.
func claim(r Ratio) (c int, ok bool) {
	switch {
	case r.WithinMargin():
		return 0, true
	case r.Lo > 1:
		return 1, true
	case r.Hi < 1:
		return -1, true
	}
	return 0, false
}

// wrong says whether a claim about engines whose true ratio is truth is false: a difference
// claimed where there is none, the wrong engine called faster, or "equal" where the truth lies
// outside the margin.
func wrong(c int, truth float64) bool {
	within := truth >= 1/(1+Margin) && truth <= 1+Margin
	switch c {
	case 0:
		return !within
	case 1:
		return truth <= 1
	}
	return truth >= 1
}

// sequence runs one comparison: rounds added one by one up to maxRounds, judged at every round
// count look says to, stopping at the first decision. It gives the claim and the rounds it took
// (maxRounds and ok false when undecided).
func sequence(rng *rand.Rand, m machine, truth float64, maxRounds int, judge func(a, b []float64) Ratio, look func(n int) bool) (c, rounds int, ok bool) {
	var a, b []float64
	for n := 1; n <= maxRounds; n++ {
		shared := rng.NormFloat64() * 0.1 // the machine's round-to-round drift, shared by both
		d := m.round(rng, truth)
		a, b = append(a, 1000*math.Exp(shared+d)), append(b, 1000*math.Exp(shared))
		if !look(n) {
			continue
		}
		if c, ok := claim(judge(a, b)); ok {
			return c, n, true
		}
	}
	return 0, maxRounds, false
}

// TestSequentialErrorHolds simulates rounds until decided with known truths on a quiet and a
// noisy machine and counts false decisions over the whole sequence of looks: at most
// 1 − Confidence, however many looks were taken. It logs how often and after how many rounds the
// rule decided, which is the price of the guarantee.
func TestSequentialErrorHolds(t *testing.T) {
	const trials, maxRounds = 2000, 41 // looks at 5, 8, 12, 18, 27 and 41 rounds
	rule := Sequential(5)
	judge := func(a, b []float64) Ratio { r, _ := rule.Of(a, b, true); return r }
	looks := func(n int) bool { _, at := rule.lookAt(n); return n >= rule.MinRounds && at == n }
	machines := []machine{{"quiet", 0.06, 0}, {"noisy", 0.15, 0.1}}
	truths := []struct {
		ratio      float64
		minDecided float64 // share of trials decided within maxRounds, on the quiet machine
	}{{1, 0.5}, {1.03, 0}, {1.10, 0.9}, {1.25, 0.99}}
	for _, m := range machines {
		for _, tr := range truths {
			rng := rand.New(rand.NewPCG(7, uint64(1000*tr.ratio)))
			falses, decided := 0, 0
			var took []int
			for range trials {
				c, n, ok := sequence(rng, m, tr.ratio, maxRounds, judge, looks)
				if !ok {
					continue
				}
				decided++
				took = append(took, n)
				if wrong(c, tr.ratio) {
					falses++
				}
			}
			rate := float64(falses) / trials
			t.Logf("%s machine, true ratio %.2f: decided %.1f%%, median rounds %v, false decisions %.2f%%",
				m.name, tr.ratio, 100*float64(decided)/trials, median(took), 100*rate)
			if rate > 1-Confidence {
				t.Errorf("%s machine, true ratio %.2f: %.2f%% false decisions over the looks, more than %.0f%%",
					m.name, tr.ratio, 100*rate, 100*(1-Confidence))
			}
			if m.name == "quiet" && float64(decided)/trials < tr.minDecided {
				t.Errorf("quiet machine, true ratio %.2f: decided in %.1f%% of the trials, want at least %.0f%%",
					tr.ratio, 100*float64(decided)/trials, 100*tr.minDecided)
			}
		}
	}
}

// TestPeekingEveryRoundErrs is why the rule exists: a fixed 95% interval judged after every round
// from the fifth on calls a difference between equal engines far more often than 5%.
func TestPeekingEveryRoundErrs(t *testing.T) {
	const trials, maxRounds = 2000, 41
	rng := rand.New(rand.NewPCG(3, 4))
	m := machine{"noisy", 0.15, 0}
	judge := func(a, b []float64) Ratio { r, _ := Of(a, b, true); return r }
	falses := 0
	for range trials {
		c, _, ok := sequence(rng, m, 1, maxRounds, judge, func(n int) bool { return n >= 5 })
		if ok && wrong(c, 1) {
			falses++
		}
	}
	rate := float64(falses) / trials
	t.Logf("equal engines, a 95%% interval after every round from 5 to %d: %.1f%% false decisions", maxRounds, 100*rate)
	if rate < 0.08 {
		t.Errorf("peeking gave %.1f%% false decisions; the simulation no longer shows why looks must be planned", 100*rate)
	}
}

func TestLooks(t *testing.T) {
	rule := Sequential(5)
	var at []int
	for n := 1; n <= 41; n++ {
		if k, r := rule.lookAt(n); r == n && n >= 5 {
			at = append(at, n)
			if want := len(at); k != want {
				t.Errorf("look at %d rounds is number %d, want %d", n, k, want)
			}
		}
	}
	if want := []int{5, 8, 12, 18, 27, 41}; !slices.Equal(at, want) {
		t.Errorf("looks at %v, want %v", at, want)
	}
	if got := rule.NextLook(5); got != 8 {
		t.Errorf("NextLook(5) = %d, want 8", got)
	}
	if got := rule.NextLook(3); got != 5 {
		t.Errorf("NextLook(3) = %d, want 5", got)
	}
	sum := 0.0
	for k := 1; k <= 60; k++ {
		sum += Alpha(k)
	}
	if sum > 1-Confidence {
		t.Errorf("the looks spend %v, more than %v", sum, 1-Confidence)
	}
	// Rounds past the last look feed the next one, not the interval.
	a := []float64{10, 11, 10, 12, 11, 10, 11, 10, 100}
	b := []float64{10, 10, 10, 10, 10, 10, 10, 10, 10}
	r, _ := rule.Of(a, b, true)
	if r.Rounds != 8 || r.Look != 2 {
		t.Errorf("9 rounds judged as %d rounds at look %d, want 8 rounds at look 2", r.Rounds, r.Look)
	}
	if got := r.LevelText(); got != "98.75% interval (look 2 of rounds until decided)" {
		t.Errorf("LevelText = %q", got)
	}
}

func median(xs []int) int {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	return s[len(s)/2]
}

// roundsWith gives n rounds of a against b = 1000 whose log ratios have exactly the given mean
// and sample standard deviation: the spread RoundsToDecide assumes the rounds to come keep.
func roundsWith(n int, mean, sd float64) (a, b []float64) {
	z := make([]float64, n)
	for i := range z {
		z[i] = float64(i) - float64(n-1)/2
	}
	_, v := meanVar(z)
	for i := range z {
		a = append(a, 1000*math.Exp(mean+sd*z[i]/math.Sqrt(v)))
		b = append(b, 1000)
	}
	return a, b
}

// RoundsToDecide is checked against the rule itself: rounds with the same mean and spread,
// as many as it says, decide; as many as the look before, do not.
func TestRoundsToDecide(t *testing.T) {
	for _, c := range []struct {
		name        string
		rule        Rule
		ratio, sd   float64
		want        int
		wantOK      bool
		decidedFrom int // rounds of the open interval the estimate starts from
	}{
		{"a lead, sequential", Sequential(5), 1.08, 0.09, 18, true, 5},
		{"a lead, sequential, from a later look", Sequential(5), 1.08, 0.09, 18, true, 12},
		{"equal engines, fixed", Fixed, 1.00, 0.05, 7, true, 5},
		{"a lead, fixed", Fixed, 1.12, 0.10, 6, true, 5},
		{"halfway to the margin, sequential", Sequential(5), 1.025, 0.09, 0, false, 5},
		{"halfway to the margin, fixed", Fixed, 1.025, 0.09, 54, true, 5},
	} {
		t.Run(c.name, func(t *testing.T) {
			at := func(n int) (Ratio, bool) {
				a, b := roundsWith(n, math.Log(c.ratio), c.sd)
				r, _ := c.rule.Of(a, b, true)
				_, decided := claim(r)
				return r, decided
			}
			open, decided := at(c.decidedFrom)
			if decided {
				t.Fatalf("the starting interval %s is decided already", open)
			}
			got, ok := c.rule.RoundsToDecide(open)
			if got != c.want || ok != c.wantOK {
				t.Fatalf("RoundsToDecide(%s) = %d, %v; want %d, %v", open, got, ok, c.want, c.wantOK)
			}
			if !ok {
				return
			}
			if r, decided := at(got); !decided {
				t.Errorf("%d rounds give %s, still open", got, r)
			}
			before := got - 1
			if c.rule.IsSequential() {
				_, before = c.rule.lookAt(got - 1)
			}
			if r, decided := at(before); before > c.decidedFrom && decided {
				t.Errorf("%d rounds decide already (%s): the estimate is late", before, r)
			}
		})
	}
	if _, ok := Sequential(5).RoundsToDecide(Ratio{Estimate: 1.1, Lo: 0.9, Hi: 1.3, Rounds: 1}); ok {
		t.Error("one round measures no spread, yet an estimate was given")
	}
}
