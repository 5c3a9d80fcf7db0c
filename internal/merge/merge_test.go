package merge

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/histogram"
	"github.com/fairbench/fairbench/internal/result"
)

var t0 = time.Date(2026, 11, 24, 2, 0, 0, 0, time.UTC)

// shard makes shard i of n with 10 one-second intervals and latencies drawn around meanMicros;
// it also records the same latencies into pooled.
func shard(i, n int, start time.Time, meanMicros float64, pooled *histogram.Histogram) Shard {
	rng := rand.New(rand.NewPCG(uint64(i), 3))
	h := histogram.New()
	r := &result.Result{Complete: true, StartedAt: start.Add(-2 * time.Second), Engine: result.Engine{Kind: "postgres", Version: "15.18"},
		Workload: result.Workload{Name: "oltp_point_select", Options: map[string]string{"tables": "4"}}, Threads: 2, DurationS: 10,
		Shard: &result.Shard{Index: i, Count: n, Host: "host" + string(rune('0'+i))}, Measured: &result.Window{From: start, To: start.Add(10 * time.Second)}}
	for s := 1; s <= 10; s++ {
		txns := int64(100 + 10*i)
		for range txns {
			v := int64(rng.ExpFloat64() * meanMicros)
			h.Record(v)
			pooled.Record(v)
		}
		r.Transactions += txns
		r.Intervals = append(r.Intervals, result.Interval{T: float64(s), Threads: 2, TPS: float64(txns), P99MS: float64(i)})
	}
	r.TPS = float64(r.Transactions) / 10
	r.LatencyMS = h.Latency()
	r.Histogram, _ = h.Encode()
	// One transaction type, all of the shard's transactions, with its own histogram.
	r.ByKind = map[string]*result.KindStats{"select": {Transactions: r.Transactions, LatencyMS: r.LatencyMS, Histogram: r.Histogram}}
	return Shard{Name: r.Shard.Host + ".json", Result: r}
}

func TestMergeIsExact(t *testing.T) {
	pooled := histogram.New()
	var shards []Shard
	var sum int64
	for i := 1; i <= 3; i++ {
		s := shard(i, 3, t0.Add(time.Duration(i*30)*time.Millisecond), float64(200*i), pooled)
		sum += s.Result.Transactions
		shards = append(shards, s)
	}
	m, err := Merge(shards)
	if err != nil {
		t.Fatal(err)
	}
	if m.Transactions != sum || m.Threads != 6 || len(m.Shards) != 3 {
		t.Errorf("transactions %d (want %d), threads %d, shards %d", m.Transactions, sum, m.Threads, len(m.Shards))
	}
	if want := pooled.Latency(); m.LatencyMS != want || m.ByKind["select"].LatencyMS != want {
		t.Errorf("merged latency %+v, per kind %+v, want the pooled %+v", m.LatencyMS, m.ByKind["select"].LatencyMS, want)
	}
	if len(m.Intervals) != 10 {
		t.Fatalf("%d intervals, want 10 aligned on the wall clock", len(m.Intervals))
	}
	var ivSum float64
	for _, iv := range m.Intervals {
		ivSum += iv.TPS
	}
	if int64(ivSum) != sum || m.Intervals[0].Threads != 6 || m.Intervals[0].P99MS != 3 {
		t.Errorf("intervals: TPS sum %v (want %d), threads %d, p99 %v", ivSum, sum, m.Intervals[0].Threads, m.Intervals[0].P99MS)
	}
}

func TestMergeRefuses(t *testing.T) {
	p := histogram.New()
	mk := func(i int, start time.Time) Shard { return shard(i, 2, start, 100, p) }
	other := mk(2, t0)
	other.Result.Workload.Name = "oltp_read_only"
	opts := mk(2, t0)
	opts.Result.Workload.Options = map[string]string{"tables": "8"}
	noWindow := mk(2, t0)
	noWindow.Result.Measured = nil
	data := func(i int, tableSize, at string) Shard {
		s := mk(i, t0)
		s.Result.Prepared = &result.Prepared{Name: "sbtest", Params: map[string]string{"table-size": tableSize}, StartedAt: at}
		return s
	}
	longer := mk(2, t0)
	longer.Result.Measured.To = t0.Add(15 * time.Second)
	tests := []struct {
		name   string
		shards []Shard
		want   string
	}{
		{"one shard", []Shard{mk(1, t0)}, "two or more"},
		{"another workload", []Shard{mk(1, t0), other}, "ran oltp_read_only but"},
		{"other options", []Shard{mk(1, t0), opts}, `--tables "4" vs "8"`},
		{"other data set", []Shard{data(1, "1000", "02:00"), data(2, "9000", "02:00")}, `another data set than host1.json (--table-size "1000" vs "9000")`},
		{"data prepared again", []Shard{data(1, "1000", "02:00"), data(2, "1000", "03:00")}, "prepared at 02:00 vs 03:00"},
		{"not a shard", []Shard{mk(1, t0), noWindow}, "no measured window"},
		{"another shard count", []Shard{mk(1, t0), shard(2, 3, t0, 100, p)}, "shard 2 of 3 but host1.json is shard 1 of 2"},
		{"same shard twice", []Shard{mk(1, t0), mk(1, t0)}, "both shard 1"},
		{"windows apart", []Shard{mk(1, t0), mk(2, t0.Add(5*time.Second))}, "began measuring 5s after"},
		{"different lengths", []Shard{mk(1, t0), longer}, "5s longer"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Merge(tc.shards)
			var me *Error
			if !errors.As(err, &me) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Merge: %v, want a merge.Error containing %q", err, tc.want)
			}
		})
	}
}

