package study

import (
	"fmt"
	"html/template"
	"math"
	"strings"
	"time"

	"github.com/fairbench/fairbench/internal/report"
)

// page is what a study builds, section by section; render hands it to the report's writers.
type page struct {
	Title    string
	Meta     [][2]string
	Warning  string
	Sections []section
}

type section struct {
	Title   string
	Paras   []string
	Charts  []figure // HTML only; Markdown readers get the tables
	Tables  []table
	Bullets []string
}

type figure struct {
	Title string
	SVG   template.HTML
}

type table struct {
	Text    bool // words in every column; otherwise all but the first column are figures
	Caption string
	Head    []string
	Rows    [][]string
}

// render writes the page through the report's own Markdown and HTML writers, so a study reads
// and looks like every other page fairbench writes.
func (p *page) render() (md, html []byte, err error) {
	d := report.Doc{Title: p.Title}
	var facts []string
	for _, m := range p.Meta {
		facts = append(facts, m[0]+": "+m[1])
		if m[0] == "When" {
			d.Date = m[1]
		}
	}
	if p.Warning != "" {
		d.Summary = "Incomplete: " + p.Warning
	}
	d.Sections = append(d.Sections, report.Section{ID: "about", Heading: "About this study", Bullets: facts})
	for i, s := range p.Sections {
		rs := report.Section{ID: fmt.Sprintf("s%d", i+1), Heading: s.Title, Paras: s.Paras, Bullets: s.Bullets}
		for _, t := range s.Tables {
			rt := report.Table{Caption: t.Caption, Header: t.Head, Rows: t.Rows}
			if !t.Text {
				for c := range t.Head {
					rt.Numeric = append(rt.Numeric, c > 0)
				}
			}
			rs.Tables = append(rs.Tables, rt)
		}
		for _, f := range s.Charts {
			rs.Figures = append(rs.Figures, report.Figure{Title: f.Title, SVG: f.SVG})
		}
		d.Sections = append(d.Sections, rs)
	}
	return report.RenderDoc(d)
}

func timeRange(a, b time.Time) string {
	if b.IsZero() {
		return a.Format(time.RFC3339)
	}
	return a.Format(time.RFC3339) + " to " + b.Format("15:04:05") + " (" + b.Sub(a).Round(time.Second).String() + ")"
}

