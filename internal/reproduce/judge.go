package reproduce

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/fairbench/fairbench/internal/result"
)

// Verdicts of a row.
const (
	Agrees        = "agrees"
	Disagrees     = "disagrees"
	NotComparable = "not comparable here"
)

// TieBand is how close two engines must be to count as a tie: within 5% of each other, about
// the spread of repeated runs on a quiet machine. A published ratio of 0.97 and a measured one
// of 1.03 both say "about the same", and agree.
const TieBand = 0.05

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
