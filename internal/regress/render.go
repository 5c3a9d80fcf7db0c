package regress

import (
	"fmt"
	"io"
	"strings"
)

// Markdown writes the rows as one table: the judged figure's medians, the change, the test's
// p-value and sample sizes, the verdict, and the whole-run figures beside it.
func Markdown(w io.Writer, rows []Row, o Options) error {
	if o.Alpha == 0 {
		o.Alpha = 0.05
	}
	if o.MinChange == 0 {
		o.MinChange = DefaultMinChange
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Mann-Whitney U test, alpha %g; a change counts when significant and at least %.0f%%.\n\n", o.Alpha, o.MinChange*100)
	b.WriteString("| step | judged | A (median) | B (median) | change | p | n | verdict | TPS A → B | p50 ms A → B | p99 ms A → B |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|---|---|---:|---:|---:|\n")
	for _, r := range rows {
		if r.Verdict == NotComparable && r.N1 == 0 {
			fmt.Fprintf(&b, "| %s | | | | | | | %s: %s | | | |\n", r.Key, r.Verdict, r.Why)
			continue
		}
		verdict := r.Verdict
		if r.Why != "" {
			verdict += " (" + r.Why + ")"
		}
		fmt.Fprintf(&b, "| %s | %s of %s | %s | %s | %+.1f%% | %.3g | %d+%d | %s | %s → %s | %.2f → %.2f | %.2f → %.2f |\n",
			r.Key, r.Metric, r.Unit, num(r.A), num(r.B), r.Change*100, r.P, r.N1, r.N2, verdict,
			num(r.TPSA), num(r.TPSB), r.LatA.P50, r.LatB.P50, r.LatA.P99, r.LatB.P99)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func num(v float64) string {
	if v >= 100 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.2f", v)
}
