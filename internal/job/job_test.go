package job_test

import (
	"context"
	"io"
	"math"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/job"
	"github.com/fairbench/fairbench/internal/randgen"
	"github.com/fairbench/fairbench/internal/runner"
	"github.com/fairbench/fairbench/internal/testserver"
	_ "github.com/fairbench/fairbench/internal/workload/oltp"
)

func TestMain(m *testing.M) { testserver.Main(m) }

// TestWireAndTransport: a result records the transport and the statements and round trips per
// transaction, the same on every engine for the same workload (oltp_read_only: BEGIN, 10 point
// selects, 4 ranges, COMMIT, one round trip each).
func TestWireAndTransport(t *testing.T) {
	for _, kind := range testserver.Kinds() {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			j, err := job.New(testserver.Database(t, kind), "oltp_read_only",
				map[string]string{"tables": "1", "table-size": "200"}, randgen.DefaultConfig("uniform"), 1)
			if err != nil {
				t.Fatal(err)
			}
			if err := j.Workload.Prepare(ctx, j.Env(1, false, nil, io.Discard)); err != nil {
				t.Fatal(err)
			}
			res, err := j.Run(ctx, runner.Config{Threads: 2, Duration: 700 * time.Millisecond, Warmup: 200 * time.Millisecond,
				MaxTries: 3, ReportInterval: 100 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			if res.Engine.Transport != "plaintext" {
				t.Errorf("transport %q, want plaintext (TLS only when the DSN asks)", res.Engine.Transport)
			}
			w := res.Wire
			if w == nil || res.Transactions < 20 {
				t.Fatalf("wire %+v after %d transactions", w, res.Transactions)
			}
			// Threads in a transaction when the window opens or closes shift a few statements.
			if math.Abs(w.StatementsPerTxn-16) > 0.5 || math.Abs(w.RoundTripsPerTxn-16) > 0.5 {
				t.Fatalf("per transaction: %.2f statements, %.2f round trips; want 16 and 16", w.StatementsPerTxn, w.RoundTripsPerTxn)
			}
			t.Logf("%d transactions: %.3f statements, %.3f round trips each", res.Transactions, w.StatementsPerTxn, w.RoundTripsPerTxn)
		})
	}
}