// A merge of two of three shards is made, but marked incomplete, naming the shard it lacks.
func TestMergeMissingShard(t *testing.T) {
	p := histogram.New()
	m, err := Merge([]Shard{shard(1, 3, t0, 100, p), shard(3, 3, t0, 100, p)})
	if err != nil {
		t.Fatal(err)
	}
	if m.Complete || !strings.Contains(m.Error, "shard 2 of 3 missing") {
		t.Errorf("complete %v, error %q: want incomplete, naming shard 2", m.Complete, m.Error)
	}
}

// Shards written before per-kind histograms: each type's latency is the highest shard's, an
// upper bound, not a made-up merge.
func TestMergeKindsWithoutHistograms(t *testing.T) {
	p := histogram.New()
	a, b := shard(1, 2, t0, 100, p), shard(2, 2, t0, 400, p)
	for _, s := range []Shard{a, b} {
		s.Result.ByKind["select"].Histogram = ""
	}
	m, err := Merge([]Shard{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := m.ByKind["select"].LatencyMS.P99, max(a.Result.LatencyMS.P99, b.Result.LatencyMS.P99); got != want || m.ByKind["select"].Histogram != "" {
		t.Errorf("per-kind p99 %v, want the higher shard's %v and no histogram", got, want)
	}
}

// The shards' data checks survive the merge: a failed one wins, else the last shard's.
func TestMergeDataCheck(t *testing.T) {
	p := histogram.New()
	checked := func(i int, end time.Duration, passed bool) Shard {
		s := shard(i, 3, t0, 100, p)
		s.Result.Measured.To = s.Result.Measured.From.Add(end)
		s.Result.DataCheck = &result.DataCheck{Passed: passed, Verdicts: []result.Verdict{{Name: fmt.Sprintf("shard %d", i), OK: passed}}}
		return s
	}
	tests := []struct {
		name   string
		shards []Shard
		want   string
		passed bool
	}{
		{"all passed", []Shard{checked(1, 10*time.Second, true), checked(2, 10*time.Second+5*time.Millisecond, true), checked(3, 10*time.Second, true)}, "shard 2", true},
		{"one failed", []Shard{checked(1, 10*time.Second, true), checked(2, 10*time.Second+5*time.Millisecond, true), checked(3, 10*time.Second, false)}, "shard 3", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Merge(tc.shards)
			if err != nil {
				t.Fatal(err)
			}
			if dc := m.DataCheck; dc == nil || dc.Passed != tc.passed || dc.Verdicts[0].Name != tc.want {
				t.Errorf("data check %+v, want %q's, passed %v", dc, tc.want, tc.passed)
			}
		})
	}
}

// Every field of a result has a rule in fieldRules: a new field fails here until the merge says
// what it does with it, so that none is dropped unnoticed.
func TestEveryResultFieldHasAMergeRule(t *testing.T) {
	rt := reflect.TypeOf(result.Result{})
	for i := range rt.NumField() {
		name := rt.Field(i).Name
		if _, ok := fieldRules[name]; !ok {
			t.Errorf("result.Result.%s has no rule in merge's fieldRules: say whether it is the first shard's, summed, merged or per-shard", name)
		}
	}
	for name := range fieldRules {
		if _, ok := rt.FieldByName(name); !ok {
			t.Errorf("fieldRules names %s, which result.Result no longer has", name)
		}
	}
}

// The fields once dropped are kept: the build's commit, and that shards too short to rank make a
// merge too short to rank.
func TestMergeKeepsCommitAndMeaning(t *testing.T) {
	pooled := histogram.New()
	a, b := shard(1, 2, t0, 100, pooled), shard(2, 2, t0, 100, pooled)
	no := false
	for _, s := range []Shard{a, b} {
		s.Result.ToolCommit = "abc123def456"
		s.Result.Meaningful, s.Result.NotMeaningful = &no, "fewer than 100 transactions"
		s.Result.Step = "transfer=routine"
	}
	m, err := Merge([]Shard{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if m.ToolCommit != "abc123def456" || m.IsMeaningful() || m.NotMeaningful == "" || m.Step != "transfer=routine" {
		t.Errorf("merged: tool_commit %q, meaningful %v (%q), step %q; want the shards' commit, not meaningful, their step",
			m.ToolCommit, m.IsMeaningful(), m.NotMeaningful, m.Step)
	}
}
