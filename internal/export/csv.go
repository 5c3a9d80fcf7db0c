// Package export writes results as CSV for spreadsheets: one row per run, or one row per
// measured interval. The columns are the results schema's own names (docs/results-schema.md).
package export

import (
	"encoding/csv"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/fairbench/fairbench/internal/output"
	"github.com/fairbench/fairbench/internal/result"
)

var runColumns = []string{
	"engine", "engine_version", "workload", "label", "started_at", "complete", "threads", "rate",
	"duration_s", "transactions", "tps", "qps", "errors", "retries",
	"latency_avg_ms", "latency_p50_ms", "latency_p95_ms", "latency_p99_ms", "latency_p999_ms", "latency_max_ms",
	"client_cpu_s", "server_cpu_pct",
	// The engine's given name (a target's, a build's) and a capacity search's figures: empty
	// where the run has none.
	"engine_name", "capacity_slo", "capacity_per_s", "capacity_low_per_s", "capacity_high_per_s", "capacity_reached", "capacity_at_least",
}

var intervalColumns = []string{"engine", "engine_version", "workload", "label", "t", "threads", "tps", "qps", "p95_ms", "p99_ms", "errors", "retries", "server_cpu_pct"}

// Wrote says whether the file at path is a CSV file export wrote (its header is one of ours).
var Wrote = output.StartsWith(strings.Join(runColumns, ",")+"\n", strings.Join(intervalColumns, ",")+"\n")

// Runs writes one row per result.
func Runs(w io.Writer, rs []*result.Result) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(runColumns); err != nil {
		return err
	}
	for _, r := range rs {
		l := r.LatencyMS
		row := append(ident(r), r.StartedAt.UTC().Format(time.RFC3339), strconv.FormatBool(r.Complete),
			itoa(int64(r.Threads)), ftoa(r.Rate), ftoa(r.DurationS), itoa(r.Transactions), ftoa(r.TPS), ftoa(r.QPS),
			itoa(r.Errors), itoa(r.Retries),
			ftoa(l.Avg), ftoa(l.P50), ftoa(l.P95), ftoa(l.P99), ftoa(l.P999), ftoa(l.Max),
			ftoa(r.ClientCPUS), serverCPU(r), text(r.Engine.Alias))
		row = append(row, capacityColumns(r.Capacity)...)
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// Intervals writes one row per measured interval of every result.
func Intervals(w io.Writer, rs []*result.Result) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(intervalColumns); err != nil {
		return err
	}
	for _, r := range rs {
		for _, iv := range r.Intervals {
			row := append(ident(r), ftoa(iv.T), itoa(int64(iv.Threads)), ftoa(iv.TPS), ftoa(iv.QPS),
				ftoa(iv.P95MS), ftoa(iv.P99MS), itoa(iv.Errors), itoa(iv.Retries), ftoa(iv.ServerCPUPct))
			if err := cw.Write(row); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

func ident(r *result.Result) []string {
	return []string{text(r.Engine.Kind), text(r.Engine.Version), text(r.Workload.Name), text(r.Label)}
}

// text keeps a spreadsheet from reading a text cell as a formula: a results file may come from
// anywhere, and a label such as =HYPERLINK(...) or @SUM(...) would run when the CSV is opened.
// Such a cell gets a leading apostrophe, which spreadsheets show as text (OWASP's advice for CSV
// injection). Numbers are written by itoa and ftoa and never pass through here.
func text(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// capacityColumns are a capacity search's figures, or empty cells.
func capacityColumns(c *result.Capacity) []string {
	if c == nil {
		return make([]string, 6)
	}
	return []string{text(c.SLO), ftoa(c.PerS), ftoa(c.LowPerS), ftoa(c.HighPerS), text(c.Reached), strconv.FormatBool(c.AtLeast)}
}

func serverCPU(r *result.Result) string {
	if r.Server == nil {
		return ""
	}
	return ftoa(r.Server.CPUPct)
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// ftoa writes the shortest text that reads back as the same number, as spreadsheets expect.
func ftoa(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
