// Package merge joins the shards of one multi-host run (run --shard I/N on several client
// hosts) into one result, exactly: counts are summed, latency histograms merged (percentiles are
// never averaged), intervals lined up on the wall clock, and each shard's own figures kept so a
// slow shard shows.
package merge

import (
	"fmt"
	"maps"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/fairbench/fairbench/internal/histogram"
	"github.com/fairbench/fairbench/internal/result"
)

// Error is a merge the input does not allow (shards of different runs, windows apart); the
// command line reports it as the user's to fix.
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

func errorf(format string, args ...any) error { return &Error{fmt.Sprintf(format, args...)} }

// MaxSkew is how far the shards' measured windows may be apart: the larger of one second and
// a tenth of the shortest window. Further apart, their sum is no longer one load.
func MaxSkew(shortest time.Duration) time.Duration {
	return max(time.Second, shortest/10)
}

// Shard is one input with the name it is known by in errors (its file).
type Shard struct {
	Name   string
	Result *result.Result
}

// Merge joins shards into one result. Throughput is the sum of the shards' own rates (each
// shard's transactions over its own window), which is the load the server saw together.
func Merge(shards []Shard) (*result.Result, error) {
	if len(shards) < 2 {
		return nil, errorf("merge needs two or more shard results, got %d", len(shards))
	}
	if err := sameRun(shards); err != nil {
		return nil, err
	}
	if err := overlap(shards); err != nil {
		return nil, err
	}
	sort.SliceStable(shards, func(i, j int) bool { return shardIndex(shards[i]) < shardIndex(shards[j]) })
	m := base(shards[0].Result)
	for _, s := range shards {
		add(m, s.Result)
	}
	if err := mergeHistograms(m, shards); err != nil {
		return nil, err
	}
	if err := mergeKindHistograms(m, shards); err != nil {
		return nil, err
	}
	m.Intervals = alignIntervals(shards)
	m.DataCheck = mergeDataCheck(shards)
	m.Machine = mergeMachine(shards)
	m.Waits = mergeWaits(shards)
	m.Statements = mergeStatements(shards)
	m.ClientStatements = mergeClientStatements(shards)
	mergeAvailability(m, shards)
	finish(m)
	markMissing(m, shards)
	return m, nil
}

// markMissing marks a merge that lacks some of the run's shards incomplete, naming them: its
// sums are then the load of the hosts given, not of the run (--threads and --rate were totals).
func markMissing(m *result.Result, shards []Shard) {
	first := shards[0].Result.Shard
	if first == nil {
		return
	}
	have := map[int]bool{}
	for _, s := range shards {
		if s.Result.Shard != nil {
			have[s.Result.Shard.Index] = true
		}
	}
	var missing []string
	for i := 1; i <= first.Count; i++ {
		if !have[i] {
			missing = append(missing, fmt.Sprint(i))
		}
	}
	if len(missing) == 0 {
		return
	}
	m.Complete = false
	note := fmt.Sprintf("shard %s of %d missing: the figures are %d of the run's %d client hosts", strings.Join(missing, ", "), first.Count, len(have), first.Count)
	if m.Error != "" {
		note = m.Error + "; " + note
	}
	m.Error = note
}

func shardIndex(s Shard) int {
	if s.Result.Shard != nil {
		return s.Result.Shard.Index
	}
	return math.MaxInt
}

