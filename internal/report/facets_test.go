package report

import (
	"github.com/fairbench/fairbench/internal/dialect"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/sqldb"
)

// The fixtures record each server's settings under its own names, as results files do; the
// engine layer reads them into facets when a result is written or read. The report's tests
// register it as the binary does (dialect's init for the servers, throwaway's for clusters), so
// that the report itself still knows no engine's setting names.
func init() {
	for kind, server := range map[string]sqldb.Kind{"galera": sqldb.MariaDB, "postgres-ha": sqldb.Postgres} {
		d := dialect.For(server)
		result.RegisterFacets(d.SettingsFamily(), d.Facets, kind)
	}
}
