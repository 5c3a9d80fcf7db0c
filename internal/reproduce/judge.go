package reproduce

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/fairbench/fairbench/internal/interval"
	"github.com/fairbench/fairbench/internal/result"
)

// Verdicts of a row.
const (
	Agrees        = "agrees"
	Disagrees     = "disagrees"
	NotComparable = "not comparable here"
	// Undecided is a measured ratio whose interval reaches both sides of 1 while the study
	// published a clear lead: the repeats cannot say whether the lead is there or not.
	Undecided = "too noisy to judge"
)

// TieBand is how close two engines must be to count as a tie: interval.Margin, the report's own.
// A published ratio of 0.97 and a measured one of 1.03 both say "about the same", and agree.
const TieBand = interval.Margin

// Row is one published figure beside fairbench's.
type Row struct {
	Figure    string // what is compared, e.g. "read-write TPS, MySQL / PostgreSQL"
	Run       string // which run measured it ("fair", "as-published")
	Published string
	Measured  string
	Verdict   string
	// Why explains the verdict: the rule applied, and for a disagreement the evidence
	// fairbench has (versions, settings, the client's share of the CPU).
	Why string
}

// side says where a ratio falls: above 1, below 1, or a tie within TieBand.
func side(ratio float64) int {
	switch {
	case math.Abs(ratio-1) <= TieBand:
		return 0
	case ratio > 1:
		return 1
	}
	return -1
}

// judgeRatio compares a published ratio with a measured one: they agree when both name the same
// winner (or both a tie). Magnitudes depend on hardware and are shown, not judged.
func judgeRatio(figure, run string, pub, got float64, gotOK bool, why string) Row {
	row := Row{Figure: figure, Run: run, Published: fmt.Sprintf("%.2fx", pub)}
	if !gotOK {
		row.Verdict, row.Measured, row.Why = NotComparable, "not measured", why
		return row
	}
	row.Measured = fmt.Sprintf("%.2fx", got)
	if side(pub) == side(got) {
		row.Verdict = Agrees
		row.Why = "same winner" + sideWord(got)
		return row
	}
	// A tie on one side and a small lead on the other (both within twice the tie band) say the
	// same thing: the engines are close. Only a clear lead against a tie, or opposite leads,
	// disagree.
	if (side(pub) == 0 || side(got) == 0) && math.Abs(pub-1) <= 2*TieBand && math.Abs(got-1) <= 2*TieBand {
		row.Verdict = Agrees
		row.Why = "both close: within 10% of each other"
		return row
	}
	row.Verdict = Disagrees
	row.Why = fmt.Sprintf("published%s, measured%s", sideWord(pub), sideWord(got))
	if why != "" {
		row.Why += "; " + why
	}
	return row
}

// gotRatio is a measured ratio between two engines: the ratio of the medians and, from two or
// more runs of each, its interval paired by round, at the level of the comparison's rule (95%,
// or under rounds until decided the look its rounds reached).
type gotRatio struct {
	Ratio    float64
	Interval interval.Ratio
	HasIv    bool // two or more runs of each side
	OK       bool // something was measured
	// ToDecide is, with an interval, about how many rounds in all would decide it
	// (interval.Rule.DecideCount); read only where the interval leaves the ratio open.
	ToDecide int
}

// ratioOf measures a/b over the complete runs of each side (in the order they started), of the
// figure f; paired when both come from the rounds of one comparison, so the k-th of each ran in
// the same round.
func ratioOf(rule interval.Rule, a, b []*result.Result, f func(*result.Result) float64, paired bool) gotRatio {
	fa, fb := result.Figures(a, f), result.Figures(b, f)
	ma, mb := medianOf(fa), medianOf(fb)
	if len(fa) == 0 || len(fb) == 0 || mb <= 0 {
		return gotRatio{}
	}
	g := gotRatio{Ratio: ma / mb, OK: true}
	g.Interval, g.HasIv = rule.Of(fa, fb, paired)
	if g.HasIv {
		g.ToDecide = rule.DecideCount(g.Interval)
	}
	return g
}

