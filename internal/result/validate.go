package result

import (
	"errors"
	"fmt"

	"github.com/fairbench/fairbench/internal/inputfile"
)

// MaxFileBytes bounds a results file fairbench reads. The largest it writes are long runs' per-
// second intervals (about 0.6 KB each: a day is some 50 MB); a larger file is not a result, and
// decoding it whole would take gigabytes (a 139 MB file took 6.3 GB and 49 s).
const MaxFileBytes = 64 << 20

// readLimited reads path unless it is over MaxFileBytes.
func readLimited(path string) ([]byte, error) {
	data, err := inputfile.Read(path, MaxFileBytes)
	var big *inputfile.TooLargeError
	if errors.As(err, &big) {
		return nil, fmt.Errorf("%w, more than any results file fairbench writes: not read", err)
	}
	return data, err
}

// validate refuses what no run can have measured, so that a report never ranks or renders it: a
// document without the fields every result has (an empty or all-null file), and negative counts,
// rates, durations or latencies (a crafted -100 TPS ranked best).
func (r *Result) validate(source string) error {
	if r.Schema < 1 || r.Engine.Kind == "" || r.Workload.Name == "" {
		return fmt.Errorf("%s is not a fairbench results file: it has no schema, engine kind or workload name", source)
	}
	counts := map[string]float64{
		"threads": float64(r.Threads), "transactions": float64(r.Transactions), "tps": r.TPS, "qps": r.QPS,
		"errors": float64(r.Errors), "retries": float64(r.Retries), "rollbacks": float64(r.Rollbacks),
		"rate": r.Rate, "warmup_s": r.WarmupS, "duration_s": r.DurationS, "client_cpu_s": r.ClientCPUS,
		"queries.total": float64(r.Queries.Total),
	}
	for _, l := range []struct {
		name string
		lat  *Latency
	}{{"latency_ms", &r.LatencyMS}, {"schedule_lag_ms", r.ScheduleLagMS}} {
		if l.lat == nil {
			continue
		}
		for k, v := range map[string]float64{"avg": l.lat.Avg, "p50": l.lat.P50, "p90": l.lat.P90, "p95": l.lat.P95, "p99": l.lat.P99, "p999": l.lat.P999, "max": l.lat.Max} {
			counts[l.name+"."+k] = v
		}
	}
	for i, iv := range r.Intervals {
		if iv.TPS < 0 || iv.QPS < 0 || iv.Threads < 0 {
			return fmt.Errorf("%s: interval %d has a negative figure; no run measures one, so this is not a results file fairbench wrote", source, i+1)
		}
	}
	for name, v := range counts {
		if v < 0 {
			return fmt.Errorf("%s: %s is %g; no run measures a negative figure, so this is not a results file fairbench wrote", source, name, v)
		}
	}
	return nil
}

// Fail marks r incomplete because of err, unless it already is (its first reason stays): a run
// whose command fails must not read as complete in its file (a PostgreSQL restarted mid-run
// ended the run with exit 1 and a result that said complete).
func (r *Result) Fail(err error) {
	if err == nil || !r.Complete {
		return
	}
	r.Complete = false
	r.Error = err.Error()
}
