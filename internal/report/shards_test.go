package report

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/histogram"
	"github.com/fairbench/fairbench/internal/merge"
	"github.com/fairbench/fairbench/internal/result"
)

// A report over a directory of shard results shows one merged row and each shard's own figures,
// whether the shards lie in a compare directory's results/ or in the directory itself (copied
// there from the client hosts, with the merge's own output beside them, which is not counted twice).
func TestReportMergesShards(t *testing.T) {
	for _, layout := range []struct {
		name, sub    string
		mergedBeside bool
	}{
		{"compare directory", "results", false},
		{"directory of shard results", "", true},
	} {
		t.Run(layout.name, func(t *testing.T) {
			dir := t.TempDir()
			writeShards(t, filepath.Join(dir, layout.sub), layout.mergedBeside)
			in, err := Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(in.Results) != 1 || in.Results[0].Transactions != 2000 || in.Results[0].Threads != 8 {
				t.Fatalf("want one merged result of 2000 transactions on 8 threads, got %d results", len(in.Results))
			}
			md, err := Markdown(in)
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"## Client shards", "| postgres | oltp_point_select | 1 of 2 | client1 | 4 |", "| 2 of 2 | client2 |"} {
				if !strings.Contains(string(md), want) {
					t.Errorf("report lacks %q", want)
				}
			}
		})
	}
}

// writeShards writes two shards of one run into dir, and their merge beside them if asked.
func writeShards(t *testing.T, dir string, mergedBeside bool) {
	t.Helper()
	start := time.Date(2026, 11, 24, 2, 0, 0, 0, time.UTC)
	var shards []merge.Shard
	for i := 1; i <= 2; i++ {
		h := histogram.New()
		for v := range 1000 {
			h.Record(int64(100*i + v))
		}
		enc, _ := h.Encode()
		r := &result.Result{Complete: true, StartedAt: start, Engine: result.Engine{Kind: "postgres", Version: "PostgreSQL 15.18"},
			Workload: result.Workload{Name: "oltp_point_select"}, Threads: 4, DurationS: 10, Transactions: 1000, TPS: 100,
			LatencyMS: h.Latency(), Histogram: enc, Intervals: []result.Interval{{T: 10, Threads: 4, TPS: 100}},
			Shard:    &result.Shard{Index: i, Count: 2, Host: "client" + string(rune('0'+i))},
			Measured: &result.Window{From: start.Add(time.Duration(i) * 20 * time.Millisecond), To: start.Add(10 * time.Second)}}
		if err := result.Write(filepath.Join(dir, r.Shard.Host+".json"), r); err != nil {
			t.Fatal(err)
		}
		shards = append(shards, merge.Shard{Name: r.Shard.Host, Result: r})
	}
	if !mergedBeside {
		return
	}
	m, err := merge.Merge(shards)
	if err != nil {
		t.Fatal(err)
	}
	if err := result.Write(filepath.Join(dir, "merged.json"), m); err != nil {
		t.Fatal(err)
	}
}