// sameRun refuses shards of different workloads, options, engines or shard sets.
func sameRun(shards []Shard) error {
	first := shards[0]
	a := first.Result
	seen := map[int]string{}
	for _, s := range shards {
		r := s.Result
		switch {
		case r.Measured == nil:
			return errorf("%s has no measured window (it was not run with --shard): merge only shard results", s.Name)
		case r.TPCH != nil:
			return errorf("%s is a TPC-H run: merge joins OLTP shards only", s.Name)
		case r.Capacity != nil:
			return errorf("%s is a capacity search: its rates are one client's, and merge joins the shards of one run", s.Name)
		case r.Workload.Name != a.Workload.Name:
			return errorf("%s ran %s but %s ran %s: merge only shards of one run", s.Name, r.Workload.Name, first.Name, a.Workload.Name)
		case !maps.Equal(r.Workload.Options, a.Workload.Options):
			return errorf("%s ran %s with other options than %s (%s): merge only shards of one run", s.Name, r.Workload.Name, first.Name, optionDiff(a.Workload.Options, r.Workload.Options))
		case r.Engine.Kind != a.Engine.Kind || r.Engine.Version != a.Engine.Version:
			return errorf("%s measured %s %s but %s measured %s %s: merge only shards of one server", s.Name, r.Engine.Kind, r.Engine.Version, first.Name, a.Engine.Kind, a.Engine.Version)
		case (r.Rate > 0) != (a.Rate > 0):
			return errorf("%s and %s mix open and closed loop: merge only shards of one run", s.Name, first.Name)
		case r.Routing != a.Routing:
			return errorf("%s sent its statements to the %s but %s to the %s: merge only shards of one run", s.Name, r.Routing, first.Name, a.Routing)
		case !sameData(r.Prepared, a.Prepared):
			return errorf("%s ran on another data set than %s (%s): merge only shards that ran on one prepared data set", s.Name, first.Name, dataDiff(a.Prepared, r.Prepared))
		}
		if r.Shard != nil && a.Shard != nil && r.Shard.Count != a.Shard.Count {
			return errorf("%s is shard %d of %d but %s is shard %d of %d: merge only shards of one run", s.Name, r.Shard.Index, r.Shard.Count, first.Name, a.Shard.Index, a.Shard.Count)
		}
		if r.Shard != nil {
			if other, dup := seen[r.Shard.Index]; dup {
				return errorf("%s and %s are both shard %d: give each shard once", other, s.Name, r.Shard.Index)
			}
			seen[r.Shard.Index] = s.Name
		}
	}
	return nil
}

// sameData says whether two shards ran on one data set: the same prepare record (the target's
// fairbench_dataset row), which every shard reads from the server it measures. A shard without
// the record (the workload keeps none) is not held against one with it.
func sameData(a, b *result.Prepared) bool {
	if a == nil || b == nil {
		return true
	}
	return a.Name == b.Name && maps.Equal(a.Params, b.Params) && a.StartedAt == b.StartedAt
}

func dataDiff(a, b *result.Prepared) string {
	if a.Name != b.Name {
		return fmt.Sprintf("%s vs %s", a.Name, b.Name)
	}
	if !maps.Equal(a.Params, b.Params) {
		return optionDiff(a.Params, b.Params)
	}
	return fmt.Sprintf("prepared at %s vs %s", a.StartedAt, b.StartedAt)
}

func optionDiff(a, b map[string]string) string {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		if a[k] != b[k] {
			return fmt.Sprintf("--%s %q vs %q", k, a[k], b[k])
		}
	}
	return "none"
}

// overlap refuses windows further apart than MaxSkew, saying by how much.
func overlap(shards []Shard) error {
	shortest := time.Duration(math.MaxInt64)
	var earliest, latest Shard
	for _, s := range shards {
		w := s.Result.Measured
		shortest = min(shortest, w.To.Sub(w.From))
		if earliest.Result == nil || w.From.Before(earliest.Result.Measured.From) {
			earliest = s
		}
		if latest.Result == nil || w.From.After(latest.Result.Measured.From) {
			latest = s
		}
	}
	startSkew := latest.Result.Measured.From.Sub(earliest.Result.Measured.From)
	if limit := MaxSkew(shortest); startSkew > limit {
		return errorf("%s began measuring %s after %s, more than the %s allowed: start the shards together with --start-at",
			latest.Name, startSkew.Round(time.Millisecond), earliest.Name, limit)
	}
	for _, s := range shards {
		if d := s.Result.Measured.To.Sub(s.Result.Measured.From) - shortest; d > MaxSkew(shortest) {
			return errorf("%s measured %s longer than the shortest shard, more than the %s allowed: give every shard the same --time",
				s.Name, d.Round(time.Millisecond), MaxSkew(shortest))
		}
	}
	return nil
}

