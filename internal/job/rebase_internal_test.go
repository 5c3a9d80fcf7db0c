package job

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/result"
)

// lateWatcher answers the window-opening read after answer, or gives up when its context ends.
type lateWatcher struct {
	answer    time.Duration
	cancelled *atomic.Bool
}

func (w lateWatcher) Start(context.Context) error { return nil }
func (w lateWatcher) MeasureStart(ctx context.Context) error {
	select {
	case <-time.After(w.answer):
		return nil
	case <-ctx.Done():
		w.cancelled.Store(true)
		return ctx.Err()
	}
}
func (w lateWatcher) OnInterval(*result.Interval)                           {}
func (w lateWatcher) Finish(context.Context, int64) (*result.Server, error) { return nil, nil }

// The window-opening read runs beside the clients and is never cut short while the step runs: a
// read that answers late is waited for, one that does not answer by the join's limit is given up
// (its context cancelled) before anything else uses the connection.
func TestRebaseBesideJoins(t *testing.T) {
	for _, tc := range []struct {
		name          string
		answer, limit time.Duration
		wantCancelled bool
	}{
		{"answers late, within the limit", 300 * time.Millisecond, 5 * time.Second, false},
		{"never answers", time.Hour, 200 * time.Millisecond, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var cancelled atomic.Bool
			t0 := time.Now()
			r := rebaseBeside(context.Background(), lateWatcher{answer: tc.answer, cancelled: &cancelled})
			if d := time.Since(t0); d > 100*time.Millisecond {
				t.Errorf("the window waited %s for the read", d)
			}
			r.join(tc.limit)
			if d := time.Since(t0); d > tc.answer+time.Second && d > tc.limit+time.Second {
				t.Errorf("join took %s", d)
			}
			select {
			case <-r.done:
			default:
				t.Error("join returned while the read still ran")
			}
			if cancelled.Load() != tc.wantCancelled {
				t.Errorf("read cancelled %v, want %v", cancelled.Load(), tc.wantCancelled)
			}
		})
	}
	var none *rebaseRead
	none.join(time.Second) // no warm-up, no read: nothing to wait for
}
