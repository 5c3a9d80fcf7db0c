package workload

import (
	"context"
	"syscall"
	"time"
)

// pauseSlice is the longest the kernel sleeps at once in Pause: the run's stop (ctx) is seen
// within it.
const pauseSlice = 10 * time.Millisecond

// Pause sleeps d on the calling OS thread, in the kernel (nanosleep), in slices of at most
// pauseSlice, and returns ctx's error if the run is stopped meanwhile. A client goroutine is
// locked to its thread (for its scheduling policy), so a Go timer parks it and the runtime must
// hand it back to that thread from another one when the timer fires (the likely cost; not
// traced). With a timer, a pgbench script with \sleep 1 ms ran at 0.74x pgbench's TPS on a busy
// 2-core machine; with Pause at 1.01x (docs/measurements.md).
func Pause(ctx context.Context, d time.Duration) error {
	end := time.Now().Add(d)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		left := time.Until(end)
		if left <= 0 {
			return nil
		}
		ts := syscall.NsecToTimespec(int64(min(left, pauseSlice)))
		for syscall.Nanosleep(&ts, &ts) == syscall.EINTR {
		}
	}
}
