package tpcc

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/job"
	"github.com/fairbench/fairbench/internal/testserver"
	"github.com/fairbench/fairbench/internal/workload"
	"github.com/fairbench/fairbench/internal/workload/workloadtest"
)

// sysbench-tpcc on each engine with two table sets of one warehouse: the suffixed tables and
// their foreign keys (enforced on every engine), TPC-C's conditions after the load and after a
// run of the 10/10/1/1/1 mix in which the rolled-back NewOrders count as transactions, and a
// cleanup that leaves nothing.
func TestSysbenchTPCCOnRealServers(t *testing.T) {
	for _, kind := range testserver.Kinds() {
		t.Run(kind, func(t *testing.T) {
			tg := testserver.Database(t, kind)
			ctx := context.Background()
			j := workloadtest.Job(t, tg, sbName, map[string]string{"scale": "1", "tables": "2"}, 11)
			workloadtest.Prepare(t, j, 2)
			c := workloadtest.Conn(t, tg)
			for _, table := range []string{"warehouse2", "new_orders1", "order_line2", "item1"} {
				if got := workloadtest.Rows(t, c, "SELECT COUNT(*) FROM "+table)[0][0]; got == "0" {
					t.Errorf("%s is empty", table)
				}
			}
			requireVerdicts(t, j, "after prepare")
			// The foreign keys hold on every engine: an order line for an order that does not exist is refused.
			err := c.Exec(ctx, "INSERT INTO order_line1 (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_dist_info) "+
				"VALUES (999999, 1, 1, 1, 1, 1, 1, 1, 'x')")
			if err == nil {
				t.Error("an order line without its order was accepted: the foreign key is not enforced")
			}

			res := workloadtest.Run(t, j, 4, 3*time.Second)
			no := res.ByKind["new_order"]
			var sum int64
			for _, k := range kinds {
				ks := res.ByKind[k]
				if ks == nil || ks.Transactions == 0 {
					t.Errorf("no %s transaction ran", k)
					continue
				}
				sum += ks.Transactions
			}
			// sysbench counts every event, the rolled-back NewOrders too: so do the transactions.
			if sum != res.Transactions || res.Rollbacks != no.Rollbacks {
				t.Errorf("kinds sum to %d of %d transactions; %d rollbacks, %d of them NewOrders", sum, res.Transactions, res.Rollbacks, no.Rollbacks)
			}
			if share := float64(no.Transactions) / float64(res.Transactions); share < 0.33 || share > 0.54 {
				t.Errorf("NewOrder is %.0f%% of the mix, want about 10/23 (43%%)", share*100)
			}
			requireVerdicts(t, j, "after the run")
			workloadtest.Cleanup(t, j, c, j.Workload.(*sbtpcc).names()...)
		})
	}
}

// requireVerdicts wants all twelve conditions to hold on each of the two table sets.
func requireVerdicts(t *testing.T, j *job.Job, when string) {
	t.Helper()
	vs, err := j.Workload.(workload.Verdicter).Verdicts(context.Background(), j.Env(1, false, nil, nil))
	if err != nil {
		t.Fatalf("%s: %v", when, err)
	}
	if len(vs) != 24 {
		t.Fatalf("%s: %d verdicts, want 12 for each of 2 table sets", when, len(vs))
	}
	for i, v := range vs {
		if set := "table set " + string(rune('1'+i/12)); !strings.HasPrefix(v.Name, set) || !v.OK {
			t.Errorf("%s: %s: ok=%v %s (want %s, holding)", when, v.Name, v.OK, v.Detail, set)
		}
	}
}
