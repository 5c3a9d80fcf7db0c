// Package history lines up the same workload on the same engine across many runs (compare
// directories, results directories or single results files), oldest first, so a reader sees how
// a figure moved from build to build, version to version or setting to setting.
//
// The store is the results files themselves: every compare directory already holds them in the
// versioned schema, so a history is just the directories given, in any order (runs are sorted by
// their own start time). No database to keep in step, nothing to import.
package history

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sort"
	"strings"

	"github.com/fairbench/fairbench/internal/result"
)

// Key is one line of history: an engine kind, a workload and the step's label.
type Key struct {
	Engine, Workload, Label string
}

func (k Key) String() string {
	s := k.Engine + " " + k.Workload
	if k.Label != "" {
		s += " " + k.Label
	}
	return s
}

// Point is one run on that line.
type Point struct {
	Source      string // the directory or file it came from
	StartedAt   string // RFC 3339, UTC
	Version     string // the server's own version string
	ToolVersion string
	ToolCommit  string // the fairbench build's git commit, when recorded
	// Fingerprint is a short hash of what decides the figure besides the engine's code: the
	// server's settings as it reported them, the workload's options, threads and rate. Two runs
	// with the same fingerprint ran the same test; a change of fingerprint is a change of test.
	Fingerprint string
	// TPS is the run's throughput, or for a capacity search (compare --slo) the capacity it found;
	// Capacity then says how the search ended where it found no knee ("no rate", "at least").
	TPS      float64
	P99MS    float64
	Capacity string
	Complete bool
	// PlansChanged names the read statements whose plan differs from the line's previous run
	// that recorded plans (workload files record them): beside a moved figure, where to look.
	PlansChanged []string
}

// Line is the history of one key.
type Line struct {
	Key    Key
	Points []Point
}

// Load reads every path (a compare directory, a directory of results files, or one results file)
// and returns one line per engine, workload and label, each sorted by start time. TPC-H runs
// have no TPS and are left out.
func Load(paths []string) ([]Line, error) {
	type sourced struct {
		src string
		r   *result.Result
	}
	byKey := map[Key][]sourced{}
	for _, p := range paths {
		rs, err := result.ReadPath(p)
		if err != nil {
			return nil, err
		}
		for _, r := range rs {
			if r.TPCH != nil {
				continue
			}
			k := Key{Engine: r.Engine.Kind, Workload: r.WorkloadID(), Label: r.Label}
			if c := r.Capacity; c != nil {
				// A capacity search is its own line: its figure is the capacity, not a throughput.
				k.Label = strings.TrimSpace(k.Label + " capacity at " + strings.Replace(c.SLO, "<=", " ≤ ", 1))
			}
			byKey[k] = append(byKey[k], sourced{p, r})
		}
	}
	lines := make([]Line, 0, len(byKey))
	for k, rs := range byKey {
		sort.SliceStable(rs, func(i, j int) bool { return rs[i].r.StartedAt.Before(rs[j].r.StartedAt) })
		l := Line{Key: k}
		var withPlans *result.Result // the line's last run so far that recorded plans
		for _, s := range rs {
			p := pointOf(s.src, s.r)
			if names, _ := s.r.Plans(); len(names) > 0 {
				if withPlans != nil {
					p.PlansChanged = result.PlansChanged(withPlans, s.r)
				}
				withPlans = s.r
			}
			l.Points = append(l.Points, p)
		}
		lines = append(lines, l)
	}
	sort.Slice(lines, func(i, j int) bool { return lines[i].Key.String() < lines[j].Key.String() })
	return lines, nil
}

func pointOf(src string, r *result.Result) Point {
	p := Point{
		Source:      src,
		StartedAt:   r.StartedAt.UTC().Format("2006-01-02T15:04:05Z"),
		Version:     r.Engine.Version,
		ToolVersion: r.ToolVersion,
		ToolCommit:  r.ToolCommit,
		Fingerprint: Fingerprint(r),
		TPS:         r.TPS,
		P99MS:       r.LatencyMS.P99,
		Complete:    r.Complete,
	}
	if c := r.Capacity; c != nil {
		p.TPS = c.PerS
		switch {
		case c.Reached == "no rate":
			p.TPS, p.Capacity = 0, "no rate met the objective"
		case c.AtLeast:
			p.Capacity = "a lower bound"
		}
	}
	return p
}

// Fingerprint hashes the test's definition: workload options, threads, rate and the server's own
// view of its settings (encoding/json writes map keys sorted, so the hash is stable).
func Fingerprint(r *result.Result) string {
	def := struct {
		Options  map[string]string
		Threads  int
		Rate     float64
		SLO      string `json:",omitempty"`
		Settings map[string]string
	}{Options: r.Workload.Options, Threads: r.Threads, Rate: r.Rate}
	if c := r.Capacity; c != nil {
		// A search's rate is its last probe's, different every time: its objective defines it.
		def.Rate, def.SLO = 0, c.SLO
	}
	if r.Server != nil {
		def.Settings = r.Server.Settings
	}
	data, _ := json.Marshal(def) // maps of strings and numbers always marshal
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:4])
}
