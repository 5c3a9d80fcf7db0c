package throwaway

import (
	"testing"

	"github.com/fairbench/fairbench/internal/engine/discovery"
	"github.com/fairbench/fairbench/internal/result"
)

// A cluster's results carry the cluster's kind: their settings are read into facets by the
// cluster's server's dialect, so the parity audit compares a Galera cluster with a MariaDB
// server and a Patroni cluster with a PostgreSQL one.
func TestClusterResultsGetFacets(t *testing.T) {
	for _, c := range []struct {
		kind, family string
		settings     map[string]string
		want         result.Facet
	}{
		{discovery.Galera, "innodb", map[string]string{"innodb_flush_log_at_trx_commit": "1"}, result.Facet{Shown: "innodb_flush_log_at_trx_commit=1", Value: "on"}},
		{discovery.PostgresHA, "postgres", map[string]string{"fsync": "on", "synchronous_commit": "on"}, result.Facet{Shown: "fsync=on, synchronous_commit=on", Value: "on"}},
	} {
		r := &result.Result{Engine: result.Engine{Kind: c.kind}, Server: &result.Server{Settings: c.settings}}
		result.FillFacets(r)
		if got := r.Server.Facets[result.FacetDurability]; got != c.want || r.Server.SettingsFamily != c.family {
			t.Errorf("%s: durability %+v, family %q; want %+v, %q", c.kind, got, r.Server.SettingsFamily, c.want, c.family)
		}
	}
}
