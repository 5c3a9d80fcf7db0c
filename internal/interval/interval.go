// Package interval says how sure a comparison of two engines' repeated measurements is: the
// ratio of their throughputs with a confidence interval, computed from the repeats themselves,
// so a verdict rests on the noise this machine showed and never on an assumed noise floor.
//
// The method is Student's t on the logarithms of the figures. Throughput is a rate whose noise
// is multiplicative (a busy second costs a share of the work, not a fixed amount), so logs make
// the two sides symmetric and the interval of a ratio is the exponential of an interval of a
// difference. When both engines ran the same rounds, each round's ratio is one observation (a
// paired interval): a round that the machine slowed for both engines then cancels out. Otherwise
// the two samples are compared unpaired with Welch's interval, which does not assume equal
// variances. Student's t is exact for normal logs and conservative enough for three to ten
// repeats, where a bootstrap has too few distinct resamples to mean anything (three rounds give
// ten) and a rank test can never reach 95% (three against three gives p ≥ 0.1).
// The t quantiles come from github.com/aclements/go-moremath/stats, the statistics library
// benchstat is built on.
package interval

import (
	"fmt"
	"math"
	"slices"

	"github.com/aclements/go-moremath/stats"
)

// Confidence is the two-sided confidence of every interval fairbench reports.
const Confidence = 0.95

// Ratio is a/b with its Confidence interval.
type Ratio struct {
	Estimate float64 // ratio of the geometric means (paired: geometric mean of the rounds' ratios)
	Lo, Hi   float64
	Rounds   int  // pairs when Paired, else the smaller sample's size
	Paired   bool // by rounds, both sides measured in each
	// Level is the interval's two-sided confidence (Confidence, or a sequential look's), and
	// Look that look's number from 1 (0: a fixed count of rounds, one look).
	Level float64
	Look  int
}

// Of gives the ratio a/b with its interval: paired by index when paired is set and both samples
// have the same length, unpaired otherwise. ok is false when either side has fewer than two
// positive figures: one run carries no measure of its own noise.
func Of(a, b []float64, paired bool) (r Ratio, ok bool) { return of(a, b, paired, Confidence) }

// of is Of at the given two-sided level.
func of(a, b []float64, paired bool, level float64) (r Ratio, ok bool) {
	la, lb := logs(a), logs(b)
	if len(la) < 2 || len(lb) < 2 {
		return Ratio{}, false
	}
	if paired && len(la) == len(lb) && len(la) == len(a) && len(lb) == len(b) {
		d := make([]float64, len(la))
		for i := range la {
			d[i] = la[i] - lb[i]
		}
		m, v := meanVar(d)
		half := quantile(float64(len(d)-1), level) * math.Sqrt(v/float64(len(d)))
		return expRatio(m, half, len(d), true, level), true
	}
	ma, va := meanVar(la)
	mb, vb := meanVar(lb)
	na, nb := float64(len(la)), float64(len(lb))
	se2 := va/na + vb/nb
	df := welchDF(va/na, vb/nb, na, nb)
	half := quantile(df, level) * math.Sqrt(se2)
	return expRatio(ma-mb, half, min(len(la), len(lb)), false, level), true
}

// Margin is how close two engines must be shown to be to count as a tie: the whole interval of
// their ratio within ±5%, about the spread of repeated runs on a quiet machine. It is a margin of
// practical equality, not a noise floor: the interval itself is measured, and a wide one is
// "undecided", never a tie. The report's picks and the studies' judgements both use it.
const Margin = 0.05

// WithinMargin reports whether the whole interval lies within ±Margin of 1.
func (r Ratio) WithinMargin() bool { return r.Lo >= 1/(1+Margin) && r.Hi <= 1+Margin }

// Nearness says how near an interval is to a decision, as the share of its present width that a
// decision needs it to keep: a decision is an interval that excludes 1 (the half-width at most
// the distance of the estimate from 1, on the log scale the interval is symmetric on) or lies
// within ±Margin (at most the estimate's distance from the margin). 1 or more is decided; 0.9
// needs the interval a tenth narrower, 0.3 needs it narrowed to a third, which more rounds give
// (about as one over the square root of their number). Picks are ordered by it when a budget
// cannot give every open pick its rounds.
func (r Ratio) Nearness() float64 {
	if r.Lo <= 0 || r.Hi <= r.Lo {
		return 0
	}
	c, h := math.Log(r.Lo*r.Hi)/2, math.Log(r.Hi/r.Lo)/2
	apart := math.Abs(c) / h
	inside := (math.Log(1+Margin) - math.Abs(c)) / h
	return max(apart, inside, 0)
}

// Excludes reports whether the interval lies wholly above or below x (1: no difference).
func (r Ratio) Excludes(x float64) bool { return r.Lo > x || r.Hi < x }

// String gives "1.21× [1.12, 1.30]".
func (r Ratio) String() string {
	return fmt.Sprintf("%s× [%s, %s]", fmtRatio(r.Estimate), fmtRatio(r.Lo), fmtRatio(r.Hi))
}

// Basis says what the interval came from: "3 rounds" or "3 and 4 runs".
func (r Ratio) Basis() string {
	if r.Paired {
		return fmt.Sprintf("%d rounds", r.Rounds)
	}
	return fmt.Sprintf("at least %d runs each", r.Rounds)
}

func fmtRatio(x float64) string {
	if x >= 10 {
		return fmt.Sprintf("%.1f", x)
	}
	return fmt.Sprintf("%.2f", x)
}

