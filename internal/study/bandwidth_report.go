package study

import (
	"fmt"
	"math"
	"strings"

	"github.com/fairbench/fairbench/internal/document"
)

// RenderBandwidth renders the bandwidth study's report as Markdown and HTML.
func RenderBandwidth(doc *Bandwidth) (md, html []byte, err error) {
	p := newPage("fairbench study: throughput under storage bandwidth caps", bandwidthFacts(doc), doc.Complete, doc.Error)
	tput, charts, err := throughputSection(doc)
	if err != nil {
		return nil, nil, err
	}
	p.add(tput, charts...)
	p.add(crossoverSection(doc))
	p.add(stepsSection(doc))
	q18, charts, err := q18Section(doc)
	if err != nil {
		return nil, nil, err
	}
	p.add(q18, charts...)
	p.add(&document.Section{Heading: "Notes", Bullets: append(doc.Notes,
		"MB/s are 10^6 bytes per second; caps are given in MiB/s (25M = 26.2 MB/s). 'Within cap' compares the step's average device rates with the cap plus 10%. The device's counters are sampled every second on their own and the peak is its busiest 5 s: the device counts an I/O when it completes, so a stall of the disk under the loop device pushes part of one second's completions into the next, and single seconds swing around what the throttle passed by that much.",
		"Raw results of every step are under runs/ next to this report; bandwidth.json holds every figure shown here.")})
	return p.doc.Render()
}

// bandwidthFacts is what the study ran, where and how.
func bandwidthFacts(doc *Bandwidth) [][2]string {
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
	return [][2]string{
		{"Command", doc.Command},
		{"When", timeRange(doc.StartedAt, doc.FinishedAt)},
		{"Engines", engineList(infos)},
		{"Caps", strings.Join(cfg.Limits, ", ") + " (read and write each; M = MiB/s) with " + doc.Mechanism},
		{"Device", dev},
		{"Buffer pool", fmt.Sprintf("%d MiB on every engine", cfg.BufferPoolBytes>>20)},
		{"Server memory", serverMemory(cfg.ServerMemoryBytes)},
		{"Data", fmt.Sprintf("%d sbtest tables × %d rows", cfg.Tables, cfg.TableSize)},
		{"Each step", fmt.Sprintf("oltp_read_write for %s s, %d client threads, seed %d", num(cfg.StepSeconds), cfg.Threads, cfg.Seed)},
		{"fairbench", doc.ToolVersion},
	}
}

// step is the engine's step at the cap; steps are matched by their cap's label, in the order
// asked for. nil when the engine did not get to it.
func (e BandwidthEngine) step(limit string) *Step {
	for i := range e.Steps {
		if e.Steps[i].Limit == limit {
			return &e.Steps[i]
		}
	}
	return nil
}

// capHeader heads a table with a row per cap and a column per engine.
func capHeader(doc *Bandwidth) []string {
	head := []string{"Cap"}
	for _, e := range doc.Engines {
		head = append(head, engineName(e.Kind))
	}
	return head
}

// throughputSection is each engine's throughput and page requests at every cap.
func throughputSection(doc *Bandwidth) (*document.Section, []document.Figure, error) {
	cats := doc.Config.Limits
	var tps, pages []document.BarSeries
	for _, e := range doc.Engines {
		s := document.BarSeries{Name: engineName(e.Kind), Color: colorFor(e.Kind, 0)}
		ps := document.BarSeries{Name: engineName(e.Kind), Color: colorFor(e.Kind, 0)}
		for _, l := range cats {
			st := e.step(l)
			if st == nil || st.Error != "" {
				s.Values, ps.Values = append(s.Values, math.NaN()), append(ps.Values, math.NaN())
				continue
			}
			s.Values, ps.Values = append(s.Values, st.TPS), append(ps.Values, st.PagesRequestedPerSec4K)
		}
		tps, pages = append(tps, s), append(pages, ps)
	}
	t := figures("OLTP read-write transactions per second (p95 latency ms)", capHeader(doc)...)
	for _, l := range cats {
		row := []string{l}
		for _, e := range doc.Engines {
			st := e.step(l)
			switch {
			case st == nil:
				row = append(row, "–")
			case st.Error != "":
				row = append(row, "failed")
			default:
				row = append(row, fmt.Sprintf("%s (%s)", num(st.TPS), num(st.P95MS)))
			}
		}
		t.Rows = append(t.Rows, document.Row(row...))
	}
	var charts []document.Figure
	for _, c := range []struct {
		title, y string
		s        []document.BarSeries
	}{{"OLTP read-write throughput by bandwidth cap", "transactions/s", tps}, {"4 KB pages requested per second by bandwidth cap", "4 KB pages/s", pages}} {
		fig, err := barChart(c.title, c.title, c.y, cats, c.s, true)
		if err != nil {
			return nil, nil, err
		}
		charts = append(charts, fig...)
	}
	return &document.Section{Heading: "Throughput against bandwidth", Tables: []*document.Table{t}}, charts, nil
}

