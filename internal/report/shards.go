package report

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/fairbench/fairbench/internal/document"
	"github.com/fairbench/fairbench/internal/merge"
	"github.com/fairbench/fairbench/internal/result"
)

// readResults reads a compare directory's results/, or a directory of shard results (run
// --shard I/N --out DIR/shard-I.json on each host, copied together): there a merged result written
// beside the shards (fairbench merge --out DIR/merged.json DIR) is left out, as merge leaves it
// out, or its transactions would count twice.
func readResults(dir string) ([]*result.Result, error) {
	sub := filepath.Join(dir, "results")
	if st, err := os.Stat(sub); err == nil && st.IsDir() {
		rs, err := result.ReadDir(sub)
		if err == nil && len(rs) == 0 {
			err = fmt.Errorf("no results files in %s", sub)
		}
		return rs, err
	}
	rs, err := result.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var shards []*result.Result
	for _, r := range rs {
		if r.Shard != nil {
			shards = append(shards, r)
		}
	}
	if len(shards) == 0 {
		return nil, fmt.Errorf("no results files in %s and no shard results in %s", sub, dir)
	}
	return shards, nil
}

// mergeShards replaces the shards of each multi-host run (results with a shard set) by their
// merge, so a report over a directory of shard results shows the load the server saw; the
// merged result keeps every shard's own figures. Results that are not shards pass through.
func mergeShards(rs []*result.Result) ([]*result.Result, error) {
	type runKey struct {
		engine, version, workload, label string
		count                            int
	}
	groups := map[runKey][]merge.Shard{}
	var order []runKey
	var out []*result.Result
	for i, r := range rs {
		if r.Shard == nil {
			out = append(out, r)
			continue
		}
		k := runKey{r.Engine.Kind, r.Engine.Version, r.WorkloadID(), r.Label, r.Shard.Count}
		if groups[k] == nil {
			order = append(order, k)
		}
		groups[k] = append(groups[k], merge.Shard{Name: fmt.Sprintf("result %d (shard %d of %d)", i+1, r.Shard.Index, r.Shard.Count), Result: r})
	}
	for _, k := range order {
		m, err := merge.Merge(groups[k])
		if err != nil {
			return nil, fmt.Errorf("shards of %s %s: %w", k.engine, k.workload, err)
		}
		out = append(out, m)
	}
	return out, nil
}

// shardsSection lists each multi-host run's shards with their own figures, so a slow client
// host or one that started late shows beside the merged figure.
func (m *model) shardsSection() *document.Section {
	t := &document.Table{
		Header:  []string{"engine", "workload", "shard", "host", "threads", "TPS", "p99 ms", "errors", "started after the first (ms)"},
		Numeric: []bool{false, false, false, false, true, true, true, true, true},
		Foot: []string{"The merged rows above sum the shards' transactions and merge their latency histograms exactly; " +
			"these are each shard's own figures over its own measured window."},
	}
	for _, r := range m.Results {
		for _, s := range r.Shards {
			skew := s.Window.From.Sub(r.Measured.From).Seconds() * 1000
			t.Rows = append(t.Rows, []document.Cell{{Text: r.Engine.Kind}, {Text: r.WorkloadID()},
				{Text: fmt.Sprintf("%d of %d", s.Shard.Index, s.Shard.Count)}, {Text: s.Shard.Host},
				{Text: fmt.Sprint(s.Threads)}, {Text: fmtRate(s.TPS), Incomplete: !s.Complete}, {Text: fmtMS(s.LatencyMS.P99)},
				{Text: fmtInt(s.Errors)}, {Text: document.Fixed(skew, 0)}})
		}
	}
	if len(t.Rows) == 0 {
		return nil
	}
	return &document.Section{ID: "shards", Heading: "Client shards", Tables: []*document.Table{t}}
}
