package document

// What every chart shares on top of go-chart: round axis ticks, escaping for text that go-chart
// writes into SVG verbatim, and a guard against values go-chart cannot plot.

import (
	"fmt"
	"math"
	"strings"

	"github.com/wcharczuk/go-chart/v2"
)

// Text escapes text for go-chart, which writes text nodes into the SVG verbatim.
func Text(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// Finite is false for NaN and infinities, which go-chart cannot place.
func Finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// NiceTicks spans [lo, hi] with about five ticks at round steps (1, 2, 2.5, 5 × 10^n). format
// writes a tick's label with the given decimals; nil writes plain numbers.
func NiceTicks(lo, hi float64, format func(v float64, decimals int) string) []chart.Tick {
	if format == nil {
		format = label
	}
	if !Finite(lo) || !Finite(hi) || hi <= lo {
		lo, hi = 0, 1
	}
	raw := (hi - lo) / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag * 10
	for _, f := range []float64{1, 2, 2.5, 5, 10} {
		if raw <= f*mag {
			step = f * mag
			break
		}
	}
	decimals := 0
	if step < 1 {
		decimals = int(math.Ceil(-math.Log10(step)))
		if s := step * math.Pow(10, float64(decimals)); s != math.Trunc(s) {
			decimals++
		}
	}
	start := math.Floor(lo/step) * step
	end := math.Ceil(hi/step) * step
	var ticks []chart.Tick
	for i := 0; i <= 50; i++ {
		v := start + float64(i)*step
		if v > end+step/2 {
			break
		}
		// Avoid "-0" and float noise such as 0.30000000000000004 in labels.
		v = math.Round(v/step) * step
		ticks = append(ticks, chart.Tick{Value: v, Label: format(v, decimals)})
	}
	return ticks
}

func label(v float64, decimals int) string {
	if v == 0 {
		v = 0 // turns -0 into 0
	}
	s := fmt.Sprintf("%.*f", decimals, v)
	if s == "-0" {
		return "0"
	}
	return s
}
