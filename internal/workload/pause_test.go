package workload

import (
	"context"
	"errors"
	"testing"
	"time"
)

// Pause sleeps at least what it is asked, and a stopped run ends a long pause within a slice
// (10 ms), not at its end.
func TestPause(t *testing.T) {
	began := time.Now()
	if err := Pause(context.Background(), 5*time.Millisecond); err != nil || time.Since(began) < 5*time.Millisecond {
		t.Errorf("Pause(5ms) = %v after %v", err, time.Since(began))
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	began = time.Now()
	err := Pause(ctx, time.Minute)
	if !errors.Is(err, context.Canceled) || time.Since(began) > 5*time.Second {
		t.Errorf("Pause(1m) stopped after 20 ms: %v after %v, want context.Canceled at once", err, time.Since(began))
	}
	if err := Pause(ctx, 0); !errors.Is(err, context.Canceled) {
		t.Errorf("Pause on a stopped run: %v", err)
	}
}
