package study

import (
	"fmt"
	"math"

	"github.com/fairbench/fairbench/internal/dialect"
	"github.com/fairbench/fairbench/internal/sqldb"
)

// Design choices the mvcc study's effects are about.
const (
	DesignPGNewVersion = "PostgreSQL: an UPDATE writes a whole new row version into the heap"
	DesignPGVacuum     = "PostgreSQL: dead versions stay until VACUUM removes them"
	DesignPGHOT        = "PostgreSQL: HOT keeps a new version on its old page, with no new index entries"
	DesignPGGrowth     = "PostgreSQL: new versions take new space until vacuumed"
	DesignPGWrites     = "PostgreSQL: WAL (with full-page images) plus heap and index pages"
	DesignPGAutovacuum = "PostgreSQL: autovacuum vacuums in the background"
	DesignInnoDBUpdate = "InnoDB: an UPDATE changes the row in place and keeps the old value in undo"
	DesignInnoDBPurge  = "InnoDB: the purge thread discards undo no reader needs any more"
	DesignInnoDBWrites = "InnoDB: redo log plus in-place page writes"
	DesignCompare      = "Both: pages a point SELECT needs after the same updates"
)

// change is how much a figure must move to be called a change rather than noise.
const change = 0.05

// MVCCEffects states what each design choice measurably did, from the document's numbers.
// Figures are in 4 KB pages so that the engines' different page sizes compare.
func MVCCEffects(doc *MVCC) []Effect {
	var out []Effect
	var pgOff *Scenario
	var innodb *MVCCEngine
	var pgName string
	for i := range doc.Engines {
		e := &doc.Engines[i]
		name := engineName(e.Kind)
		if keepsOldVersionsInTable(e.Kind) {
			pgName = name
			for j := range e.Scenarios {
				sc := &e.Scenarios[j]
				out = append(out, pgScenarioEffects(name, sc)...)
			}
			pgOff = e.Scenario(ScenarioAutovacuumOff)
			if on := e.Scenario(ScenarioAutovacuumOn); pgOff != nil && on != nil {
				if eff, ok := autovacuumEffect(name, pgOff, on); ok {
					out = append(out, eff)
				}
			}
			continue
		}
		if innodb == nil {
			innodb = e
		}
		out = append(out, innodbEffects(name, e.Scenario(ScenarioPurge))...)
	}
	if pgOff != nil && innodb != nil {
		pu, iu := pgOff.Phase(PhaseSelectAfterUpdate), innodb.Scenario(ScenarioPurge).Phase(PhaseSelectAfterUpdate)
		if measuredQ(pu) && measuredQ(iu) {
			a, b := pu.PagesRequestedPerQuery4K, iu.PagesRequestedPerQuery4K
			s := fmt.Sprintf("After the same updates, %s (autovacuum off) requested %s 4 KB pages per SELECT and %s %s",
				pgName, num(a), engineName(innodb.Kind), num(b))
			if b > 0 {
				s += fmt.Sprintf(" (%s×)", num(a/b))
			}
			out = append(out, Effect{Engine: "both", Design: DesignCompare, Statement: s, Before: ptr(a), After: ptr(b), Unit: "4 KB pages per SELECT"})
		}
	}
	return out
}

// engineName is the engine as a reader knows it; a kind this fairbench has no dialect for (a
// results file of another build) is named as it is written.
func engineName(kind string) string {
	if d, err := dialect.Lookup(sqldb.Kind(kind)); err == nil {
		return d.ProductName()
	}
	return kind
}

// keepsOldVersionsInTable is PostgreSQL's design, the one the study sets against InnoDB's undo
// logs; false for a kind this fairbench has no dialect for.
func keepsOldVersionsInTable(kind string) bool {
	d, err := dialect.Lookup(sqldb.Kind(kind))
	return err == nil && d.Caps().OldVersionsInTable
}

func measuredQ(p *Phase) bool { return p != nil && p.Queries > 0 && p.Error == "" }

// movement words a change from a to b.
func movement(a, b float64) string {
	switch {
	case b > a*(1+change):
		return "raised"
	case b < a*(1-change):
		return "cut"
	}
	return "left"
}

