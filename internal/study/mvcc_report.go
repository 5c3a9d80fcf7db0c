package study

import (
	"fmt"
	"math"

	"github.com/fairbench/fairbench/internal/document"
)

// RenderMVCC renders the mvcc study's report as Markdown and HTML.
func RenderMVCC(doc *MVCC) (md, html []byte, err error) {
	p := newPage("fairbench study: what MVCC costs per query", mvccFacts(doc), doc.Complete, doc.Error)
	p.add(&document.Section{Heading: "Method", Paras: []string{
		"Each scenario loads fresh data, brings it to a clean state (PostgreSQL: VACUUM ANALYZE; InnoDB: ANALYZE TABLE; both: every dirty page written out), then runs: point SELECTs on the fresh data; non-index UPDATEs (sysbench oltp_update_non_index); point SELECTs again; and on PostgreSQL a VACUUM of every table followed by point SELECTs once more. PostgreSQL runs this twice, with autovacuum off and on; InnoDB's purge cannot be turned off.",
		"Pages requested are buffer-pool hits plus misses (PostgreSQL pg_stat_database blks_hit + blks_read; InnoDB Innodb_buffer_pool_read_requests), pages read from storage the misses; both are divided by the phase's SELECTs or UPDATEs and given in 4 KB pages, so 8 KB PostgreSQL pages and 16 KB InnoDB pages compare, with the engine's own pages in parentheses. Each phase ends with a checkpoint (PostgreSQL CHECKPOINT; InnoDB flushes every dirty page) that is counted in it, so the data pages an UPDATE dirties are charged to the update phase.",
	}})
	p.add(effectsSection(doc.Effects))
	sel, charts, err := selectSection(doc)
	if err != nil {
		return nil, nil, err
	}
	p.add(sel, charts...)
	upd, charts, err := updateSection(doc)
	if err != nil {
		return nil, nil, err
	}
	p.add(upd, charts...)
	p.add(everyPhaseSection(doc))
	p.add(&document.Section{Heading: "Notes", Bullets: append([]string{
		"PostgreSQL's blks_read counts reads that missed shared_buffers; some of them were served by the OS page cache rather than the disk. 'Disk read per query (OS)' is what the server's processes really read from storage (/proc/PID/io).",
		"Bytes written come from the engines' own counters (WAL/redo bytes, data pages written). The OS's per-process write figure (/proc/PID/io write_bytes, kept in mvcc.json) is not shown: it is charged when a page is dirtied, a whole page-cache folio at a time, so on kernels with large folios each small WAL write can count tens of KiB.",
		"On PostgreSQL the counters cover the whole database, autovacuum workers included: with autovacuum on, its page requests are part of the phase it ran in.",
		"InnoDB's history list length is the number of undo log records not purged yet: how far purge lags behind the updates.",
		"Every phase starts just after a checkpoint, so with full_page_writes PostgreSQL logs a full-page image for nearly every page an UPDATE (or VACUUM) touches first; with checkpoints minutes apart, as by default, fewer updates pay for one. InnoDB protects against torn pages with its doublewrite buffer instead, at page-write time.",
		"Raw results of every phase are under runs/ next to this report; mvcc.json holds every figure shown here.",
	}, doc.Notes...)})
	return p.doc.Render()
}

// mvccFacts is what the study ran, where and how.
func mvccFacts(doc *MVCC) [][2]string {
	var infos []EngineInfo
	for _, e := range doc.Engines {
		infos = append(infos, e.EngineInfo)
	}
	cfg := doc.Config
	return [][2]string{
		{"Command", doc.Command},
		{"When", timeRange(doc.StartedAt, doc.FinishedAt)},
		{"Engines", engineList(infos)},
		{"Buffer pool", fmt.Sprintf("%d MiB on every engine", cfg.BufferPoolBytes>>20)},
		{"Data", fmt.Sprintf("%d sbtest tables × %d rows, about %d× the buffer pool%s", cfg.Tables, cfg.TableSize, DataFactor, loadedSizes(doc))},
		{"Phases", fmt.Sprintf("%s s each, %d client threads, uniform random keys, seed %d", num(cfg.StepSeconds), cfg.Threads, cfg.Seed)},
		{"fairbench", doc.ToolVersion},
	}
}

func effectsSection(effects []Effect) *document.Section {
	s := &document.Section{Heading: "Measured effect of each design choice"}
	if len(effects) == 0 {
		s.Paras = []string{"No effect could be derived: the phases it needs were not measured."}
		return s
	}
	t := &document.Table{Header: []string{"Design choice", "Measured effect"}}
	for _, e := range effects {
		t.Rows = append(t.Rows, document.Row(e.Design, e.Statement))
	}
	s.Tables = []*document.Table{t}
	return s
}

// selectPhases are the phases of point SELECTs, in the order they run.
var selectPhases = []string{PhaseFresh, PhaseSelectAfterUpdate, PhaseSelectAfterVacuum}

