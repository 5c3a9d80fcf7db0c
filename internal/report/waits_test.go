package report

import (
	"testing"

	"github.com/fairbench/fairbench/internal/result"
)

func TestTopWaits(t *testing.T) {
	waits := func(counts ...any) *result.Waits {
		w := &result.Waits{}
		for i := 0; i < len(counts); i += 2 {
			n := counts[i+1].(int)
			w.Categories = append(w.Categories, result.WaitCount{Category: counts[i].(string), Count: n})
			w.Sessions += n
		}
		return w
	}
	for _, tc := range []struct {
		name string
		w    *result.Waits
		n    int
		want string
	}{
		{"none", nil, 2, "not sampled"},
		{"no samples", &result.Waits{}, 2, "not sampled"},
		{"server side first, client last", waits("cpu", 17, "log_flush", 13, "client", 70), 2, "on CPU 17%, log flush 13%; client 70%"},
		{"most sampled first", waits("cpu", 10, "log_flush", 30, "row_lock", 5, "client", 55), 2, "log flush 30%, on CPU 10%; client 55%"},
		{"only n of them", waits("cpu", 10, "log_flush", 30, "row_lock", 5, "client", 55), 1, "log flush 30%; client 55%"},
		{"no client", waits("cpu", 60, "data_read", 40), 2, "on CPU 60%, data read 40%"},
		{"client only", waits("client", 10), 2, "client 100%"},
	} {
		if got := TopWaits(tc.w, tc.n); got != tc.want {
			t.Errorf("%s: TopWaits = %q, want %q", tc.name, got, tc.want)
		}
	}
}
