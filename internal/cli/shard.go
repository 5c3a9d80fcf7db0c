package cli

import (
	"context"
	"os"
	"time"

	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/runner"
	"github.com/fairbench/fairbench/internal/runspec"
)

// connectMargin is how early a shard wakes before its warm-up, to open its connections: the
// runner then warms up until --start-at exactly, so the margin only lengthens the warm-up.
const connectMargin = 2 * time.Second

// sharding is a run's part in a multi-host run: which shard, and when measuring starts.
type sharding struct {
	shard   runspec.Shard
	startAt time.Time
}

// sharding reads --shard and --start-at into cfg (this shard's rate, the start instant). nil
// when neither is given. A shard runs one thread count: a sweep or a ramp across hosts would
// need the hosts to agree on every step, which merge cannot check.
func (r *runFlags) sharding(cfg *runner.Config, threads []int) (*sharding, error) {
	if r.shard == "" && r.startAt == "" {
		return nil, nil
	}
	sh := &sharding{shard: runspec.Shard{Index: 1, Count: 1}}
	var err error
	if r.shard != "" {
		if sh.shard, err = runspec.ParseShard("--shard", r.shard); err != nil {
			return nil, err
		}
		if len(threads) > 1 || cfg.Ramp != nil {
			return nil, badInputf("--shard runs one thread count: drop the thread list or --ramp, or run each step as its own sharded run")
		}
		if _, err := sh.shard.Threads(threads[0]); err != nil {
			return nil, err
		}
		cfg.Rate = sh.shard.Rate(cfg.Rate)
	}
	if r.startAt != "" {
		if sh.startAt, err = runspec.ParseStartAt("--start-at", r.startAt, time.Now()); err != nil {
			return nil, err
		}
		cfg.StartAt = sh.startAt
	}
	return sh, nil
}

// wait sleeps until the warm-up before --start-at is due (less the time to connect), so every
// shard warms up about as long and measures the same window. Ctrl-C ends the wait.
func (s *sharding) wait(ctx context.Context, warmup time.Duration) error {
	if s.startAt.IsZero() {
		return nil
	}
	d := time.Until(s.startAt.Add(-warmup - connectMargin))
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// record is what the result says of this shard.
func (s *sharding) record() *result.Shard {
	if s.shard.Count == 1 {
		return nil // --start-at alone: one process, nothing to merge
	}
	host, _ := os.Hostname()
	return &result.Shard{Index: s.shard.Index, Count: s.shard.Count, Host: host}
}
