package regress

import (
	"fmt"
	"io"
	"strings"

	"github.com/fairbench/fairbench/internal/document"
)

// Markdown writes the rows as one table: the judged figure's medians, the change, the test's
// p-value and sample sizes, the verdict, p99's own test where throughput was judged, and the
// whole-run figures beside it.
func Markdown(w io.Writer, rows []Row, o Options) error {
	if o.Alpha == 0 {
		o.Alpha = 0.05
	}
	if o.MinChange == 0 {
		o.MinChange = DefaultMinChange
	}
	t := &document.Table{
		Header:  []string{"step", "judged", "A (median)", "B (median)", "change", "p", "n", "verdict", "p99 tested too", "TPS A → B", "p50 ms A → B", "p99 ms A → B"},
		Numeric: []bool{false, false, true, true, true, true, false, false, false, true, true, true},
	}
	for _, r := range rows {
		if r.Verdict == NotComparable && r.N1 == 0 {
			t.Rows = append(t.Rows, document.Row(r.Key.String(), "", "", "", "", "", "", r.Verdict+": "+r.Why, "", "", "", ""))
			continue
		}
		verdict := r.Verdict
		if r.Why != "" {
			verdict += " (" + r.Why + ")"
		}
		if r.Busy != "" {
			verdict += "; " + BusyNote(r)
		}
		if len(r.PlansChanged) > 0 {
			verdict += "; plan changed: " + strings.Join(r.PlansChanged, ", ")
		}
		p50, p99 := fmt.Sprintf("%.2f → %.2f", r.LatA.P50, r.LatB.P50), fmt.Sprintf("%.2f → %.2f", r.LatA.P99, r.LatB.P99)
		if r.LatA.P50 == 0 && r.LatB.P50 == 0 {
			p50, p99 = "", "" // no latency histogram: TPC-H times its queries one by one
		}
		p := fmt.Sprintf("%.3g", r.P)
		if r.Verdict == NotComparable {
			p = "" // shown, not tested
		}
		t.Rows = append(t.Rows, document.Row(r.Key.String(), r.Metric+" of "+r.Unit, num(r.A), num(r.B), fmt.Sprintf("%+.1f%%", r.Change*100),
			p, fmt.Sprintf("%d+%d", r.N1, r.N2), verdict, p99Text(r.P99),
			num(r.TPSA)+" → "+num(r.TPSB), p50, p99))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Mann-Whitney U test, alpha %g; a change counts when significant and at least %.0f%%.\n", o.Alpha, o.MinChange*100)
	b.Write(t.Markdown())
	_, err := io.WriteString(w, b.String())
	return err
}

// p99Text is the p99 test's medians, change, p-value and verdict in one cell.
func p99Text(j *Judgement) string {
	if j == nil {
		return ""
	}
	return fmt.Sprintf("%s → %s ms (%+.1f%%), p %.3g: %s", num(j.A), num(j.B), j.Change*100, j.P, j.Verdict)
}

func num(v float64) string {
	if v >= 100 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// BusyNote says a row's runs shared a busy machine and what to do about it.
func BusyNote(r Row) string {
	return "busy machine (" + r.Busy + "): weak evidence, rerun on a quiet machine"
}