// fieldRules says, for every field of result.Result, what the merge does with it; the package's
// test fails on a field missing here, so a new field is never dropped unnoticed (ToolCommit and
// Meaningful once were). "first": every shard has the same (sameRun checks what could differ), so
// the first shard's is kept; "sum": added up by add; "merged": computed from all shards by its
// own function; "own": set by the merge itself; "per-shard": a shard's alone, kept in Shards or
// left out on purpose.
var fieldRules = map[string]string{
	"Schema": "own", "ToolVersion": "first", "ToolCommit": "first", "Complete": "merged", "Error": "merged",
	"StartedAt": "merged", "Engine": "first", "Workload": "first", "Label": "first", "Step": "first", "Round": "first",
	"Meaningful": "merged", "NotMeaningful": "merged",
	"Threads": "sum", "Rate": "sum", "WarmupS": "first", "DurationS": "merged",
	"Transactions": "sum", "TPS": "sum", "Queries": "sum", "QPS": "sum", "Errors": "sum", "Retries": "sum",
	"Rollbacks": "sum", "Metrics": "sum", "ByKind": "merged",
	"LatencyMS": "merged", "ScheduleLagMS": "merged", "ClientCPUS": "sum", "ClientScheduling": "first",
	"Intervals": "merged", "Histogram": "merged", "Server": "first",
	"Profile": "first", "Flipped": "first", "FlipExpect": "first", "Dataset": "first",
	// A ramp's steps are each shard's own client counts; merging them is not implemented.
	"Ramp":     "per-shard",
	"TPCH":     "per-shard", // sameRun refuses TPC-H shards
	"Capacity": "per-shard", // sameRun refuses a capacity search's results
	"Measured": "merged", "Shard": "per-shard", "Shards": "own", "Network": "first", "LagHistogram": "merged",
	"Wire": "sum", "Prepared": "first", "StartState": "first", "DataCheck": "merged", "Availability": "merged",
	"Routing": "first", "Machine": "merged", "Waits": "merged", "Statements": "merged", "ClientStatements": "merged",
}

// base starts the merged result as a copy of the first shard, so every field fieldRules calls
// "first" is carried whatever it is, and clears what add sums and what is a shard's own.
func base(r *result.Result) *result.Result {
	m := *r
	m.Schema, m.Complete, m.Error = result.SchemaVersion, true, ""
	m.Threads, m.Rate, m.Transactions, m.TPS, m.QPS = 0, 0, 0, 0, 0
	m.Errors, m.Retries, m.Rollbacks, m.ClientCPUS, m.DurationS = 0, 0, 0, 0, 0
	m.Queries, m.Metrics, m.ByKind, m.Wire = result.Queries{}, nil, nil, nil
	m.Ramp, m.TPCH, m.Shard, m.Shards, m.Capacity = nil, nil, nil, nil, nil
	// Built up from every shard by mergeAvailability (never into the first shard's own record).
	m.Availability = nil
	m.Measured = &result.Window{From: r.Measured.From, To: r.Measured.To}
	if r.Server != nil {
		// The engine's counters cover the whole server, so any one shard's are the load of all of
		// them; the per-transaction figures are taken again over the merged transactions below.
		s := *r.Server
		m.Server = &s
	}
	return &m
}

// add sums one shard into m and keeps its own figures.
func add(m, r *result.Result) {
	m.Complete = m.Complete && r.Complete
	addMeaning(m, r)
	if !r.Complete && m.Error == "" {
		m.Error = "a shard is incomplete: " + r.Error
	}
	if r.StartedAt.Before(m.StartedAt) {
		m.StartedAt = r.StartedAt
	}
	if r.Measured.From.Before(m.Measured.From) {
		m.Measured.From = r.Measured.From
	}
	if r.Measured.To.After(m.Measured.To) {
		m.Measured.To = r.Measured.To
	}
	m.Threads += r.Threads
	m.Rate += r.Rate
	m.Transactions += r.Transactions
	m.TPS += r.TPS
	m.Errors += r.Errors
	m.Retries += r.Retries
	m.Rollbacks += r.Rollbacks
	m.Queries.Read += r.Queries.Read
	m.Queries.Write += r.Queries.Write
	m.Queries.Other += r.Queries.Other
	m.Queries.Total += r.Queries.Total
	m.QPS += r.QPS
	m.ClientCPUS += r.ClientCPUS
	m.DurationS = max(m.DurationS, r.DurationS)
	for k, v := range r.Metrics {
		if m.Metrics == nil {
			m.Metrics = map[string]float64{}
		}
		m.Metrics[k] += v // the workloads' headline figures are rates (NOPM, tpmC): they add up
	}
	addKinds(m, r)
	addWire(m, r)
	m.Shards = append(m.Shards, summary(r))
}