func expRatio(meanLog, half float64, rounds int, paired bool, level float64) Ratio {
	return Ratio{Estimate: math.Exp(meanLog), Lo: math.Exp(meanLog - half), Hi: math.Exp(meanLog + half),
		Rounds: rounds, Paired: paired, Level: level}
}

// GeoMean is the geometric mean of the positive figures of xs (what a ratio's estimate compares),
// 0 when there are none.
func GeoMean(xs []float64) float64 {
	ls := logs(xs)
	if len(ls) == 0 {
		return 0
	}
	m, _ := meanVar(ls)
	return math.Exp(m)
}

// logs gives the logarithms of the positive figures; a zero (a run that did nothing) has no
// logarithm and is left out, which leaves fewer rounds and so a wider interval.
func logs(xs []float64) []float64 {
	out := make([]float64, 0, len(xs))
	for _, x := range xs {
		if x > 0 && !math.IsInf(x, 0) && !math.IsNaN(x) {
			out = append(out, math.Log(x))
		}
	}
	return out
}

// meanVar gives the mean and the unbiased sample variance.
func meanVar(xs []float64) (mean, variance float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		variance += (x - mean) * (x - mean)
	}
	return mean, variance / float64(len(xs)-1)
}

// welchDF is the Welch–Satterthwaite degrees of freedom; with no variance on either side it is
// the pooled count, so the (zero-width) interval stays defined.
func welchDF(sa, sb, na, nb float64) float64 {
	den := sa*sa/(na-1) + sb*sb/(nb-1)
	if den == 0 {
		return na + nb - 2
	}
	return (sa + sb) * (sa + sb) / den
}

// quantile is the two-sided level quantile of Student's t with df degrees of freedom.
func quantile(df, level float64) float64 {
	return stats.InvCDF(stats.TDist{V: df})(1 - (1-level)/2)
}

// Effect is what changing one thing did to a figure: flipped over base, with its interval, and
// whether it is claimed as an effect.
type Effect struct {
	Change    float64 // median flipped / median base − 1
	Ratio     Ratio   // flipped/base with its interval, when HasIv
	HasIv     bool
	Real      bool // the interval excludes no change, on a side the change's physics allows
	WrongSign bool // the interval excludes no change on the side the physics rules out
	// None: the interval lies within ±Margin: no effect worth the name, as a tie is for a pick.
	None bool
	// ToDecide is, for an open effect, about how many rounds in all would decide it
	// (Rule.DecideCount: above DecideLimit where no practical count would); 0 when not open.
	ToDecide int
}

// Open says whether more rounds could decide the effect: it has an interval, which includes no
// change and reaches beyond ±Margin.
func (e Effect) Open() bool { return e.HasIv && !e.Real && !e.WrongSign && !e.None }

// EffectOf judges flipped against base under the rule (a sequential rule at the look its rounds
// reached, as it judges a pick), runs paired by index: each flipped run with the base run it
// followed. expect is the sign the change can have: +1 only faster (less work), -1 only slower,
// 0 either. A measured effect of the other sign is the machine moving, and is never claimed:
// turning durable commit off cannot slow an engine down.
func (r Rule) EffectOf(flipped, base []float64, expect int) Effect {
	e := Effect{Change: math.NaN()}
	if len(flipped) > 0 && len(base) > 0 {
		e.Change = Median(flipped)/Median(base) - 1
	}
	e.Ratio, e.HasIv = r.Of(flipped, base, true)
	if e.HasIv && e.Ratio.WithinMargin() {
		e.None = true
		return e
	}
	if !e.HasIv {
		return e
	}
	if !e.Ratio.Excludes(1) {
		e.ToDecide = r.DecideCount(e.Ratio)
		return e
	}
	e.WrongSign = (expect > 0 && e.Ratio.Hi < 1) || (expect < 0 && e.Ratio.Lo > 1)
	e.Real = !e.WrongSign
	return e
}

// String gives "+12% [+5%, +19%]", and what it means when it is not an effect.
func (e Effect) String() string {
	text := signedPct(e.Change)
	switch {
	case !e.HasIv:
		return text + " (one run: no interval)"
	case e.None:
		return fmt.Sprintf("%s [%s, %s] (none: within ±%.0f%%)", text, signedPct(e.Ratio.Lo-1), signedPct(e.Ratio.Hi-1), 100*Margin)
	case e.WrongSign:
		return fmt.Sprintf("%s [%s, %s] (noise: the wrong sign for what this knob does)", text, signedPct(e.Ratio.Lo-1), signedPct(e.Ratio.Hi-1))
	case !e.Real:
		return fmt.Sprintf("%s [%s, %s] (within noise; %s)", text, signedPct(e.Ratio.Lo-1), signedPct(e.Ratio.Hi-1), DecideText(e.ToDecide))
	}
	return fmt.Sprintf("%s [%s, %s]", text, signedPct(e.Ratio.Lo-1), signedPct(e.Ratio.Hi-1))
}

func signedPct(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "—"
	}
	return fmt.Sprintf("%+.1f%%", 100*x)
}

// Median is the middle of xs (the mean of the two middle ones for an even count), 0 for none:
// the one median of the report, the studies' judgements and the intervals' effects.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Mean is the mean of xs with its two-sided Confidence interval (Student's t); the interval is
// the mean itself where there are fewer than two values.
func Mean(xs []float64) (mean, lo, hi float64) {
	switch len(xs) {
	case 0:
		return 0, 0, 0
	case 1:
		return xs[0], xs[0], xs[0]
	}
	mean, variance := meanVar(xs)
	half := quantile(float64(len(xs)-1), Confidence) * math.Sqrt(variance/float64(len(xs)))
	return mean, mean - half, mean + half
}
