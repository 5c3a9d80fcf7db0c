package interval

import (
	"fmt"
	"math"
	"strconv"
)

// Looking again costs error. A comparison that adds rounds until its interval decides, and
// judges a fresh 95% interval after each, calls a difference between equal engines far more
// often than 5%: every look is another chance for the noise to cross the line
// (TestPeekingEveryRoundErrs measures how much more). A Rule fixes in advance when it looks and
// what each look may spend of the error, so that the chance of any false decision over every
// look there could ever be stays within 1 − Confidence.
//
// The plan (Sequential): the first look after MinRounds rounds, each next one when the rounds
// have grown by half (5, 8, 12, 18, 27, ... rounds), look k drawn at level 1 − α_k with
// α_k = (1 − Confidence)/2^k. The α_k sum to 1 − Confidence over however many looks are
// taken, so by the union bound the chance that any look's interval misses the true ratio is at
// most 1 − Confidence; a decision (one engine faster, or equal within the margin) is only false
// when its interval misses the truth. Each interval is Student's t on the logs of the rounds'
// ratios, as for a fixed count (Of). Spacing the looks geometrically keeps each look's quantile
// near 3.5 while the rounds grow: looking after every round would spend the error on looks
// that add almost no information.
type Rule struct {
	// MinRounds is the first look of a sequential plan; 0 is a fixed count of rounds, judged
	// once at Confidence.
	MinRounds int
}

// Fixed is the rule of a fixed number of rounds: one look, at Confidence.
var Fixed = Rule{}

// Sequential is the plan of rounds until decided, whose first look is after minRounds rounds.
func Sequential(minRounds int) Rule { return Rule{MinRounds: max(2, minRounds)} }

// IsSequential says whether the rule looks more than once.
func (r Rule) IsSequential() bool { return r.MinRounds > 0 }

// NextLook is the round count of the plan's first look after n rounds.
func (r Rule) NextLook(n int) int {
	at := r.MinRounds
	for at <= n {
		at = grow(at)
	}
	return at
}

func grow(n int) int { return max(n+1, int(math.Ceil(float64(n)*1.5))) }

// lookAt gives the plan's last look at or before n rounds, as its index from 1 and its round
// count. Before the first look it is the first look with the rounds there are: a comparison that
// stopped early (interrupted, or its rounds failed) looks once, at the first look's level.
func (r Rule) lookAt(n int) (k, rounds int) {
	k, rounds = 1, r.MinRounds
	if n < rounds {
		return 1, n
	}
	for next := grow(rounds); next <= n; next = grow(next) {
		k, rounds = k+1, next
	}
	return k, rounds
}

// Alpha is the error look k (from 1) of a sequential plan may spend.
func Alpha(k int) float64 { return (1 - Confidence) * math.Pow(0.5, float64(k)) }

// Of is the interval of a/b under the rule. A fixed rule's is Of's. A sequential rule's is drawn
// at its last look that the rounds reached, from the rounds up to that look (both samples
// in the order they were measured), at that look's level: a round after the last look feeds the
// next one, never a look of its own.
func (r Rule) Of(a, b []float64, paired bool) (Ratio, bool) {
	if !r.IsSequential() {
		return Of(a, b, paired)
	}
	k, n := r.lookAt(min(len(a), len(b)))
	ratio, ok := of(a[:min(len(a), n)], b[:min(len(b), n)], paired, 1-Alpha(k))
	ratio.Look = k
	return ratio, ok
}

// LevelText names the interval's level: "95% interval", or for a sequential look "99.4%
// interval (look 3 of rounds until decided)".
func (r Ratio) LevelText() string {
	level := r.Level
	if level == 0 {
		level = Confidence
	}
	text := fmt.Sprintf("%s%% interval", trimPct(100*level))
	if r.Look > 0 {
		text += fmt.Sprintf(" (look %d of rounds until decided)", r.Look)
	}
	return text
}

// trimPct gives a percentage with the decimals it needs, at most two: 95, 97.5, 99.38.
func trimPct(p float64) string { return strconv.FormatFloat(math.Round(p*100)/100, 'f', -1, 64) }

// DecideLimit is the most rounds RoundsToDecide looks ahead to: beyond it a decision is not a
// matter of a larger budget on the machine that measured the rounds.
const DecideLimit = 200

// RoundsToDecide estimates how many rounds in all would decide x, an open interval drawn under
// r, if the rounds to come spread as those behind x did and the ratio holds: the first of the
// rule's looks (for a fixed rule, the first count of rounds) whose interval at its own level is
// narrow enough to exclude 1 or to lie within ±Margin. The spread is read back from x's width,
// so the estimate needs nothing but the interval the report already shows. ok is false when no
// count up to DecideLimit would do: the engines are nearer than the machine's noise resolves in
// practice. It is an estimate, not a promise: the next rounds' ratio moves, and so does the
// answer.
func (r Rule) RoundsToDecide(x Ratio) (rounds int, ok bool) {
	n := x.Rounds
	if n < 2 || x.Lo <= 0 || x.Hi <= x.Lo {
		return 0, false
	}
	xLevel := x.Level
	if xLevel == 0 {
		xLevel = Confidence
	}
	centre, half := math.Log(x.Lo*x.Hi)/2, math.Log(x.Hi/x.Lo)/2
	spread := half * math.Sqrt(float64(n)) / quantile(float64(n-1), xLevel)
	need := max(math.Abs(centre), math.Log(1+Margin)-math.Abs(centre))
	next := func(at int) int { return at + 1 }
	if r.IsSequential() {
		next = r.NextLook
	}
	for at := next(n); at <= DecideLimit; at = next(at) {
		level := Confidence
		if r.IsSequential() {
			k, _ := r.lookAt(at)
			level = 1 - Alpha(k)
		}
		if quantile(float64(at-1), level)*spread/math.Sqrt(float64(at)) <= need {
			return at, true
		}
	}
	return 0, false
}

// DecideCount is RoundsToDecide as one number: more than DecideLimit when no practical count
// would decide x. Open picks and effects carry it, so one convention stands for "none".
func (r Rule) DecideCount(x Ratio) int {
	if n, ok := r.RoundsToDecide(x); ok {
		return n
	}
	return DecideLimit + 1
}

// DecideText says what a DecideCount means, in the words every open row uses.
func DecideText(n int) string {
	if n > DecideLimit {
		return fmt.Sprintf("not even %d rounds would decide", DecideLimit)
	}
	return fmt.Sprintf("about %d rounds in all would decide", n)
}
