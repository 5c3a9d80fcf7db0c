package report

import (
	"fmt"
	"strings"

	"github.com/fairbench/fairbench/internal/document"
	"github.com/fairbench/fairbench/internal/result"
)

// instrumentBlock is one block of rows in the instruments' sections ("Where the time went",
// "Statements on the server"): a workload's headline step or a TPC-H comparison, with the runs
// of each engine that has some.
type instrumentBlock struct {
	label string
	names []string           // the engines' names as the report shows them
	runs  [][]*result.Result // each engine's runs: every round
}

// instrumentBlocks lists the workloads' headline steps, then the TPC-H comparisons.
func (m *model) instrumentBlocks() []instrumentBlock {
	var out []instrumentBlock
	for _, w := range m.Workloads {
		b := instrumentBlock{label: w}
		for i, g := range m.headlineGroups(w) {
			if g != nil {
				b.names = append(b.names, m.Variants[i].Name)
				b.runs = append(b.runs, g.Used)
			}
		}
		out = append(out, b)
	}
	for _, s := range m.TPCHSets {
		b := instrumentBlock{label: s.name()}
		for _, g := range s.Groups {
			b.names = append(b.names, g.V.Name)
			b.runs = append(b.runs, g.Used)
		}
		out = append(out, b)
	}
	return out
}

// waitsSection is "Where the time went": per workload (and TPC-H comparison) and engine, the
// share of the sampled client sessions in each category, the engine's own biggest event beside
// it, and a line naming each engine's dominant category.
func (m *model) waitsSection() *document.Section {
	blocks := m.instrumentBlocks()
	used := usedCategories(blocks)
	if len(used) == 0 {
		return nil
	}
	h := append([]string{"Workload", "Engine"}, used...)
	h = append(h, "sessions sampled", "biggest event (engine's name)")
	t := &document.Table{Header: h, Numeric: document.NumericAfter(2, len(h)-1)}
	var lines, unnamed []string
	for _, b := range blocks {
		var dominant []string
		for i, runs := range b.runs {
			pw := result.PoolWaits(runs)
			if pw == nil {
				continue
			}
			row := []string{b.label, b.names[i]}
			for _, c := range used {
				row = append(row, document.Fixed(100*pw.Share(c), 0)+"%")
			}
			row = append(row, fmt.Sprint(pw.Sessions), biggestEvent(pw))
			t.Rows = append(t.Rows, document.Row(row...))
			c, share := dominantCategory(pw)
			dominant = append(dominant, fmt.Sprintf("%s %.0f%% %s", b.names[i], 100*share, categoryName(c)))
			if most, over := cpuBound(runs, pw); over {
				unnamed = append(unnamed, fmt.Sprintf("%s, %s: %.0f%% of the sessions were sampled cpu, but the server's processes used "+
					"CPU for at most %.0f%% of the sessions' time: the rest waited on something the engine does not name in its views",
					b.label, b.names[i], 100*pw.Share(result.WaitOnCPU), 100*most))
			}
		}
		if len(dominant) > 0 {
			lines = append(lines, b.label+": "+strings.Join(dominant, "; "))
		}
	}
	lines = append(lines, unnamed...)
	return &document.Section{ID: "waits", Heading: "Where the time went",
		Paras: []string{"Every " + m.waitPeriod() + " of the measured window, each client session's state on the server " +
			"(pg_stat_activity; the performance schema's threads and waits in progress, or the process list, and InnoDB's " +
			"lock waits), folded into categories that mean the same on every engine: the share of all session samples in each. " +
			"client is a session idle between statements, waiting for the client and the network round trip; cpu is a statement " +
			"running with no wait the engine names; log_flush is a commit writing or syncing the WAL/redo, or waiting for whoever does. " +
			"The headline step's rounds are pooled; a TPC-H comparison's window is its timed test (its query sessions only)."},
		Tables:  []*document.Table{t},
		Bullets: lines}
}

// cpuBound sets the share of samples in cpu beside the server's own CPU time over the same
// runs. cpu is a session running a statement with no wait the engine names, which is on a CPU only
// where the engine instruments every wait: the server's processes (background work included)
// used CPU for at most most of the sessions' time (threads × seconds), so a sampled share clearly
// above that (by half and 5 points) was waiting unnamed. MariaDB's commits waiting for another's
// redo flush and its reads of a page another thread is reading show so. Unknown (false) where a
// run has no server CPU figure.
func cpuBound(runs []*result.Result, pw *result.Waits) (most float64, over bool) {
	var sessionS, cpuS float64
	for _, r := range runs {
		if r.Waits == nil || r.Waits.Sessions == 0 {
			continue
		}
		if r.Server == nil || r.Server.CPUUserS+r.Server.CPUSystemS <= 0 || r.DurationS <= 0 {
			return 0, false
		}
		sessionS += float64(r.Threads) * r.DurationS
		cpuS += r.Server.CPUUserS + r.Server.CPUSystemS
	}
	if sessionS <= 0 {
		return 0, false
	}
	most = min(1, cpuS/sessionS)
	return most, pw.Share(result.WaitOnCPU) > 1.5*most+0.05
}

// usedCategories are the categories some block sampled, in result.WaitCategories' order.
func usedCategories(blocks []instrumentBlock) []string {
	seen := map[string]bool{}
	for _, b := range blocks {
		for _, runs := range b.runs {
			if pw := result.PoolWaits(runs); pw != nil {
				for _, c := range pw.Categories {
					seen[c.Category] = true
				}
			}
		}
	}
	var out []string
	for _, c := range result.WaitCategories {
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
	ranked := w.Ranked()
	if len(ranked) == 0 {
		return "", 0
	}
	return ranked[0].Category, float64(ranked[0].Count) / float64(w.Sessions)
}

// TopWaits is where a run's time went in a line: the n categories most sampled on the server's
// side, then the share idle waiting for the client, "on CPU 17%, log flush 9%; client 70%" (on
// a machine the clients share, client time can hide what the server does); "not sampled"
// without samples.
func TopWaits(w *result.Waits, n int) string {
	ranked := w.Ranked()
	if len(ranked) == 0 || w.Sessions == 0 {
		return "not sampled"
	}
	share := func(c result.WaitCount) string {
		return fmt.Sprintf("%s %.0f%%", categoryName(c.Category), 100*float64(c.Count)/float64(w.Sessions))
	}
	var parts []string
	client := ""
	for _, c := range ranked {
		switch {
		case c.Category == result.WaitClient:
			client = "; " + share(c)
		case len(parts) < n:
			parts = append(parts, share(c))
		}
	}
	return strings.TrimPrefix(strings.Join(parts, ", ")+client, "; ")
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
	return map[string]string{result.WaitOnCPU: "on CPU", result.WaitLogFlush: "log flush", result.WaitDataRead: "data read",
		result.WaitDataWrite: "data write", result.WaitRowLock: "row lock", result.WaitLatch: "latch", result.WaitClient: "client",
		result.WaitNetwork: "network", result.WaitOther: "other"}[c]
}
