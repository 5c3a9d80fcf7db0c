package result

import "sync"

// A Facet is one setting that decides whether engines ran on equal terms, recorded under a name
// every engine shares: what reads results (the parity audit, the setting differences named
// before a verdict) compares engines by it without knowing any engine's own setting names. The
// engine layer (internal/dialect) forms it from the settings it read, when it reads them.
type Facet struct {
	// Shown is the value as the engine's own settings say it: "fsync=on, synchronous_commit=on".
	Shown string `json:"shown"`
	// Value is what is compared across engines: "on", "134217728", "READ COMMITTED".
	Value string `json:"value"`
	// NoSuch: the engine has no such setting (a binary log on PostgreSQL); the facet is compared
	// among the engines that have it.
	NoSuch bool `json:"no_such,omitempty"`
	// Mechanism names how the engine does the thing where engines do it in different ways with
	// different costs (torn-page protection), for a reader to see why equal values still differ.
	Mechanism string `json:"mechanism,omitempty"`
}

// The facets' common names, the keys of Server.Facets.
const (
	FacetDurability          = "durability"           // commits wait for the log's flush
	FacetBinaryLog           = "binary_log"           // a second log of every change, and its sync
	FacetBufferPool          = "buffer_pool"          // bytes of the engine's own page cache
	FacetRedoSize            = "redo_size"            // bytes of WAL / redo before a checkpoint
	FacetTornPage            = "torn_page_protection" // full-page images or a doublewrite buffer
	FacetIsolation           = "isolation"            // the default transaction isolation
	FacetPageSize            = "page_size"            // bytes of a data page
	FacetPageChecksums       = "page_checksums"       // pages checksummed on write
	FacetMaxConnections      = "max_connections"      // the server's connection limit
	FacetCharset             = "charset"              // the server's character set
	FacetFlushMethod         = "flush_method"         // how data files are opened and synced
	FacetStatementAccounting = "statement_accounting" // per-statement accounts kept by the server
)

// FacetReader forms the facets of a server from its Settings. A kind's reader is registered by
// the engine layer (RegisterFacets) and applied when a result is written, whichever command
// measured it, and when one recorded before facets existed is read.
type FacetReader func(settings map[string]string) map[string]Facet

var facetReaders = struct {
	sync.RWMutex
	byKind map[string]FacetReader
	family map[string]string
}{byKind: map[string]FacetReader{}, family: map[string]string{}}

// RegisterFacets makes read the facet reader of the engine kinds given (Engine.Kind's values:
// "postgres", "postgres-ha", …), whose settings share one family's names ("postgres", "innodb").
func RegisterFacets(family string, read FacetReader, kinds ...string) {
	facetReaders.Lock()
	defer facetReaders.Unlock()
	for _, k := range kinds {
		facetReaders.byKind[k] = read
		facetReaders.family[k] = family
	}
}

// FillFacets gives a result whose server's settings have no facets yet (one being written, or
// one recorded before facets existed) its facets and settings family, where the engine layer
// knows its kind. A result that has them, or whose kind no reader knows, is left as it is: the
// audit then says the setting was not recorded.
func FillFacets(r *Result) {
	if r.Server == nil || r.Server.Facets != nil || len(r.Server.Settings) == 0 {
		return
	}
	facetReaders.RLock()
	read, family := facetReaders.byKind[r.Engine.Kind], facetReaders.family[r.Engine.Kind]
	facetReaders.RUnlock()
	if read == nil {
		return
	}
	r.Server.Facets, r.Server.SettingsFamily = read(r.Server.Settings), family
}
