package workloadfile_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/fingerprint"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/testserver"
	"github.com/fairbench/fairbench/internal/workload/workloadtest"

	_ "github.com/fairbench/fairbench/internal/workload/all"
)

func TestMain(m *testing.M) { testserver.Main(m) }

const shop = "../../examples/workloads/shop.yaml"

var shopTables = []string{"customers", "products", "orders", "order_lines"}

// The shop example on every engine through the command line's path: the same rows loaded (equal
// content checksums and the same indexes), every transaction run without an error, the data
// check passed, and cleanup leaving nothing (issue 24).
func TestShopOnEveryEngine(t *testing.T) {
	prints := map[string]*result.Dataset{}
	for _, kind := range []string{"postgres", "mariadb", "mysql"} {
		t.Run(kind, func(t *testing.T) {
			tg := testserver.Database(t, kind)
			j := workloadtest.Job(t, tg, shop, map[string]string{"scale": "1"}, 7)
			workloadtest.Prepare(t, j, 2)
			c := workloadtest.Conn(t, tg)
			fp, err := fingerprint.Take(context.Background(), c)
			if err != nil {
				t.Fatal(err)
			}
			prints[kind] = fp
			res := workloadtest.Run(t, j, 4, 2*time.Second)
			for _, k := range []string{"browse", "search", "place_order", "pay"} {
				if bk := res.ByKind[k]; bk == nil || bk.Transactions == 0 || bk.Errors > 0 {
					t.Errorf("transaction %s: %+v", k, bk)
				}
			}
			if res.Queries.Write == 0 || res.Queries.Read == 0 {
				t.Errorf("queries %+v: want reads and writes", res.Queries)
			}
			if dc, err := j.Check(context.Background(), nil); err != nil || !dc.Passed {
				t.Errorf("check after the run: %+v, %v", dc, err)
			}
			workloadtest.PrepareAgainRefused(t, j, 1)
			workloadtest.Cleanup(t, j, c, shopTables...)
		})
	}
	pg := prints["postgres"]
	for kind, fp := range prints {
		if pg == nil || fp == nil {
			continue
		}
		if !slices.Equal(fp.Tables, pg.Tables) {
			t.Errorf("%s loaded %+v, postgres %+v: want the same rows", kind, fp.Tables, pg.Tables)
		}
		if !slices.Equal(fp.Indexes, pg.Indexes) {
			t.Errorf("%s has indexes %v, postgres %v", kind, fp.Indexes, pg.Indexes)
		}
	}
}