// crossoverSection says where the engines' throughputs cross and where each stopped gaining
// from more bandwidth.
func crossoverSection(doc *Bandwidth) *document.Section {
	s := &document.Section{Heading: "Crossover"}
	for _, c := range doc.Crossovers {
		s.Bullets = append(s.Bullets, c.Statement)
	}
	for _, e := range doc.Engines {
		switch {
		case e.Knee == "":
		case len(e.Steps) > 0 && e.Knee == e.Steps[len(e.Steps)-1].Limit:
			s.Bullets = append(s.Bullets, fmt.Sprintf("%s got 90%% of its throughput at the highest limit only at that limit (%s): every lower cap cost it more than 10%%.", engineName(e.Kind), e.Knee))
		default:
			s.Bullets = append(s.Bullets, fmt.Sprintf("%s got 90%% of its throughput at the highest limit from a cap of %s on: more bandwidth than that gained it little.", engineName(e.Kind), e.Knee))
		}
	}
	if len(s.Bullets) == 0 {
		s.Paras = []string{"Not enough steps were measured on two engines to compare them."}
	}
	return s
}

// stepsSection is one table per engine with every step's figures and the proof that its cap held.
func stepsSection(doc *Bandwidth) *document.Section {
	s := &document.Section{Heading: "Every step"}
	for _, e := range doc.Engines {
		t := figures(fmt.Sprintf("%s (data %s MiB, loaded uncapped in %s s)", engineName(e.Kind), mib(e.DataBytes), num(e.LoadSeconds)),
			"Cap", "Proof: O_DIRECT write / read", "TPS", "Latency avg / p95 ms", "Pages requested/s, 4 KB", "Read from storage/s, 4 KB",
			"Device read MB/s avg (busiest 5 s)", "Device write MB/s avg (busiest 5 s)", "Within cap", "Server read MB/s (OS)")
		for _, st := range e.Steps {
			t.Rows = append(t.Rows, document.Row(stepRow(st)...))
		}
		s.Tables = append(s.Tables, t)
		if e.Error != "" {
			s.Paras = append(s.Paras, fmt.Sprintf("%s did not finish: %s", engineName(e.Kind), e.Error))
		}
	}
	return s
}

func stepRow(st Step) []string {
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
	return row
}

// q18Section is TPC-H Q18's time at every cap, per engine: the published analysis's second figure.
func q18Section(doc *Bandwidth) (*document.Section, []document.Figure, error) {
	cats := doc.Config.Limits
	sec := &document.Section{Heading: "TPC-H Q18", Paras: []string{doc.TPCHQ18}}
	at := func(e BandwidthEngine, l string) (ExtraResult, bool) {
		st := e.step(l)
		if st == nil {
			return ExtraResult{}, false
		}
		r, ok := st.Extra[q18Name]
		return r, ok
	}
	t := figures("TPC-H Q18 seconds (device read MB/s while it ran)", capHeader(doc)...)
	// Failures (not loaded, timed out) are shown as well as times: the paragraph above says Q18
	// was meant to run.
	var series []document.BarSeries
	timed, reported := false, false
	for _, e := range doc.Engines {
		s := document.BarSeries{Name: engineName(e.Kind), Color: colorFor(e.Kind, 0)}
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
		return sec, nil, nil
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
		t.Rows = append(t.Rows, document.Row(row...))
	}
	sec.Tables = []*document.Table{t}
	if !timed {
		return sec, nil, nil
	}
	charts, err := barChart("TPC-H Q18 time by bandwidth cap (lower is better)", "TPC-H Q18 time by bandwidth cap", "seconds", cats, series, true)
	return sec, charts, err
}

func serverMemory(bytes int64) string {
	if bytes <= 0 {
		return "not capped: the OS page cache may hold the data (PostgreSQL reads through it; InnoDB, with O_DIRECT, does not)"
	}
	return fmt.Sprintf("%d MiB per server, its page cache included (its cgroup's memory limit)", bytes>>20)
}