func medianOf(xs []float64) float64 { return interval.Median(xs) }

// judgeGot judges a measured ratio with its interval against a published one. The published
// figure has no interval, so its side is read with TieBand; the measured side is the interval's:
// above or below 1 when it excludes 1, a tie when it lies within TieBand of 1. An interval that
// includes 1 and reaches further shows neither, so the row is "too noisy to judge", unless it
// excludes the published ratio itself, a lead of more than twice TieBand, which disagrees. A
// single run has no interval and is judged as before, said so.
func judgeGot(figure, run string, pub float64, got gotRatio, why string) Row {
	if !got.HasIv {
		row := judgeRatio(figure, run, pub, got.Ratio, got.OK, why)
		if got.OK {
			row.Why = joinWhy(row.Why, "one run each: no interval")
		}
		return row
	}
	iv := got.Interval
	row := Row{Figure: figure, Run: run, Published: fmt.Sprintf("%.2fx", pub),
		Measured: fmt.Sprintf("%.2fx [%.2f, %.2f]", got.Ratio, iv.Lo, iv.Hi)}
	// Within TieBand is a tie even when the interval excludes 1: a shown difference under 5%.
	gotSide, open := 0, false
	switch {
	case iv.WithinMargin():
	case iv.Lo > 1:
		gotSide = 1
	case iv.Hi < 1:
		gotSide = -1
	default:
		open = true
	}
	pubSide := side(pub)
	switch {
	case open && (pub > iv.Hi || pub < iv.Lo) && math.Abs(pub-1) > 2*TieBand:
		row.Verdict = Disagrees
		row.Why = fmt.Sprintf("published%s; the measured %s includes 1 and excludes %.2fx", sideWord(pub), iv.LevelText(), pub)
	case open:
		row.Verdict = Undecided
		row.Why = fmt.Sprintf("published%s; the measured %s (%s) includes 1 and reaches beyond %.0f%%: %s",
			sideWord(pub), iv.LevelText(), iv.Basis(), 100*TieBand, interval.DecideText(got.ToDecide))
		return row
	case gotSide == pubSide:
		row.Verdict, row.Why = Agrees, "same winner"+sideWord(pub)+", the "+iv.LevelText()+" "+ivWord(gotSide)
		return row
	default:
		row.Verdict = Disagrees
		row.Why = fmt.Sprintf("published%s, measured %s", sideWord(pub), ivWord(gotSide))
	}
	if why != "" {
		row.Why += "; " + why
	}
	return row
}

func ivWord(s int) string {
	switch s {
	case 1:
		return "above 1"
	case -1:
		return "below 1"
	}
	return "within 5% of 1"
}

func sideWord(ratio float64) string {
	switch side(ratio) {
	case 0:
		return " (a tie within 5%)"
	case 1:
		return " (above 1)"
	}
	return " (below 1)"
}

// judgePick compares a published decision (which engine to pick) with the measured one.
func judgePick(figure, run, pub, got, why string) Row {
	row := Row{Figure: figure, Run: run, Published: pub, Measured: got}
	switch {
	case got == "":
		row.Verdict, row.Measured, row.Why = NotComparable, "not measured", why
	case strings.HasPrefix(got, undecidedPick):
		row.Verdict, row.Why = Undecided, "the intervals cannot rank the engines (the measured pick says how many rounds would)"
	case strings.Contains(got, pub):
		row.Verdict, row.Why = Agrees, "same pick"
	default:
		row.Verdict = Disagrees
		row.Why = why
	}
	return row
}

