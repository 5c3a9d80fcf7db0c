package reproduce

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/fairbench/fairbench/internal/document"
	"github.com/fairbench/fairbench/internal/result"
)

// Tally counts a study's rows by verdict, for the summary line and the README's table.
type Tally struct {
	Compared      int `json:"compared"`
	Agree         int `json:"agree"`
	Disagree      int `json:"disagree"`
	NotComparable int `json:"not_comparable"`
	Undecided     int `json:"undecided,omitempty"` // measured, but the interval reaches both sides
}

// Count tallies rows.
func Count(rows []Row) Tally {
	var t Tally
	for _, r := range rows {
		switch r.Verdict {
		case Agrees:
			t.Agree++
			t.Compared++
		case Disagrees:
			t.Disagree++
			t.Compared++
		case Undecided:
			t.Undecided++
		default:
			t.NotComparable++
		}
	}
	return t
}

func (t Tally) String() string {
	s := fmt.Sprintf("%d rows compared: %d agree, %d disagree; ", t.Compared, t.Agree, t.Disagree)
	if t.Undecided > 0 {
		s += fmt.Sprintf("%d too noisy to judge; ", t.Undecided)
	}
	return s + fmt.Sprintf("%d not comparable here", t.NotComparable)
}

// writeReport renders OUT/report.md and OUT/report.html from the rows and the runs' results.
func writeReport(dir string, s *Study, sc Scale, rows []Row, got Measured, pub Published) error {
	doc := &document.Doc{
		Title:   "fairbench reproduces: " + s.Title,
		Date:    firstStart(got),
		Summary: fmt.Sprintf("Scale %s (%s). %s.", sc, s.ScaleRule, Count(rows)),
	}
	t := &document.Table{Header: []string{"figure", "run", "published", "measured here", "verdict", "why"}}
	for _, r := range rows {
		row := document.Row(r.Figure, r.Run, r.Published, r.Measured, r.Verdict, r.Why)
		row[4].Failed, row[4].Incomplete = r.Verdict == Disagrees, r.Verdict == NotComparable || r.Verdict == Undecided
		t.Rows = append(t.Rows, row)
	}
	t.Foot = []string{"Published figures are the study's own, on its hardware (published.yaml names the source). " +
		"Rows compare shapes that survive a change of machine: ratios to the study's reference engine and the picks " +
		"they lead to. A ratio agrees when both name the same winner, or both a tie within 5%; magnitudes are shown, not judged. " +
		"With rounds, a measured ratio carries its interval (in brackets: 95%, or where the comparison ran rounds until decided the " +
		"look its rounds reached, as its picks are judged, docs/decisions.md) and its side is the interval's: a tie only when the " +
		"whole interval lies within 5% of 1; an interval that includes 1 and reaches further is too noisy to judge, unless it " +
		"excludes the published ratio, which then disagrees."}
	doc.Sections = append(doc.Sections, &document.Section{ID: "rows", Heading: "Published beside measured", Tables: []*document.Table{t}})
	if s.Explain != nil {
		doc.Sections = append(doc.Sections, s.Explain(pub, got)...)
	}
	if s.Charts != nil {
		if charts := s.Charts(pub, got); len(charts) > 0 {
			curves := &document.Section{ID: "curves", Heading: "Curves", Paras: []string{chartNote}}
			doc.Sections = append(doc.Sections, curves)
			if err := doc.AddCharts(curves, charts); err != nil {
				return err
			}
		}
	}
	doc.Sections = append(doc.Sections, runsSection(s, sc, got))
	md, html, err := doc.Render()
	if err != nil {
		return err
	}
	if err := result.WriteFileAtomic(filepath.Join(dir, "report.md"), md); err != nil {
		return err
	}
	if err := result.WriteFileAtomic(filepath.Join(dir, "report.html"), html); err != nil {
		return err
	}
	return result.WriteJSON(filepath.Join(dir, "rows.json"), struct {
		Study string `json:"study"`
		Scale Scale  `json:"scale"`
		Tally Tally  `json:"tally"`
		Rows  []Row  `json:"rows"`
	}{s.Name, sc, Count(rows), rows})
}

// chartNote says how the charts normalise, once for every study.
const chartNote = "The charts (in report.html) draw the study's curves as it drew them, published (dashed) and " +
	"measured (solid) on one chart. Absolute figures from other hardware cannot share an axis, so each chart " +
	"divides by a reference that both sides have: the study's reference engine where the rows compare " +
	"engines, a curve's own highest point where they compare where a curve bends. Each chart's title says which."

func runsSection(s *Study, sc Scale, got Measured) *document.Section {
	sec := &document.Section{ID: "runs", Heading: "Runs"}
	for _, run := range s.Runs(sc) {
		line := runLine(run, got)
		if run.AsPublished != "" {
			line += "; as published: " + run.AsPublished
		}
		if run.Purpose != "" {
			line += "; " + run.Purpose
		}
		sec.Bullets = append(sec.Bullets, line)
	}
	sec.Code = "fairbench reproduce " + s.Name + " --scale " + string(sc)
	return sec
}

func firstStart(got Measured) string {
	var first time.Time
	for _, rs := range got.Runs {
		for _, r := range rs {
			if !r.StartedAt.IsZero() && (first.IsZero() || r.StartedAt.Before(first)) {
				first = r.StartedAt
			}
		}
	}
	for _, doc := range got.Bandwidth {
		if doc != nil && !doc.StartedAt.IsZero() && (first.IsZero() || doc.StartedAt.Before(first)) {
			first = doc.StartedAt
		}
	}
	if first.IsZero() {
		return "no run completed"
	}
	return first.UTC().Format("2006-01-02 15:04 UTC")
}

// runLine says what a run left in its directory: a comparison its results files, the bandwidth
// study (which writes no results files of its own) its steps in bandwidth.json.
func runLine(run Run, got Measured) string {
	if run.Bandwidth == nil {
		there := "its own report.md and report.html are there"
		if rule := got.Rules[run.Name]; rule.IsSequential() {
			there = fmt.Sprintf("rounds until decided from %d rounds; %s, and say how its rounds ended", rule.MinRounds, there)
		}
		return fmt.Sprintf("%s: %s in %s/ (%s)", run.Name, count(len(got.Runs[run.Name]), "result"), run.Name, there)
	}
	doc := got.Bandwidth[run.Name]
	if doc == nil {
		return fmt.Sprintf("%s: the bandwidth study, which left no bandwidth.json in %s/", run.Name, run.Name)
	}
	steps := 0
	for _, e := range doc.Engines {
		steps += len(e.Steps)
	}
	return fmt.Sprintf("%s: the bandwidth study, %s on %s in %s/ (bandwidth.json, and its own report.md and report.html, are there)",
		run.Name, count(steps, "step"), count(len(doc.Engines), "engine"), run.Name)
}

// count is "1 result", "3 results".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
