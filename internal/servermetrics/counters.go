package servermetrics

import (
	"context"

	"github.com/fairbench/fairbench/internal/dialect"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/sqldb"
)

// The counter keys, as the dialect layer names them (result.CounterBufferReads and the rest).
const (
	KeyBufferReads       = result.CounterBufferReads
	KeyBufferHits        = result.CounterBufferHits
	KeyPagesWritten      = result.CounterPagesWritten
	KeyWALBytes          = result.CounterWALBytes
	KeyRowLockWaits      = result.CounterRowLockWaits
	KeyDeadlocks         = result.CounterDeadlocks
	KeyHistoryListLength = result.CounterHistoryListLength
	KeyDeadTuples        = result.CounterDeadTuples
	KeyRecvQueue         = result.CounterRecvQueue
)

// Counters reads the engine's cumulative counters (dialect.ServerFigures). Take one before and
// one after a run and subtract with Delta; a key that could not be read is absent, and Delta then
// leaves it out. Monitor.Finish reads the after-counters once the run's sessions have ended where
// the engine publishes their statistics late.
func Counters(ctx context.Context, c sqldb.Conn) (map[string]int64, error) {
	return dialect.Of(c).Counters(ctx, c)
}

// gauges keep their after-value in Delta and are left out of PerTransaction: a backlog divided
// by transactions means nothing.
var gauges = map[string]bool{KeyHistoryListLength: true, KeyDeadTuples: true, KeyRecvQueue: true}

// Delta is after minus before for each counter in both; gauges keep their after-value. A counter
// that went down was reset (server restart, pg_stat_reset) during the run: what it counted since
// the reset, its after-value, is the best lower bound there is.
func Delta(before, after map[string]int64) map[string]int64 {
	out := make(map[string]int64, len(after))
	for k, a := range after {
		if gauges[k] {
			out[k] = a
			continue
		}
		b, ok := before[k]
		if !ok {
			continue // without a starting point the after-value would pass for the run's own count
		}
		if a < b {
			out[k] = a
		} else {
			out[k] = a - b
		}
	}
	return out
}

// PerTransaction divides each counter delta by the number of transactions (every value is 0 when
// there were none). Gauges are left out.
func PerTransaction(delta map[string]int64, transactions int64) map[string]float64 {
	out := make(map[string]float64, len(delta))
	for k, v := range delta {
		if gauges[k] {
			continue
		}
		if transactions > 0 {
			out[k] = float64(v) / float64(transactions)
		} else {
			out[k] = 0
		}
	}
	return out
}
