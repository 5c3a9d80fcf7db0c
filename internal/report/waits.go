package report

import (
	"fmt"
	"strings"

	"github.com/fairbench/fairbench/internal/dialect"
	"github.com/fairbench/fairbench/internal/document"
	"github.com/fairbench/fairbench/internal/result"
)

// pooledWaits adds up the wait samples of a group's runs (every round of the headline step), so
// the shares are of all the sessions sampled; nil where no run was sampled.
func pooledWaits(g *group) *result.Waits {
	if g == nil {
		return nil
	}
	var out *result.Waits
	for _, r := range g.Used {
		if r.Waits == nil || r.Waits.Sessions == 0 {
			continue
		}
		if out == nil {
			out = &result.Waits{}
		}
		out.Add(r.Waits)
	}
	return out
}

// waitsSection is "Where the time went": per workload and engine, the share of the sampled
// client sessions in each category, the engine's own biggest event beside it, and a line naming
// each engine's dominant category.
func (m *model) waitsSection() *document.Section {
	used := m.usedCategories()
	if len(used) == 0 {
		return nil
	}
	h := append([]string{"Workload", "Engine"}, used...)
	h = append(h, "sessions sampled", "biggest event (engine's name)")
	t := &document.Table{Header: h, Numeric: document.NumericAfter(2, len(h)-1)}
	var lines []string
	for _, w := range m.Workloads {
		var dominant []string
		for i, g := range m.headlineGroups(w) {
			pw := pooledWaits(g)
			if pw == nil {
				continue
			}
			row := []string{w, m.Variants[i].Name}
			for _, c := range used {
				row = append(row, document.Fixed(100*pw.Share(c), 0)+"%")
			}
			row = append(row, fmt.Sprint(pw.Sessions), biggestEvent(pw))
			t.Rows = append(t.Rows, document.Row(row...))
			c, share := dominantCategory(pw)
			dominant = append(dominant, fmt.Sprintf("%s %.0f%% %s", m.Variants[i].Name, 100*share, categoryName(c)))
		}
		if len(dominant) > 0 {
			lines = append(lines, w+": "+strings.Join(dominant, "; "))
		}
	}
	return &document.Section{ID: "waits", Heading: "Where the time went",
		Paras: []string{"Every " + m.waitPeriod() + " of the measured window, each client session's state on the server " +
			"(pg_stat_activity; the performance schema's threads and waits in progress, or the process list, and InnoDB's " +
			"lock waits), folded into categories that mean the same on every engine: the share of all session samples in each. " +
			"client is a session idle between statements, waiting for the client and the network round trip; cpu is a statement " +
			"running with no wait the engine names; log_flush is a commit writing or syncing the WAL/redo, or waiting for whoever does. " +
			"The headline step's rounds are pooled."},
		Tables:  []*document.Table{t},
		Bullets: lines}
}

// usedCategories are the categories some headline step sampled, in dialect.Categories' order.
func (m *model) usedCategories() []string {
	seen := map[string]bool{}
	for _, w := range m.Workloads {
		for _, g := range m.headlineGroups(w) {
			if pw := pooledWaits(g); pw != nil {
				for _, c := range pw.Categories {
					seen[c.Category] = true
				}
			}
		}
	}
	var out []string
	for _, c := range dialect.Categories {
		if seen[c] {
			out = append(out, c)
		}
	}
	return out
}

// waitPeriod is the sampling period the results used ("100 ms"; "few milliseconds" if they differ).
func (m *model) waitPeriod() string {
	period := 0.0
	for _, r := range m.Results {
		if r.Waits == nil {
			continue
		}
		if period != 0 && r.Waits.EveryMS != period {
			return "few milliseconds"
		}
		period = r.Waits.EveryMS
	}
	return document.Fixed(period, 0) + " ms"
}

func dominantCategory(w *result.Waits) (string, float64) {
	best, n := "", 0
	for _, c := range w.Categories {
		if c.Count > n {
			best, n = c.Category, c.Count
		}
	}
	return best, float64(n) / float64(w.Sessions)
}

func biggestEvent(w *result.Waits) string {
	if len(w.Events) == 0 {
		return ""
	}
	e := w.Events[0]
	return fmt.Sprintf("%s (%s, %.0f%%)", e.Event, e.Category, 100*float64(e.Count)/float64(w.Sessions))
}

// categoryName is how a line of prose names a category.
func categoryName(c string) string {
	return map[string]string{dialect.OnCPU: "on CPU", dialect.LogFlush: "log flush", dialect.DataRead: "data read",
		dialect.DataWrite: "data write", dialect.RowLock: "row lock", dialect.Latch: "latch", dialect.Client: "client",
		dialect.Network: "network", dialect.Other: "other"}[c]
}