// selectSection is pages per SELECT by select phase, one row and one series per engine scenario.
func selectSection(doc *MVCC) (*document.Section, []document.Figure, error) {
	var cats []string
	for _, k := range selectPhases {
		cats = append(cats, phaseLabels[k])
	}
	t := figures("4 KB pages per SELECT: requested / read from storage (engine pages in parentheses)", append([]string{"Engine"}, cats...)...)
	var requested, read []document.BarSeries
	for _, e := range doc.Engines {
		for si, sc := range e.Scenarios {
			name, color := scenarioLabel(e.Kind, sc.Name), colorFor(e.Kind, si)
			req, rd := document.BarSeries{Name: name, Color: color}, document.BarSeries{Name: name, Color: color}
			row := []string{name}
			for _, k := range selectPhases {
				ph := sc.Phase(k)
				if !measuredQ(ph) {
					req.Values, rd.Values = append(req.Values, math.NaN()), append(rd.Values, math.NaN())
					row = append(row, "–")
					continue
				}
				req.Values, rd.Values = append(req.Values, ph.PagesRequestedPerQuery4K), append(rd.Values, ph.PagesReadPerQuery4K)
				row = append(row, fmt.Sprintf("%s (%s) / %s (%s)", num(ph.PagesRequestedPerQuery4K), num(ph.PagesRequestedPerQuery),
					num(ph.PagesReadPerQuery4K), num(ph.PagesReadPerQuery)))
			}
			requested, read = append(requested, req), append(read, rd)
			t.Rows = append(t.Rows, document.Row(row...))
		}
	}
	var charts []document.Figure
	for _, c := range []struct {
		title string
		s     []document.BarSeries
	}{{"4 KB pages requested per SELECT", requested}, {"4 KB pages read from storage per SELECT", read}} {
		fig, err := barChart(c.title, c.title, "4 KB pages", cats, c.s, false)
		if err != nil {
			return nil, nil, err
		}
		charts = append(charts, fig...)
	}
	return &document.Section{Heading: "Pages per SELECT", Tables: []*document.Table{t}}, charts, nil
}

// updateSection is pages and bytes per UPDATE, one row and one pair of bars per engine scenario
// that measured its update phase.
func updateSection(doc *MVCC) (*document.Section, []document.Figure, error) {
	t := figures("Per UPDATE", "Engine", "Pages requested, 4 KB", "Read from storage, 4 KB", "WAL / redo", "Data pages written", "Total written", "HOT", "Tables + indexes")
	var series []document.BarSeries
	for _, e := range doc.Engines {
		for si, sc := range e.Scenarios {
			up := sc.Phase(PhaseUpdate)
			if !measuredQ(up) {
				continue
			}
			name := scenarioLabel(e.Kind, sc.Name)
			hot := "–"
			if up.HOTRatio != nil {
				hot = pct(*up.HOTRatio)
			}
			a, b := up.TableBytesBefore+up.IndexBytesBefore, up.TableBytesAfter+up.IndexBytesAfter
			t.Rows = append(t.Rows, document.Row(name,
				fmt.Sprintf("%s (%s)", num(up.PagesRequestedPerQuery4K), num(up.PagesRequestedPerQuery)),
				fmt.Sprintf("%s (%s)", num(up.PagesReadPerQuery4K), num(up.PagesReadPerQuery)),
				bytesStr(up.WALBytesPerQuery), bytesStr(up.DataBytesWrittenPerQuery), bytesStr(up.BytesWrittenPerQuery), hot,
				fmt.Sprintf("%s → %s MiB (%s)", mib(a), mib(b), growth(a, b))))
			series = append(series, document.BarSeries{Name: name, Color: colorFor(e.Kind, si),
				Values: []float64{up.PagesRequestedPerQuery4K, up.PagesReadPerQuery4K}})
		}
	}
	charts, err := barChart("4 KB pages per UPDATE", "4 KB pages per UPDATE", "4 KB pages", []string{"requested", "read from storage"}, series, false)
	if err != nil {
		return nil, nil, err
	}
	return &document.Section{Heading: "Pages and bytes per UPDATE", Tables: []*document.Table{t}}, charts, nil
}

// everyPhaseSection is one table per engine scenario with every phase's figures.
func everyPhaseSection(doc *MVCC) *document.Section {
	s := &document.Section{Heading: "Every phase"}
	for _, e := range doc.Engines {
		for _, sc := range e.Scenarios {
			t := figures(fmt.Sprintf("%s (loaded in %s s, %s MiB)", scenarioLabel(e.Kind, sc.Name), num(sc.LoadSeconds), mib(sc.DataBytes)),
				"Phase", "Seconds", "Queries", "TPS", "Latency avg / p95 ms", "Pages requested per query, 4 KB", "Read from storage per query, 4 KB",
				"Disk read per query (OS)", "WAL / redo per query", "Tables / indexes MiB after", "Dead versions after", "History list start / max / end", "Autovacuum runs")
			for _, ph := range sc.Phases {
				t.Rows = append(t.Rows, document.Row(phaseRow(e, ph)...))
			}
			s.Tables = append(s.Tables, t)
		}
		if e.Error != "" {
			s.Paras = append(s.Paras, fmt.Sprintf("%s did not finish: %s", engineName(e.Kind), e.Error))
		}
	}
	return s
}

// phaseRow is one phase's figures; a VACUUM's are totals rather than per query.
func phaseRow(e MVCCEngine, ph Phase) []string {
	row := []string{ph.Label, num(ph.Seconds), fmt.Sprint(ph.Queries), num(ph.TPS), lat(ph.AvgMS, ph.P95MS),
		perQ(ph, ph.PagesRequestedPerQuery4K), perQ(ph, ph.PagesReadPerQuery4K), perQB(ph, ph.DiskReadBytesPerQuery), perQB(ph, ph.WALBytesPerQuery),
		fmt.Sprintf("%s / %s", mib(ph.TableBytesAfter), mib(ph.IndexBytesAfter)), optInt(ph.DeadTuplesAfter), history(ph), optInt(ph.AutovacuumRuns)}
	if ph.Kind == "vacuum" {
		row[5] = fmt.Sprintf("%s in all", num(to4K(float64(ph.PagesRequested), e.PageSize)))
		row[6] = fmt.Sprintf("%s in all", num(to4K(float64(ph.PagesRead), e.PageSize)))
		row[8] = bytesStr(float64(ph.WALBytes)) + " in all"
	}
	if ph.Error != "" {
		row[1] = "failed: " + ph.Error
	}
	return row
}
