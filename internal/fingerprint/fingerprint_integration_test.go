package fingerprint

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/testserver"
	"github.com/fairbench/fairbench/internal/workload/workloadtest"

	_ "github.com/fairbench/fairbench/internal/workload/all"
)

func TestMain(m *testing.M) { testserver.Main(m) }

// The same generated data loaded into each real engine must give the same fingerprint, and a
// changed row must change it: that is what lets the parity audit call the data equal.
func TestSameDataSameFingerprint(t *testing.T) {
	for _, wl := range []struct {
		name string
		opts map[string]string
	}{
		{"oltp_read_write", map[string]string{"tables": "2", "table-size": "3000"}},
		{"tpcb", map[string]string{"scale": "1"}},
		{"payments", map[string]string{"accounts": "5000", "banks": "5"}},
		{"events_ingest", map[string]string{"customers": "2000", "events": "20000"}},
	} {
		t.Run(wl.name, func(t *testing.T) {
			got := map[string]*result.Dataset{}
			for _, kind := range testserver.Kinds() {
				tg := testserver.Database(t, kind)
				j := workloadtest.Job(t, tg, wl.name, wl.opts, 11)
				workloadtest.Prepare(t, j, 2)
				c := workloadtest.Conn(t, tg)
				ds, err := Take(context.Background(), c)
				if err != nil {
					t.Fatalf("%s: %v", kind, err)
				}
				t.Logf("%s: %d tables, %d indexes, %.2fs, note %q", kind, len(ds.Tables), len(ds.Indexes), ds.Seconds, ds.Note)
				if !ds.Checksummed || len(ds.Tables) == 0 {
					t.Fatalf("%s: no checksums: %+v", kind, ds)
				}
				got[kind] = ds
				if wl.name == "oltp_read_write" {
					changedRowChangesChecksum(t, c, ds)
				}
			}
			ref := got["postgres"]
			for kind, ds := range got {
				if !reflect.DeepEqual(ds.Tables, ref.Tables) {
					t.Errorf("%s tables %+v\n  differ from postgres's %+v", kind, ds.Tables, ref.Tables)
				}
				if !reflect.DeepEqual(ds.Indexes, ref.Indexes) {
					t.Errorf("%s indexes %v differ from postgres's %v", kind, ds.Indexes, ref.Indexes)
				}
			}
		})
	}
}

// changedRowChangesChecksum edits one row and expects the same counts but another checksum; the
// row is put back so the cross-engine comparison still holds.
func changedRowChangesChecksum(t *testing.T, c sqldb.Conn, before *result.Dataset) {
	t.Helper()
	old := workloadtest.Rows(t, c, "SELECT c FROM sbtest1 WHERE id = 1")[0][0]
	workloadtest.Exec(t, c, "UPDATE sbtest1 SET c = 'changed' WHERE id = 1")
	after, err := Take(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if after.Tables[0].Rows != before.Tables[0].Rows || after.Tables[0].Checksum == before.Tables[0].Checksum {
		t.Errorf("%s: one changed row gave %+v, before %+v: want the same count and another checksum", c.Kind(), after.Tables[0], before.Tables[0])
	}
	workloadtest.Exec(t, c, "UPDATE sbtest1 SET c = '"+strings.TrimRight(old, " ")+"' WHERE id = 1")
}
