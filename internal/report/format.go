package report

import (
	"math"
	"strconv"
	"strings"
)

// groupDigits inserts thousands separators into the integer part of a formatted number.
func groupDigits(s string) string {
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	intPart, frac := s, ""
	if i := strings.IndexByte(s, '.'); i >= 0 {
		intPart, frac = s[:i], s[i:]
	}
	var b strings.Builder
	for i, c := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	out := b.String() + frac
	if neg {
		out = "-" + out
	}
	return out
}

// fmtFixed formats v with d decimals and thousands separators.
func fmtFixed(v float64, d int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "—"
	}
	s := strconv.FormatFloat(v, 'f', d, 64)
	if s == "-0" || strings.HasPrefix(s, "-0.") && strings.Trim(s[3:], "0") == "" {
		s = s[1:]
	}
	return groupDigits(s)
}

func fmtInt(v int64) string { return groupDigits(strconv.FormatInt(v, 10)) }

// fmtRate formats throughput with as many decimals as are meaningful at its magnitude:
// 12,345 and 987 read better than 12,345.00, while 3.25 TPS needs its decimals.
func fmtRate(v float64) string {
	switch a := math.Abs(v); {
	case a >= 100:
		return fmtFixed(v, 0)
	case a >= 10:
		return fmtFixed(v, 1)
	default:
		return fmtFixed(v, 2)
	}
}

func fmtMS(v float64) string { return fmtFixed(v, 2) }

func fmtPct(frac float64) string { return fmtFixed(frac*100, 1) + "%" }

// fmtSmart formats a measured quantity with two decimals below 100 and none above, for server
// figures that range from fractions of a megabyte to gigabytes.
func fmtSmart(v float64) string {
	if math.Abs(v) >= 100 {
		return fmtFixed(v, 0)
	}
	return fmtFixed(v, 2)
}

func fmtSeconds(v float64) string {
	if v == math.Trunc(v) {
		return fmtFixed(v, 0) + " s"
	}
	return fmtFixed(v, 1) + " s"
}

func fmtBytesGiB(b int64) string {
	return fmtFixed(float64(b)/(1<<30), 1) + " GiB"
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
	return groupDigits(strconv.FormatFloat(v, 'f', -1, 64))
}