func engineList(infos []EngineInfo) string {
	var parts []string
	for _, e := range infos {
		s := engineName(e.Kind)
		if e.Version != "" {
			s += " " + e.Version
		}
		if e.PageSize > 0 {
			s += fmt.Sprintf(" (%d KB pages)", e.PageSize/1024)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

// scenarioLabel names one engine's scenario in charts and tables.
func scenarioLabel(kind, scenario string) string {
	if kind == "postgres" {
		return engineName(kind) + ", " + scenario
	}
	return engineName(kind)
}

// RenderMVCC renders the mvcc study's report as Markdown and HTML.
func RenderMVCC(doc *MVCC) (md, html []byte, err error) {
	p := &page{Title: "fairbench study: what MVCC costs per query"}
	var infos []EngineInfo
	for _, e := range doc.Engines {
		infos = append(infos, e.EngineInfo)
	}
	cfg := doc.Config
	p.Meta = [][2]string{
		{"Command", doc.Command},
		{"When", timeRange(doc.StartedAt, doc.FinishedAt)},
		{"Engines", engineList(infos)},
		{"Buffer pool", fmt.Sprintf("%d MiB on every engine", cfg.BufferPoolBytes>>20)},
		{"Data", fmt.Sprintf("%d sbtest tables × %d rows, about %d× the buffer pool%s", cfg.Tables, cfg.TableSize, DataFactor, loadedSizes(doc))},
		{"Phases", fmt.Sprintf("%s s each, %d client threads, uniform random keys, seed %d", num(cfg.StepSeconds), cfg.Threads, cfg.Seed)},
		{"fairbench", doc.ToolVersion},
	}
	if !doc.Complete {
		p.Warning = doc.Error
		if p.Warning == "" {
			p.Warning = "the study did not finish"
		}
	}
	p.Sections = append(p.Sections, section{Title: "Method", Paras: []string{
		"Each scenario loads fresh data, brings it to a clean state (PostgreSQL: VACUUM ANALYZE; InnoDB: ANALYZE TABLE; both: every dirty page written out), then runs: point SELECTs on the fresh data; non-index UPDATEs (sysbench oltp_update_non_index); point SELECTs again; and on PostgreSQL a VACUUM of every table followed by point SELECTs once more. PostgreSQL runs this twice, with autovacuum off and on; InnoDB's purge cannot be turned off.",
		"Pages requested are buffer-pool hits plus misses (PostgreSQL pg_stat_database blks_hit + blks_read; InnoDB Innodb_buffer_pool_read_requests), pages read from storage the misses; both are divided by the phase's SELECTs or UPDATEs and given in 4 KB pages, so 8 KB PostgreSQL pages and 16 KB InnoDB pages compare, with the engine's own pages in parentheses. Each phase ends with a checkpoint (PostgreSQL CHECKPOINT; InnoDB flushes every dirty page) that is counted in it, so the data pages an UPDATE dirties are charged to the update phase.",
	}})

	eff := section{Title: "Measured effect of each design choice"}
	if len(doc.Effects) == 0 {
		eff.Paras = []string{"No effect could be derived: the phases it needs were not measured."}
	} else {
		t := table{Text: true, Head: []string{"Design choice", "Measured effect"}}
		for _, e := range doc.Effects {
			t.Rows = append(t.Rows, []string{e.Design, e.Statement})
		}
		eff.Tables = []table{t}
	}
	p.Sections = append(p.Sections, eff)

	// Pages per SELECT, by select phase, one series per engine scenario.
	selPhases := []string{PhaseFresh, PhaseSelectAfterUpdate, PhaseSelectAfterVacuum}
	var cats []string
	for _, k := range selPhases {
		cats = append(cats, phaseLabels[k])
	}
	var reqS, readS []barSeries
	selTable := table{Caption: "4 KB pages per SELECT: requested / read from storage (engine pages in parentheses)", Head: append([]string{"Engine"}, cats...)}
	updTable := table{Caption: "Per UPDATE", Head: []string{"Engine", "Pages requested, 4 KB", "Read from storage, 4 KB", "WAL / redo", "Data pages written", "Total written", "HOT", "Tables + indexes"}}
	var updReq, updRead []float64
	var updNames []string
	var updColors []string
	for _, e := range doc.Engines {
		for si, sc := range e.Scenarios {
			name := scenarioLabel(e.Kind, sc.Name)
			color := colorFor(e.Kind, si)
			rs, rd := barSeries{Name: name, Color: color}, barSeries{Name: name, Color: color}
			row := []string{name}
			for _, k := range selPhases {
				ph := sc.Phase(k)
				if !measuredQ(ph) {
					rs.Values = append(rs.Values, math.NaN())
					rd.Values = append(rd.Values, math.NaN())
					row = append(row, "–")
					continue
				}
				rs.Values = append(rs.Values, ph.PagesRequestedPerQuery4K)
				rd.Values = append(rd.Values, ph.PagesReadPerQuery4K)
				row = append(row, fmt.Sprintf("%s (%s) / %s (%s)", num(ph.PagesRequestedPerQuery4K), num(ph.PagesRequestedPerQuery),
					num(ph.PagesReadPerQuery4K), num(ph.PagesReadPerQuery)))
			}
			reqS, readS = append(reqS, rs), append(readS, rd)
			selTable.Rows = append(selTable.Rows, row)
			if up := sc.Phase(PhaseUpdate); measuredQ(up) {
				hot := "–"
				if up.HOTRatio != nil {
					hot = pct(*up.HOTRatio)
				}
				a, b := up.TableBytesBefore+up.IndexBytesBefore, up.TableBytesAfter+up.IndexBytesAfter
				updTable.Rows = append(updTable.Rows, []string{name,
					fmt.Sprintf("%s (%s)", num(up.PagesRequestedPerQuery4K), num(up.PagesRequestedPerQuery)),
					fmt.Sprintf("%s (%s)", num(up.PagesReadPerQuery4K), num(up.PagesReadPerQuery)),
					bytesStr(up.WALBytesPerQuery), bytesStr(up.DataBytesWrittenPerQuery), bytesStr(up.BytesWrittenPerQuery), hot, fmt.Sprintf("%s → %s MiB (%s)", mib(a), mib(b), growth(a, b))})
				updNames = append(updNames, name)
				updColors = append(updColors, color)
				updReq = append(updReq, up.PagesRequestedPerQuery4K)
				updRead = append(updRead, up.PagesReadPerQuery4K)
			}
		}
	}
	sel := section{Title: "Pages per SELECT", Tables: []table{selTable}}
	for _, c := range []struct {
		title string
		s     []barSeries
	}{{"4 KB pages requested per SELECT", reqS}, {"4 KB pages read from storage per SELECT", readS}} {
		svg, err := categoryChart(c.title, "4 KB pages", cats, c.s, true)
		if err != nil {
			return nil, nil, err
		}
		if svg != "" {
			sel.Charts = append(sel.Charts, figure{c.title, svg})
		}
	}
	p.Sections = append(p.Sections, sel)

	upd := section{Title: "Pages and bytes per UPDATE", Tables: []table{updTable}}
	var us []barSeries
	for i, n := range updNames {
		us = append(us, barSeries{Name: n, Color: updColors[i], Values: []float64{updReq[i], updRead[i]}})
	}
	svg, err := categoryChart("4 KB pages per UPDATE", "4 KB pages", []string{"requested", "read from storage"}, us, true)
	if err != nil {
		return nil, nil, err
	}
	if svg != "" {
		upd.Charts = []figure{{"4 KB pages per UPDATE", svg}}
	}
	p.Sections = append(p.Sections, upd)

	all := section{Title: "Every phase"}
	for _, e := range doc.Engines {
		for _, sc := range e.Scenarios {
			t := table{Caption: fmt.Sprintf("%s (loaded in %s s, %s MiB)", scenarioLabel(e.Kind, sc.Name), num(sc.LoadSeconds), mib(sc.DataBytes)),
				Head: []string{"Phase", "Seconds", "Queries", "TPS", "Latency avg / p95 ms", "Pages requested per query, 4 KB", "Read from storage per query, 4 KB",
					"Disk read per query (OS)", "WAL / redo per query", "Tables / indexes MiB after", "Dead versions after", "History list start / max / end", "Autovacuum runs"}}
			for _, ph := range sc.Phases {
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
				t.Rows = append(t.Rows, row)
			}
			all.Tables = append(all.Tables, t)
		}
		if e.Error != "" {
			all.Paras = append(all.Paras, fmt.Sprintf("%s did not finish: %s", engineName(e.Kind), e.Error))
		}
	}
	p.Sections = append(p.Sections, all)

	notes := section{Title: "Notes", Bullets: append([]string{
		"PostgreSQL's blks_read counts reads that missed shared_buffers; some of them were served by the OS page cache rather than the disk. 'Disk read per query (OS)' is what the server's processes really read from storage (/proc/PID/io).",
		"Bytes written come from the engines' own counters (WAL/redo bytes, data pages written). The OS's per-process write figure (/proc/PID/io write_bytes, kept in mvcc.json) is not shown: it is charged when a page is dirtied, a whole page-cache folio at a time, so on kernels with large folios each small WAL write can count tens of KiB.",
		"On PostgreSQL the counters cover the whole database, autovacuum workers included: with autovacuum on, its page requests are part of the phase it ran in.",
		"InnoDB's history list length is the number of undo log records not purged yet: how far purge lags behind the updates.",
		"Every phase starts just after a checkpoint, so with full_page_writes PostgreSQL logs a full-page image for nearly every page an UPDATE (or VACUUM) touches first; with checkpoints minutes apart, as by default, fewer updates pay for one. InnoDB protects against torn pages with its doublewrite buffer instead, at page-write time.",
		"Raw results of every phase are under runs/ next to this report; mvcc.json holds every figure shown here.",
	}, doc.Notes...)}
	p.Sections = append(p.Sections, notes)

	return p.render()
}

func loadedSizes(doc *MVCC) string {
	var parts []string
	for _, e := range doc.Engines {
		if len(e.Scenarios) > 0 && e.Scenarios[0].DataBytes > 0 {
			parts = append(parts, fmt.Sprintf("%s %s MiB", engineName(e.Kind), mib(e.Scenarios[0].DataBytes)))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " (loaded: " + strings.Join(parts, ", ") + ")"
}

func lat(avg, p95 float64) string {
	if avg == 0 && p95 == 0 {
		return "–"
	}
	return num(avg) + " / " + num(p95)
}

func perQ(p Phase, v float64) string {
	if p.Queries == 0 {
		return "–"
	}
	return num(v)
}

func perQB(p Phase, v float64) string {
	if p.Queries == 0 {
		return "–"
	}
	return bytesStr(v)
}

func optInt(v *int64) string {
	if v == nil {
		return "–"
	}
	return fmt.Sprint(*v)
}

func history(p Phase) string {
	if p.HistoryListStart == nil {
		return "–"
	}
	return fmt.Sprintf("%d / %d / %d", *p.HistoryListStart, *p.HistoryListMax, *p.HistoryListEnd)
}

// RenderBandwidth renders the bandwidth study's report as Markdown and HTML.
func RenderBandwidth(doc *Bandwidth) (md, html []byte, err error) {
	p := &page{Title: "fairbench study: throughput under storage bandwidth caps"}
	var infos []EngineInfo
	var devices []string
	for _, e := range doc.Engines {
		infos = append(infos, e.EngineInfo)
		if e.Device != "" {
			devices = append(devices, engineName(e.Kind)+": "+e.Device)
		}
	}
	cfg := doc.Config
	dev := "loop device over a sparse file, ext4"
	if cfg.DeviceBytes > 0 {
		dev += fmt.Sprintf(", %d GiB", cfg.DeviceBytes>>30)
	}
	if len(devices) > 0 {
		dev += " (" + strings.Join(devices, "; ") + ")"
	}
	p.Meta = [][2]string{
		{"Command", doc.Command},
		{"When", timeRange(doc.StartedAt, doc.FinishedAt)},
		{"Engines", engineList(infos)},
		{"Caps", strings.Join(cfg.Limits, ", ") + " (read and write each; M = MiB/s) with " + doc.Mechanism},
		{"Device", dev},
		{"Buffer pool", fmt.Sprintf("%d MiB on every engine", cfg.BufferPoolBytes>>20)},
		{"Data", fmt.Sprintf("%d sbtest tables × %d rows", cfg.Tables, cfg.TableSize)},
		{"Each step", fmt.Sprintf("oltp_read_write for %s s, %d client threads, seed %d", num(cfg.StepSeconds), cfg.Threads, cfg.Seed)},
		{"fairbench", doc.ToolVersion},
	}
	if !doc.Complete {
		p.Warning = doc.Error
		if p.Warning == "" {
			p.Warning = "the study did not finish"
		}
	}

	// Steps are matched by limit label, in the order asked for.
	cats := cfg.Limits
	tput := section{Title: "Throughput against bandwidth"}
	var tpsS, pagesS []barSeries
	tt := table{Caption: "OLTP read-write transactions per second (p95 latency ms)", Head: append([]string{"Cap"}, nil...)}
	for _, e := range doc.Engines {
		tt.Head = append(tt.Head, engineName(e.Kind))
	}
	byLimit := func(e BandwidthEngine, l string) *Step {
		for i := range e.Steps {
			if e.Steps[i].Limit == l {
				return &e.Steps[i]
			}
		}
		return nil
	}
	for _, e := range doc.Engines {
		s := barSeries{Name: engineName(e.Kind), Color: colorFor(e.Kind, 0)}
		ps := barSeries{Name: engineName(e.Kind), Color: colorFor(e.Kind, 0)}
		for _, l := range cats {
			st := byLimit(e, l)
			if st == nil || st.Error != "" {
				s.Values = append(s.Values, math.NaN())
				ps.Values = append(ps.Values, math.NaN())
				continue
			}
			s.Values = append(s.Values, st.TPS)
			ps.Values = append(ps.Values, st.PagesRequestedPerSec4K)
		}
		tpsS, pagesS = append(tpsS, s), append(pagesS, ps)
	}
	for _, l := range cats {
		row := []string{l}
		for _, e := range doc.Engines {
			st := byLimit(e, l)
			switch {
			case st == nil:
				row = append(row, "–")
			case st.Error != "":
				row = append(row, "failed")
			default:
				row = append(row, fmt.Sprintf("%s (%s)", num(st.TPS), num(st.P95MS)))
			}
		}
		tt.Rows = append(tt.Rows, row)
	}
	for _, c := range []struct {
		title, y string
		s        []barSeries
	}{{"OLTP read-write throughput by bandwidth cap", "transactions/s", tpsS}, {"4 KB pages requested per second by bandwidth cap", "4 KB pages/s", pagesS}} {
		svg, err := categoryChart(c.title, c.y, cats, c.s, false)
		if err != nil {
			return nil, nil, err
		}
		if svg != "" {
			tput.Charts = append(tput.Charts, figure{c.title, svg})
		}
	}
	tput.Tables = []table{tt}
	p.Sections = append(p.Sections, tput)

	cross := section{Title: "Crossover"}
	for _, c := range doc.Crossovers {
		cross.Bullets = append(cross.Bullets, c.Statement)
	}
	for _, e := range doc.Engines {
		switch {
		case e.Knee == "":
		case len(e.Steps) > 0 && e.Knee == e.Steps[len(e.Steps)-1].Limit:
			cross.Bullets = append(cross.Bullets, fmt.Sprintf("%s got 90%% of its throughput at the highest limit only at that limit (%s): every lower cap cost it more than 10%%.", engineName(e.Kind), e.Knee))
		default:
			cross.Bullets = append(cross.Bullets, fmt.Sprintf("%s got 90%% of its throughput at the highest limit from a cap of %s on: more bandwidth than that gained it little.", engineName(e.Kind), e.Knee))
		}
	}
	if len(cross.Bullets) == 0 {
		cross.Paras = []string{"Not enough steps were measured on two engines to compare them."}
	}
	p.Sections = append(p.Sections, cross)

	steps := section{Title: "Every step"}
	for _, e := range doc.Engines {
		t := table{Caption: fmt.Sprintf("%s (data %s MiB, loaded uncapped in %s s)", engineName(e.Kind), mib(e.DataBytes), num(e.LoadSeconds)),
			Head: []string{"Cap", "Proof: O_DIRECT write / read", "TPS", "Latency avg / p95 ms", "Pages requested/s, 4 KB", "Read from storage/s, 4 KB",
				"Device read MB/s avg (busiest 5 s)", "Device write MB/s avg (busiest 5 s)", "Within cap", "Server read MB/s (OS)"}}
		for _, st := range e.Steps {
			proof := "–"
			if st.Probe != nil {
				proof = fmt.Sprintf("%s / %s", num(st.Probe.WriteBps/1e6), num(st.Probe.ReadBps/1e6))
				if !st.ProofOK {
					proof += " (cap not held)"
				}
			}
			within := "uncapped"
			if st.WithinCap != nil {
				within = map[bool]string{true: "yes", false: "NO"}[*st.WithinCap]
			}
			row := []string{st.Limit, proof, num(st.TPS), lat(st.AvgMS, st.P95MS), num(st.PagesRequestedPerSec4K), num(st.PagesReadPerSec4K),
				fmt.Sprintf("%s (%s)", num(st.DeviceReadBps/1e6), num(st.DeviceReadPeakBps/1e6)),
				fmt.Sprintf("%s (%s)", num(st.DeviceWriteBps/1e6), num(st.DeviceWritePeakBps/1e6)), within,
				num(st.ServerReadBps / 1e6)}
			if st.Error != "" {
				row[2] = "failed: " + st.Error
			}
			t.Rows = append(t.Rows, row)
		}
		steps.Tables = append(steps.Tables, t)
		if e.Error != "" {
			steps.Paras = append(steps.Paras, fmt.Sprintf("%s did not finish: %s", engineName(e.Kind), e.Error))
		}
	}
	p.Sections = append(p.Sections, steps)
	q18, err := q18Section(doc, cats, byLimit)
	if err != nil {
		return nil, nil, err
	}
	p.Sections = append(p.Sections, q18)
	p.Sections = append(p.Sections, section{Title: "Notes", Bullets: append(doc.Notes,
		"MB/s are 10^6 bytes per second; caps are given in MiB/s (25M = 26.2 MB/s). 'Within cap' compares the step's average device rates with the cap plus 10%. The device's counters are sampled every second on their own and the peak is its busiest 5 s: the device counts an I/O when it completes, so a stall of the disk under the loop device pushes part of one second's completions into the next, and single seconds swing around what the throttle passed by that much.",
		"Raw results of every step are under runs/ next to this report; bandwidth.json holds every figure shown here.")})

	return p.render()
}

// q18Section is TPC-H Q18's time at every cap, per engine: the published analysis's second figure.
func q18Section(doc *Bandwidth, cats []string, byLimit func(BandwidthEngine, string) *Step) (section, error) {
	sec := section{Title: "TPC-H Q18", Paras: []string{doc.TPCHQ18}}
	at := func(e BandwidthEngine, l string) (ExtraResult, bool) {
		st := byLimit(e, l)
		if st == nil {
			return ExtraResult{}, false
		}
		r, ok := st.Extra[q18Name]
		return r, ok
	}
	t := table{Caption: "TPC-H Q18 seconds (device read MB/s while it ran)", Head: []string{"Cap"}}
	for _, e := range doc.Engines {
		t.Head = append(t.Head, engineName(e.Kind))
	}
	// Failures (not loaded, timed out) are shown as well as times: the paragraph above says Q18
	// was meant to run.
	var series []barSeries
	timed, reported := false, false
	for _, e := range doc.Engines {
		s := barSeries{Name: engineName(e.Kind), Color: colorFor(e.Kind, 0)}
		for _, l := range cats {
			v := math.NaN()
			if r, ok := at(e, l); ok {
				reported = true
				if r.Error == "" {
					v, timed = r.Seconds, true
				}
			}
			s.Values = append(s.Values, v)
		}
		series = append(series, s)
	}
	if !reported {
		return sec, nil
	}
	for _, l := range cats {
		row := []string{l}
		for _, e := range doc.Engines {
			cell := "–"
			if r, ok := at(e, l); ok {
				cell = fmt.Sprintf("%s (%s)", num(r.Seconds), num(r.DeviceReadBps/1e6))
				if r.Error != "" {
					cell = "failed: " + r.Error
				}
			}
			row = append(row, cell)
		}
		t.Rows = append(t.Rows, row)
	}
	sec.Tables = []table{t}
	if !timed {
		return sec, nil
	}
	svg, err := categoryChart("TPC-H Q18 time by bandwidth cap (lower is better)", "seconds", cats, series, false)
	if err != nil {
		return sec, err
	}
	if svg != "" {
		sec.Charts = append(sec.Charts, figure{"TPC-H Q18 time by bandwidth cap", svg})
	}
	return sec, nil
}