func pgScenarioEffects(name string, sc *Scenario) []Effect {
	var out []Effect
	f, u, up := sc.Phase(PhaseFresh), sc.Phase(PhaseSelectAfterUpdate), sc.Phase(PhaseUpdate)
	vac, v := sc.Phase(PhaseVacuum), sc.Phase(PhaseSelectAfterVacuum)
	unit := "4 KB pages per SELECT"
	if measuredQ(f) && measuredQ(u) {
		a, b := f.PagesRequestedPerQuery4K, u.PagesRequestedPerQuery4K
		s := fmt.Sprintf("UPDATEs %s %s's pages per SELECT from %s to %s (%s)", movement(a, b), name, num(a), num(b), sc.Name)
		if movement(a, b) == "left" {
			s = fmt.Sprintf("UPDATEs left %s's pages per SELECT about where they were: %s fresh, %s after (%s)", name, num(a), num(b), sc.Name)
		}
		out = append(out, Effect{Engine: name, Scenario: sc.Name, Design: DesignPGNewVersion, Statement: s, Before: ptr(a), After: ptr(b), Unit: unit})
	}
	if measuredQ(u) && measuredQ(v) {
		a, b := u.PagesRequestedPerQuery4K, v.PagesRequestedPerQuery4K
		var s string
		switch {
		case b < a*(1-change):
			s = fmt.Sprintf("VACUUM cut %s's pages per SELECT from %s to %s (%s, %s)", name, num(a), num(b), relChange(a, b), sc.Name)
		case b < a:
			s = fmt.Sprintf("VACUUM lowered %s's pages per SELECT only slightly, from %s to %s (%s, %s)", name, num(a), num(b), relChange(a, b), sc.Name)
		default:
			s = fmt.Sprintf("VACUUM did not lower %s's pages per SELECT: %s before, %s after (%s)", name, num(a), num(b), sc.Name)
		}
		if vac != nil && vac.DeadTuplesBefore != nil && vac.DeadTuplesAfter != nil {
			s += fmt.Sprintf("; it removed %d of %d dead row versions in %s s", *vac.DeadTuplesBefore-*vac.DeadTuplesAfter, *vac.DeadTuplesBefore, num(vac.Seconds))
		}
		out = append(out, Effect{Engine: name, Scenario: sc.Name, Design: DesignPGVacuum, Statement: s, Before: ptr(a), After: ptr(b), Unit: unit})
	}
	if up != nil && up.Updates != nil && *up.Updates > 0 && up.HOTRatio != nil {
		s := fmt.Sprintf("%s of %s's UPDATEs were HOT (%d of %d)", pct(*up.HOTRatio), name, *up.HOTUpdates, *up.Updates)
		if up.DeadTuplesAfter != nil {
			s += fmt.Sprintf("; %d dead row versions were waiting for vacuum after the update phase", *up.DeadTuplesAfter)
		}
		out = append(out, Effect{Engine: name, Scenario: sc.Name, Design: DesignPGHOT, Statement: s + " (" + sc.Name + ")", After: ptr(*up.HOTRatio), Unit: "HOT share of UPDATEs"})
	}
	if up != nil && up.Error == "" {
		a, b := up.TableBytesBefore+up.IndexBytesBefore, up.TableBytesAfter+up.IndexBytesAfter
		s := fmt.Sprintf("%s's tables and indexes grew from %s to %s MiB (%s) during the update phase", name, mib(a), mib(b), growth(a, b))
		if vac != nil && vac.Error == "" {
			s += fmt.Sprintf("; VACUUM left them at %s MiB (it frees space for reuse rather than shrinking the files)", mib(vac.TableBytesAfter+vac.IndexBytesAfter))
		}
		out = append(out, Effect{Engine: name, Scenario: sc.Name, Design: DesignPGGrowth, Statement: s + " (" + sc.Name + ")",
			Before: ptr(float64(a)), After: ptr(float64(b)), Unit: "bytes"})
	}
	if measuredQ(up) {
		out = append(out, Effect{Engine: name, Scenario: sc.Name, Design: DesignPGWrites, Statement: updateCost(name, "WAL", up) + " (" + sc.Name + ")",
			After: ptr(up.BytesWrittenPerQuery), Unit: "bytes written per UPDATE"})
	}
	return out
}

func updateCost(name, log string, up *Phase) string {
	return fmt.Sprintf("Each %s UPDATE requested %s 4 KB pages and wrote %s (%s %s + %s of data pages)",
		name, num(up.PagesRequestedPerQuery4K), bytesStr(up.BytesWrittenPerQuery), bytesStr(up.WALBytesPerQuery), log,
		bytesStr(up.DataBytesWrittenPerQuery))
}

