package document

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func TestLineChartDegenerate(t *testing.T) {
	tests := []struct {
		name    string
		series  []Series
		wantSVG bool
	}{
		{"no series", nil, false},
		{"empty series", []Series{{Name: "a"}}, false},
		{"one point", []Series{{Name: "a", X: []float64{5}, Y: []float64{3}}}, true},
		{"all zero", []Series{{Name: "a", X: []float64{1, 2}, Y: []float64{0, 0}}}, true},
		{"same x", []Series{{Name: "a", X: []float64{4, 4}, Y: []float64{1, 2}}}, true},
		{"not finite", []Series{{Name: "a", X: []float64{1, 2, 3}, Y: []float64{math.NaN(), 2, math.Inf(1)}}}, true},
		{"only not finite", []Series{{Name: "a", X: []float64{1}, Y: []float64{math.NaN()}}}, false},
		{"negative", []Series{{Name: "a", X: []float64{-3, -1}, Y: []float64{-5, -1}}}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			svg, err := LineChart{Title: tc.name, XName: "x", YName: "y", Series: tc.series}.SVG()
			if err != nil {
				t.Fatal(err)
			}
			if got := svg != ""; got != tc.wantSVG {
				t.Errorf("drew a chart: %v, want %v", got, tc.wantSVG)
			}
		})
	}
}

func TestNiceTicks(t *testing.T) {
	tests := []struct {
		lo, hi float64
		want   string
	}{
		{0, 2450, "0 500 1,000 1,500 2,000 2,500"},
		{0, 1, "0.0 0.2 0.4 0.6 0.8 1.0"},
		{0, 0.97, "0.0 0.2 0.4 0.6 0.8 1.0"},
		{0, 1.2, "0.00 0.25 0.50 0.75 1.00 1.25"},
		{0, 60, "0 20 40 60"},
		{3, 3, "0.0 0.2 0.4 0.6 0.8 1.0"},
		{0, 43000, "0 10,000 20,000 30,000 40,000 50,000"},
	}
	for _, tc := range tests {
		var labels []string
		for _, tk := range NiceTicks(tc.lo, tc.hi, Fixed) {
			labels = append(labels, tk.Label)
		}
		if got := strings.Join(labels, " "); got != tc.want {
			t.Errorf("NiceTicks(%v, %v, Fixed) = %q, want %q", tc.lo, tc.hi, got, tc.want)
		}
	}
}

// TestLegendWraps: five engines with versions and a marker do not fit one row of a 640-pixel
// chart; the legend wraps instead of running off the right edge, and the chart grows to keep
// its plot area. A legend that fits stays on one row.
func TestLegendWraps(t *testing.T) {
	tests := []struct {
		names []string
		wrap  bool
	}{
		{[]string{"postgres", "mysql", "mariadb"}, false},
		{[]string{"postgres@15", "postgres@17", "postgres@18", "mariadb@10.11", "mysql@9.7", "galera (3 nodes)"}, true},
	}
	for _, tc := range tests {
		lc := LineChart{Title: "t", XName: "x", YName: "y", MarkerName: "saturation point"}
		for i, n := range tc.names {
			lc.Series = append(lc.Series, Series{Name: n, X: []float64{1, 2}, Y: []float64{1, float64(i + 2)}})
			lc.Markers = append(lc.Markers, Marker{X: 2, Y: float64(i + 2)})
		}
		svg, err := lc.SVG()
		if err != nil {
			t.Fatal(err)
		}
		if oneRow := strings.Contains(string(svg), `viewBox="0 0 640 300"`); oneRow == tc.wrap {
			t.Errorf("%d series: legend wrapped %v, want %v: %.200s", len(tc.names), !oneRow, tc.wrap, svg)
		}
		for _, m := range regexp.MustCompile(`<text x="(\d+)" y="(\d+)"[^>]*>([^<]*)</text>`).FindAllStringSubmatch(string(svg), -1) {
			x, _ := strconv.Atoi(m[1])
			if y, _ := strconv.Atoi(m[2]); y < 40 && x+len(m[3])*7 > 640 {
				t.Errorf("legend key %q at x=%d runs past the chart's right edge", m[3], x)
			}
		}
	}
}

func TestBarChart(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name     string
		chart    BarChart
		wantSVG  bool
		contains []string
	}{
		{"no categories", BarChart{Series: []BarSeries{{Name: "a", Values: []float64{1}}}}, false, nil},
		{"no values", BarChart{Categories: []string{"Q1"}, Series: []BarSeries{{Name: "a", Values: []float64{nan}}}}, false, nil},
		{"linear", BarChart{Categories: []string{"Q1", "Q2"}, Series: []BarSeries{{Name: "a", Color: "#1f77b4", Values: []float64{1, 3}}}}, true,
			[]string{">Q1<", ">Q2<", "fill:rgba(31,119,180,1.0)"}},
		{"log", BarChart{Categories: []string{"Q1", "Q2"}, LogY: true, Series: []BarSeries{{Name: "a", Values: []float64{0.05, 30}}}}, true,
			[]string{">0.01<", ">100<"}},
		{"lines with a gap", BarChart{Categories: []string{"25M", "max"}, Lines: true, Series: []BarSeries{{Name: "a", Values: []float64{nan, 3}}}}, true,
			[]string{">25M<"}},
		// An interval draws a whisker in the dark grey no engine colour uses.
		{"whiskers", BarChart{Categories: []string{"rw", "ro"}, Series: []BarSeries{{Name: "a", Color: "#1f77b4",
			Values: []float64{0.8, 1}, Lo: []float64{0.7, nan}, Hi: []float64{0.9, nan}}}}, true,
			[]string{"stroke:rgba(51,51,51,1.0)"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			svg, err := tc.chart.SVG()
			if err != nil {
				t.Fatal(err)
			}
			if got := svg != ""; got != tc.wantSVG {
				t.Fatalf("drew a chart: %v, want %v", got, tc.wantSVG)
			}
			for _, want := range tc.contains {
				if !strings.Contains(string(svg), want) {
					t.Errorf("chart lacks %q", want)
				}
			}
		})
	}
}
