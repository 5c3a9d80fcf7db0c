package machineload

import (
	"context"
	"errors"
	"testing"

	"github.com/fairbench/fairbench/internal/result"
)

// A window the hypervisor stole from is measured again, at most twice, and the windows set aside
// stay in the result; a failed or cut-short window is never measured again.
func TestUnstolen(t *testing.T) {
	for _, tc := range []struct {
		name      string
		steals    []float64 // each try's mean steal, in order
		failAt    int       // the try (from 1) that fails; 0 none
		wantTries int
		wantAside int
	}{
		{"quiet", []float64{1}, 0, 1, 0},
		{"stolen once", []float64{12, 2}, 0, 2, 1},
		{"at the limit is not stolen", []float64{5}, 0, 1, 0},
		{"stolen every time", []float64{20, 9, 30}, 0, 3, 2},
		{"failed while stolen", []float64{20}, 1, 1, 0},
		{"failed on the second try", []float64{20, 25}, 2, 2, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tries, heard := 0, 0
			measure := func(context.Context) (*result.Result, error) {
				tries++
				steal := tc.steals[min(tries, len(tc.steals))-1]
				res := &result.Result{Complete: true, TPS: 1000 / (1 + steal/10), Machine: &result.MachineLoad{StealPctMean: steal, StealPctMax: steal + 3}}
				if tries == tc.failAt {
					res.Complete = false
					return res, errors.New("the server froze")
				}
				return res, nil
			}
			res, _ := Unstolen(context.Background(), measure, func(result.SetAsideWindow) { heard++ })
			if tries != tc.wantTries || len(res.Machine.SetAside) != tc.wantAside || heard != tc.wantAside {
				t.Fatalf("tries %d, set aside %+v, heard %d; want %d tries, %d set aside", tries, res.Machine.SetAside, heard, tc.wantTries, tc.wantAside)
			}
			if tc.wantAside > 0 {
				first := res.Machine.SetAside[0]
				if first.StealPctMean != tc.steals[0] || first.StealPctMax != tc.steals[0]+3 || first.TPS != 1000/(1+tc.steals[0]/10) || res.Machine.StealLimitPct != StealLimitPct {
					t.Errorf("first window set aside %+v, limit %v: want its steal and TPS, and the limit", first, res.Machine.StealLimitPct)
				}
			}
		})
	}
}