// addMeaning keeps a merge of shards that each measured too little unrankable: they share one
// window, so their sum measured too little too.
func addMeaning(m, r *result.Result) {
	if r.IsMeaningful() {
		return
	}
	no := false
	m.Meaningful = &no
	if m.NotMeaningful == "" {
		m.NotMeaningful = r.NotMeaningful
	}
}

// addWire sums the shards' statements and round trips; finish takes them per transaction.
func addWire(m, r *result.Result) {
	if r.Wire == nil {
		return
	}
	if m.Wire == nil {
		m.Wire = &result.Wire{}
	}
	m.Wire.Statements += r.Wire.Statements
	m.Wire.RoundTrips += r.Wire.RoundTrips
}

func addKinds(m, r *result.Result) {
	for k, ks := range r.ByKind {
		if m.ByKind == nil {
			m.ByKind = map[string]*result.KindStats{}
		}
		mk := m.ByKind[k]
		if mk == nil {
			mk = &result.KindStats{}
			m.ByKind[k] = mk
		}
		mk.Transactions += ks.Transactions
		mk.TPS += ks.TPS
		mk.Errors += ks.Errors
		mk.Retries += ks.Retries
		mk.Rollbacks += ks.Rollbacks
		// Until mergeKindHistograms replaces it: the highest shard's, an upper bound, which
		// stays where a shard's file predates per-kind histograms.
		mk.LatencyMS = maxLatency(mk.LatencyMS, ks.LatencyMS)
	}
}

func maxLatency(a, b result.Latency) result.Latency {
	return result.Latency{Avg: max(a.Avg, b.Avg), P50: max(a.P50, b.P50), P90: max(a.P90, b.P90), P95: max(a.P95, b.P95),
		P99: max(a.P99, b.P99), P999: max(a.P999, b.P999), Max: max(a.Max, b.Max)}
}

func summary(r *result.Result) result.ShardSummary {
	s := result.ShardSummary{Window: *r.Measured, Threads: r.Threads, Rate: r.Rate, Transactions: r.Transactions,
		TPS: r.TPS, Errors: r.Errors, Retries: r.Retries, LatencyMS: r.LatencyMS, Complete: r.Complete}
	if r.Shard != nil {
		s.Shard = *r.Shard
	}
	return s
}

// mergeHistograms merges the latency (and schedule-lag) histograms exactly.
func mergeHistograms(m *result.Result, shards []Shard) error {
	lat, lag := histogram.New(), histogram.New()
	for _, s := range shards {
		h, err := histogram.Decode(s.Result.Histogram)
		if err != nil {
			return errorf("%s: %v", s.Name, err)
		}
		lat.Merge(h)
		if s.Result.LagHistogram != "" {
			h, err := histogram.Decode(s.Result.LagHistogram)
			if err != nil {
				return errorf("%s: %v", s.Name, err)
			}
			lag.Merge(h)
		}
	}
	m.LatencyMS = lat.Latency()
	enc, err := lat.Encode()
	if err != nil {
		return err
	}
	m.Histogram = enc
	if lag.Count() > 0 {
		l := lag.Latency()
		m.ScheduleLagMS = &l
		if m.LagHistogram, err = lag.Encode(); err != nil {
			return err
		}
	}
	return nil
}

