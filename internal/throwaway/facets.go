package throwaway

import (
	"github.com/fairbench/fairbench/internal/dialect"
	"github.com/fairbench/fairbench/internal/engine/discovery"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/sqldb"
)

// A cluster's results carry the cluster's kind (discovery.Galera, discovery.PostgresHA), and its
// nodes' settings are its server's: their facets are read by that server's dialect.
func init() {
	for kind, server := range map[string]sqldb.Kind{discovery.Galera: sqldb.MariaDB, discovery.PostgresHA: sqldb.Postgres} {
		d := dialect.For(server)
		result.RegisterFacets(d.SettingsFamily(), d.Facets, kind)
	}
}
