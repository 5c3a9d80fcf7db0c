package report

import (
	"strings"
	"testing"
)

func TestLowest(t *testing.T) {
	pg, my, ma := &variant{Name: "postgres", Index: 0}, &variant{Name: "mysql", Index: 1}, &variant{Name: "mariadb", Index: 2}
	tests := []struct {
		name     string
		vals     map[*variant]float64
		ok       bool
		pick     string
		whyStart string
	}{
		{"one engine is no comparison", map[*variant]float64{pg: 100}, false, "", ""},
		{"clear winner", map[*variant]float64{pg: 300, my: 200, ma: 250}, true, "mysql", "mysql 200 MB, mariadb 250 MB, postgres 300 MB"},
		{"within noise ties", map[*variant]float64{pg: 204, my: 200, ma: 400}, true, "tie: mysql ≈ postgres (within 5%)", "mysql 200 MB, postgres 204 MB"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, ok := lowest("Lowest memory footprint, idle", tc.vals, "MB", "basis")
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			if !ok {
				return
			}
			if d.Pick != tc.pick || !strings.HasPrefix(d.Why, tc.whyStart) || !d.Resource {
				t.Errorf("got pick %q why %q, want %q / %q...", d.Pick, d.Why, tc.pick, tc.whyStart)
			}
			if (d.Winner == nil) != strings.HasPrefix(tc.pick, "tie") {
				t.Errorf("winner %v for pick %q", d.Winner, d.Pick)
			}
		})
	}
}
