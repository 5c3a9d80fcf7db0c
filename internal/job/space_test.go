package job_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/testserver"
	"github.com/fairbench/fairbench/internal/workload"
	"github.com/fairbench/fairbench/internal/workload/workloadtest"
)

// A data set bigger than the free space of the server's data directory is refused before a
// table is created (--table-size 2147483647 was taken with no space check): about
// 400 GB of sysbench rows, on servers whose directories are on this machine's small disk.
func TestPrepareRefusesWhatCannotFit(t *testing.T) {
	for _, kind := range testserver.Kinds() {
		t.Run(kind, func(t *testing.T) {
			tg := testserver.Database(t, kind)
			c := workloadtest.Conn(t, tg)
			j := newJob(t, tg, "oltp_read_write", map[string]string{"tables": "1", "table-size": "2147483647"})
			// Bounded: were the check to miss, the load must not go on filling the disk.
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			err := j.Prepare(ctx, j.Env(2, false, nil, nil))
			var de *workload.DataError
			if !errors.As(err, &de) || !strings.Contains(err.Error(), "needs at least 400GiB") || !strings.Contains(err.Error(), "free") {
				t.Fatalf("prepare of 2^31 rows: %v, want a refusal naming the space needed and free", err)
			}
			if st, err := workload.StateOf(context.Background(), c, "sbtest1"); err != nil || st != workload.Absent {
				t.Errorf("sbtest1 is %v (%v): the refusal must come before any table", st, err)
			}
		})
	}
}
