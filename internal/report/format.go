package report

import (
	"math"
	"strconv"
	"strings"

	"github.com/fairbench/fairbench/internal/document"
)

func fmtInt(v int64) string { return document.GroupDigits(strconv.FormatInt(v, 10)) }

// fmtRate formats throughput with as many decimals as are meaningful at its magnitude:
// 12,345 and 987 read better than 12,345.00, while 3.25 TPS needs its decimals.
func fmtRate(v float64) string {
	switch a := math.Abs(v); {
	case a >= 100:
		return document.Fixed(v, 0)
	case a >= 10:
		return document.Fixed(v, 1)
	default:
		return document.Fixed(v, 2)
	}
}

func fmtMS(v float64) string { return document.Fixed(v, 2) }

func fmtPct(frac float64) string { return document.Fixed(frac*100, 1) + "%" }

// fmtSmart formats a measured quantity with two decimals below 100 and none above, for server
// figures that range from fractions of a megabyte to gigabytes.
func fmtSmart(v float64) string {
	if math.Abs(v) >= 100 {
		return document.Fixed(v, 0)
	}
	return document.Fixed(v, 2)
}

func fmtSeconds(v float64) string {
	if v == math.Trunc(v) {
		return document.Fixed(v, 0) + " s"
	}
	return document.Fixed(v, 1) + " s"
}

func fmtBytesGiB(b int64) string {
	return document.Fixed(float64(b)/(1<<30), 1) + " GiB"
}

// joinAnd lists items as "a", "a and b", "a, b and c".
func joinAnd(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

// fmtTrim formats a setting such as an SLO as given: 50 stays "50", 12.5 stays "12.5".
func fmtTrim(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "—"
	}
	return document.GroupDigits(strconv.FormatFloat(v, 'f', -1, 64))
}
