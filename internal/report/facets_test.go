package report

// The fixtures record each server's settings under its own names, as results files do; the
// engine layer reads them into facets when a result is written or read. The report's tests link
// it as the binary does (dialect's registration for servers, throwaway's for clusters), so that
// the report itself still knows no engine's setting names.
import _ "github.com/fairbench/fairbench/internal/throwaway"