// ranking orders engines by value, highest first, writing ties (TieBand) with "≈".
func ranking(vals map[string]float64, lowerIsBetter bool) string {
	type ev struct {
		e string
		v float64
	}
	var es []ev
	for e, v := range vals {
		es = append(es, ev{e, v})
	}
	// Equal values in name order, so the same figures always read the same.
	sort.Slice(es, func(i, j int) bool {
		if es[i].v == es[j].v {
			return es[i].e < es[j].e
		}
		if lowerIsBetter {
			return es[i].v < es[j].v
		}
		return es[i].v > es[j].v
	})
	var b strings.Builder
	for i, x := range es {
		if i > 0 {
			if prev := es[i-1].v; prev != 0 && math.Abs(x.v/prev-1) <= TieBand {
				b.WriteString(" ≈ ")
			} else {
				b.WriteString(" > ")
			}
		}
		b.WriteString(x.e)
	}
	return b.String()
}

// best is the engine with the highest (or lowest) value, or "a tie of A and B" when the first
// two are within TieBand.
func best(vals map[string]float64, lowerIsBetter bool) string {
	r := ranking(vals, lowerIsBetter)
	if r == "" {
		return ""
	}
	parts := strings.SplitN(r, " > ", 2)
	if strings.Contains(parts[0], " ≈ ") {
		return "a tie of " + strings.ReplaceAll(parts[0], " ≈ ", " and ")
	}
	return parts[0]
}

// undecidedPick starts a measured pick that the intervals cannot make.
const undecidedPick = "undecided"

// bestOf is the engine with the highest median figure f over its runs; "a tie of A and B" when
// the best's interval against another lies within TieBand; "undecided (A leads B; about N
// rounds in all would decide)" when it includes 1 and reaches further. With a single run per
// engine, which measures no noise, TieBand on the medians decides, as before.
func bestOf(rule interval.Rule, runs map[string][]*result.Result, f func(*result.Result) float64) string {
	medians := map[string]float64{}
	for e, rs := range runs {
		if m := medianOf(result.Figures(rs, f)); m > 0 {
			medians[e] = m
		}
	}
	order := strings.Split(ranking(medians, false), " ")
	var names []string
	for _, e := range order {
		if e != ">" && e != "≈" && e != "" {
			names = append(names, e)
		}
	}
	if len(names) < 2 {
		return best(medians, false)
	}
	top := names[0]
	tied := []string{top}
	for _, e := range names[1:] {
		r, ok := rule.Of(result.Figures(runs[top], f), result.Figures(runs[e], f), true)
		switch {
		case !ok:
			return best(medians, false)
		case r.Lo >= 1/(1+TieBand) && r.Hi <= 1+TieBand:
			tied = append(tied, e)
		case r.Lo > 1:
		default:
			return undecidedPick + " (" + top + " leads " + e + "; " + interval.DecideText(rule.DecideCount(r)) + ")"
		}
	}
	if len(tied) > 1 {
		return "a tie of " + strings.Join(tied, " and ")
	}
	return top
}

// evidence collects what fairbench knows that could explain a difference between a published
// figure and its own: engine versions, the fairness settings that differ from the study's,
// and how much of the machine the client itself used.
func evidence(pub Published, cores int, rs ...*result.Result) string {
	var notes []string
	for _, r := range rs {
		if r == nil {
			continue
		}
		if v := pub.String("engines." + r.Engine.Kind); v != "" && !strings.Contains(r.Engine.Version, v) {
			notes = append(notes, fmt.Sprintf("%s %s here, %s published", r.Engine.Kind, result.VersionNumber(r.Engine.Version), v))
		}
		if share := clientShare(r, cores); share > 0.25 {
			notes = append(notes, fmt.Sprintf("the client used %.0f%% of the machine during %s's run, which the server could not", share*100, r.Engine.Kind))
		}
	}
	return strings.Join(dedup(notes), "; ")
}

// clientShare is fairbench's own CPU over the measured window as a share of the machine.
func clientShare(r *result.Result, cores int) float64 {
	if cores == 0 || r.DurationS == 0 {
		return 0
	}
	return r.ClientCPUS / r.DurationS / float64(cores)
}

func dedup(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