func autovacuumEffect(name string, off, on *Scenario) (Effect, bool) {
	a, b := off.Phase(PhaseSelectAfterUpdate), on.Phase(PhaseSelectAfterUpdate)
	if !measuredQ(a) || !measuredQ(b) {
		return Effect{}, false
	}
	var runs int64
	for _, key := range []string{PhaseUpdate, PhaseSelectAfterUpdate} {
		if p := on.Phase(key); p != nil && p.AutovacuumRuns != nil {
			runs += *p.AutovacuumRuns
		}
	}
	s := fmt.Sprintf("With autovacuum on, %s requested %s 4 KB pages per SELECT after the updates, against %s with it off; autovacuum ran %d times during the update and select phases",
		name, num(b.PagesRequestedPerQuery4K), num(a.PagesRequestedPerQuery4K), runs)
	if runs == 0 {
		s += " (it wakes every autovacuum_naptime, 1 min by default, and waits for 20% of a table's rows to be dead: longer phases let it act)"
	}
	return Effect{Engine: name, Scenario: ScenarioAutovacuumOn, Design: DesignPGAutovacuum, Statement: s,
		Before: ptr(a.PagesRequestedPerQuery4K), After: ptr(b.PagesRequestedPerQuery4K), Unit: "4 KB pages per SELECT"}, true
}

func innodbEffects(name string, sc *Scenario) []Effect {
	if sc == nil {
		return nil
	}
	var out []Effect
	f, u, up := sc.Phase(PhaseFresh), sc.Phase(PhaseSelectAfterUpdate), sc.Phase(PhaseUpdate)
	if measuredQ(f) && measuredQ(u) {
		a, b := f.PagesRequestedPerQuery4K, u.PagesRequestedPerQuery4K
		s := fmt.Sprintf("UPDATEs %s %s's pages per SELECT from %s to %s", movement(a, b), name, num(a), num(b))
		if movement(a, b) == "left" {
			s = fmt.Sprintf("UPDATEs left %s's pages per SELECT about where they were: %s fresh, %s after", name, num(a), num(b))
		}
		if up != nil && up.Error == "" {
			s += fmt.Sprintf("; its tables and indexes went from %s to %s MiB (%s)", mib(up.TableBytesBefore+up.IndexBytesBefore),
				mib(up.TableBytesAfter+up.IndexBytesAfter), growth(up.TableBytesBefore+up.IndexBytesBefore, up.TableBytesAfter+up.IndexBytesAfter))
		}
		out = append(out, Effect{Engine: name, Scenario: sc.Name, Design: DesignInnoDBUpdate, Statement: s, Before: ptr(a), After: ptr(b), Unit: "4 KB pages per SELECT"})
	}
	if up != nil && up.HistoryListMax != nil {
		s := fmt.Sprintf("%s's history list (undo records not yet purged) peaked at %d during the updates and was %d when they ended",
			name, *up.HistoryListMax, *up.HistoryListEnd)
		if u != nil && u.HistoryListEnd != nil {
			s += fmt.Sprintf("; %d at the end of the next select phase", *u.HistoryListEnd)
		}
		out = append(out, Effect{Engine: name, Scenario: sc.Name, Design: DesignInnoDBPurge, Statement: s,
			Before: ptr(float64(*up.HistoryListMax)), After: afterHistory(u), Unit: "undo records"})
	}
	if measuredQ(up) {
		out = append(out, Effect{Engine: name, Scenario: sc.Name, Design: DesignInnoDBWrites, Statement: updateCost(name, "redo", up),
			After: ptr(up.BytesWrittenPerQuery), Unit: "bytes written per UPDATE"})
	}
	return out
}

func afterHistory(p *Phase) *float64 {
	if p == nil || p.HistoryListEnd == nil {
		return nil
	}
	return ptr(float64(*p.HistoryListEnd))
}

// num prints a figure with about three significant digits.
func num(x float64) string {
	switch a := math.Abs(x); {
	case math.IsNaN(x) || math.IsInf(x, 0):
		return "n/a"
	case a == 0:
		return "0"
	case a < 10:
		return fmt.Sprintf("%.2f", x)
	case a < 100:
		return fmt.Sprintf("%.1f", x)
	}
	return fmt.Sprintf("%.0f", x)
}

// relChange is b relative to a, e.g. "-71%".
func relChange(a, b float64) string {
	if a == 0 {
		return "n/a"
	}
	r := (b/a - 1) * 100
	if math.Abs(r) < 1 {
		return fmt.Sprintf("%+.1f%%", r)
	}
	return fmt.Sprintf("%+.0f%%", r)
}

func pct(r float64) string { return fmt.Sprintf("%.0f%%", r*100) }

func mib(b int64) string { return num(float64(b) / (1 << 20)) }

func growth(a, b int64) string {
	if a <= 0 {
		return "n/a"
	}
	return fmt.Sprintf("%+.0f%%", (float64(b)/float64(a)-1)*100)
}

// bytesStr prints a byte count in B, KiB or MiB.
func bytesStr(b float64) string {
	switch {
	case b >= 1<<20:
		return num(b/(1<<20)) + " MiB"
	case b >= 1<<10:
		return num(b/(1<<10)) + " KiB"
	}
	return num(b) + " B"
}
