package report

import (
	"strings"
	"testing"

	"github.com/fairbench/fairbench/internal/result"
)

// The report says which run's statement accounts began late in its window, and only past a
// twentieth of it: a busy machine's late first read is why calls fall short of transactions.
func TestLateAccounts(t *testing.T) {
	run := func(lateMS float64) *result.Result {
		return &result.Result{DurationS: 10, Statements: &result.Statements{Calls: 100, LateMS: lateMS}}
	}
	for _, tc := range []struct {
		name string
		late []float64 // per engine, one run each
		want string    // in the note; "" for none
	}{
		{"quiet", []float64{3, 12}, ""},
		{"a twentieth is still none", []float64{500, 2}, ""},
		{"the latest is named", []float64{600, 1500}, "On mariadb (oltp_insert) the accounts' first read was answered 15%"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := instrumentBlock{label: "oltp_insert", names: []string{"postgres", "mariadb"}}
			for _, l := range tc.late {
				b.runs = append(b.runs, []*result.Result{run(l)})
			}
			got := lateAccounts([]instrumentBlock{b})
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("note %q, want %q", got, tc.want)
			}
		})
	}
}
