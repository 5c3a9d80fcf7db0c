package document

import (
	"math"
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