// mergeKindHistograms takes each transaction type's percentiles from its histograms merged
// exactly, where every shard that ran the type stored one.
func mergeKindHistograms(m *result.Result, shards []Shard) error {
	for kind, mk := range m.ByKind {
		merged := histogram.New()
		exact := true
		for _, s := range shards {
			ks := s.Result.ByKind[kind]
			if ks == nil {
				continue
			}
			if ks.Histogram == "" {
				exact = false
				break
			}
			h, err := histogram.Decode(ks.Histogram)
			if err != nil {
				return errorf("%s: %s: %v", s.Name, kind, err)
			}
			merged.Merge(h)
		}
		if !exact {
			continue
		}
		enc, err := merged.Encode()
		if err != nil {
			return err
		}
		mk.LatencyMS, mk.Histogram = merged.Latency(), enc
	}
	return nil
}

// mergeDataCheck keeps what the shards' data checks (each shard checks after its own run) found:
// a failed shard's verdicts where one failed, else those of the shard that ended last, whose
// check ran when the others' load was over. nil where no shard checked.
func mergeDataCheck(shards []Shard) *result.DataCheck {
	var last *result.Result
	for _, s := range shards {
		r := s.Result
		if r.DataCheck == nil {
			continue
		}
		if !r.DataCheck.Passed {
			return r.DataCheck
		}
		if last == nil || r.Measured.To.After(last.Measured.To) {
			last = r
		}
	}
	if last == nil {
		return nil
	}
	return last.DataCheck
}

// mergeWaits pools the shards' wait samples: each shard sampled its own clients' sessions.
func mergeWaits(shards []Shard) *result.Waits {
	var w *result.Waits
	for _, s := range shards {
		if s.Result.Waits == nil {
			continue
		}
		if w == nil {
			w = &result.Waits{}
		}
		w.Add(s.Result.Waits)
	}
	return w
}

// mergeClientStatements adds the shards' per-statement figures by label: each shard timed its own
// clients, running the same workload.
func mergeClientStatements(shards []Shard) []result.ClientStatement {
	lists := make([][]result.ClientStatement, len(shards))
	for i, s := range shards {
		lists[i] = s.Result.ClientStatements
	}
	return result.PoolClientStatements(lists...)
}

// mergeStatements is the first shard's server account: each shard read the same server's
// counters over its own window, and those windows overlap, so adding them up would count the
// statements of every shard once per shard.
func mergeStatements(shards []Shard) *result.Statements {
	for _, s := range shards {
		if s.Result.Statements != nil {
			return s.Result.Statements
		}
	}
	return nil
}

// mergeMachine is the busiest shard's machine: each client host measured its own, and a merge is
// as weak as its weakest shard.
func mergeMachine(shards []Shard) *result.MachineLoad {
	var m *result.MachineLoad
	for _, s := range shards {
		ml := s.Result.Machine
		if ml == nil {
			continue
		}
		if m == nil {
			c := *ml
			m = &c
			continue
		}
		m.OthersCPUPctMean = max(m.OthersCPUPctMean, ml.OthersCPUPctMean)
		m.OthersCPUPctMax = max(m.OthersCPUPctMax, ml.OthersCPUPctMax)
		m.StealPctMean = max(m.StealPctMean, ml.StealPctMean)
		m.StealPctMax = max(m.StealPctMax, ml.StealPctMax)
		m.Busy = m.Busy || ml.Busy
		m.SetAside = append(m.SetAside, ml.SetAside...)
		m.StealLimitPct = max(m.StealLimitPct, ml.StealLimitPct)
		m.MemoryNSBefore = max(m.MemoryNSBefore, ml.MemoryNSBefore) // the slowest host's
		m.MemoryNSAfter = max(m.MemoryNSAfter, ml.MemoryNSAfter)
	}
	return m
}

// finish recomputes what depends on the merged totals.
func finish(m *result.Result) {
	if w := m.Wire; w != nil && m.Transactions > 0 {
		w.StatementsPerTxn = float64(w.Statements) / float64(m.Transactions)
		w.RoundTripsPerTxn = float64(w.RoundTrips) / float64(m.Transactions)
	}
	if m.Server != nil && m.Server.Counters != nil && m.Transactions > 0 {
		m.Server.PerTxn = map[string]float64{}
		for k, v := range m.Server.Counters {
			m.Server.PerTxn[k] = float64(v) / float64(m.Transactions)
		}
	}
}
