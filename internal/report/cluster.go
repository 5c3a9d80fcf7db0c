package report

import (
	"fmt"
	"html/template"
	"strings"

	"github.com/fairbench/fairbench/internal/document"
	"github.com/fairbench/fairbench/internal/result"
)

// replFigure is one replication figure of a group: the median over its runs that have it.
func replFigure(f func(r *result.Replication, txns int64) (float64, bool)) func(g *group) (float64, bool) {
	return func(g *group) (float64, bool) {
		var vals []float64
		for _, r := range g.Used {
			if r.Server == nil || r.Server.Replication == nil {
				continue
			}
			if v, ok := f(r.Server.Replication, r.Transactions); ok {
				vals = append(vals, v)
			}
		}
		if len(vals) == 0 {
			return 0, false
		}
		return median(vals), true
	}
}

func intFig(get func(r *result.Replication) *int64, scale float64) func(*result.Replication, int64) (float64, bool) {
	return func(r *result.Replication, _ int64) (float64, bool) {
		if p := get(r); p != nil {
			return float64(*p) * scale, true
		}
		return 0, false
	}
}

func floatFig(get func(r *result.Replication) *float64, scale float64) func(*result.Replication, int64) (float64, bool) {
	return func(r *result.Replication, _ int64) (float64, bool) {
		if p := get(r); p != nil {
			return *p * scale, true
		}
		return 0, false
	}
}

// perThousandTxn is a galera count per 1,000 committed transactions.
func perThousandTxn(get func(r *result.Replication) *int64) func(*result.Replication, int64) (float64, bool) {
	return func(r *result.Replication, txns int64) (float64, bool) {
		if p := get(r); p != nil && txns > 0 {
			return float64(*p) * 1000 / float64(txns), true
		}
		return 0, false
	}
}

func fmtCount(v float64) string { return fmtInt(int64(v + 0.5)) }

var clusterRows = []metricRow{
	{Name: "nodes", NoBest: true, Format: fmtCount, Value: func(g *group) (float64, bool) {
		if g.Rep == nil || g.Rep.Server == nil || len(g.Rep.Server.Nodes) == 0 {
			return 0, false
		}
		return float64(len(g.Rep.Server.Nodes)), true
	}},
	{Name: "certification failures", Format: fmtCount, Value: replFigure(intFig(func(r *result.Replication) *int64 { return r.CertFailures }, 1))},
	{Name: "· per 1,000 txn", Format: fmtSmart, Value: replFigure(perThousandTxn(func(r *result.Replication) *int64 { return r.CertFailures }))},
	{Name: "brute-force aborts", Format: fmtCount, Value: replFigure(intFig(func(r *result.Replication) *int64 { return r.BFAborts }, 1))},
	{Name: "flow control paused %", Format: func(v float64) string { return document.Fixed(v, 2) }, Value: replFigure(floatFig(func(r *result.Replication) *float64 { return r.FlowControlPaused }, 100))},
	{Name: "receive queue, most (write sets)", Format: fmtCount, Value: replFigure(intFig(func(r *result.Replication) *int64 { return r.RecvQueueMax }, 1))},
	{Name: "commit lag, most (write sets)", Format: fmtCount, Value: replFigure(intFig(func(r *result.Replication) *int64 { return r.CommitLagMax }, 1))},
	{Name: "cluster size, least", NoBest: true, Format: fmtCount, Value: replFigure(intFig(func(r *result.Replication) *int64 { return r.ClusterSizeMin }, 1))},
	{Name: "replay lag s, most", Format: fmtLagS, Value: replFigure(floatFig(func(r *result.Replication) *float64 { return r.ReplayLagSMax }, 1))},
	{Name: "replay lag s, mean", Format: fmtLagS, Value: replFigure(floatFig(func(r *result.Replication) *float64 { return r.ReplayLagSAvg }, 1))},
	{Name: "replay lag KB, most", Format: fmtSmart, Value: replFigure(intFig(func(r *result.Replication) *int64 { return r.ReplayLagBytesMax }, 1.0/1024))},
	{Name: "replay lag KB, mean", Format: fmtSmart, Value: replFigure(floatFig(func(r *result.Replication) *float64 { return r.ReplayLagBytesAvg }, 1.0/1024))},
	{Name: "write lag s, most", Format: fmtLagS, Value: replFigure(floatFig(func(r *result.Replication) *float64 { return r.WriteLagSMax }, 1))},
	{Name: "flush lag s, most", Format: fmtLagS, Value: replFigure(floatFig(func(r *result.Replication) *float64 { return r.FlushLagSMax }, 1))},
}

// fmtLagS shows a replication lag in seconds to the millisecond: most lags on loopback are a few.
func fmtLagS(v float64) string { return document.Fixed(v, 3) }

// clusterSection shows what replication cost the clustered engines, beside the single servers'
// empty columns, and each node's own figures. Nil when no run was of a cluster.
func (m *model) clusterSection() *document.Section {
	h, num := m.engineHeader("Workload", "Metric")
	num[0], num[1] = false, false
	t := &document.Table{Caption: "Replication over the measured run", Header: h, Numeric: num}
	for _, w := range m.Workloads {
		t.Rows = append(t.Rows, m.blockRows(w+", "+threadsText(m.Headline[w]), m.headlineGroups(w), clusterRows, false)...)
	}
	if len(t.Rows) == 0 {
		return nil
	}
	t.Foot = []string{
		"Galera: certification failures and brute-force aborts are transactions that lost to a conflicting write set from another node, summed over the nodes (the client sees a deadlock and retries); flow control paused is the most any node's replication was paused, as a share of the measured time; receive queue is the most write sets a node held unapplied at a sample; commit lag is the most write sets a node had committed fewer than the most advanced one (wsrep_last_committed, nodes read at once each interval).",
		"PostgreSQL streaming: write, flush and replay lag from the leader's pg_stat_replication, and replay lag in bytes as pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn), over every replica and interval sample. Lower is better in every row; — means the engine has no such figure.",
	}
	s := &document.Section{ID: "cluster", Heading: "Clusters: replication and nodes", Tables: []*document.Table{t}, Paras: m.routingNotes()}
	if nt := m.nodeTable(); nt != nil {
		s.Tables = append(s.Tables, nt)
	}
	s.Figures = m.clusterCharts(&s.Paras)
	return s
}

// nodeTable has one row per node of each clustered engine's headline run of each workload.
func (m *model) nodeTable() *document.Table {
	t := &document.Table{
		Caption: "Each node's own figures",
		Header:  []string{"Engine", "Workload", "Node", "Role", "CPU %", "memory under load MB", "disk write MB", "WAL/redo KB per txn", "cert. failures", "BF aborts", "flow control paused %", "replay lag s, most", "replay lag KB, most", "note"},
		Numeric: []bool{false, false, false, false, true, true, true, true, true, true, true, true, true, false},
	}
	for _, w := range m.Workloads {
		for _, g := range m.headlineGroups(w) {
			if g == nil || g.Rep == nil || g.Rep.Server == nil || len(g.Rep.Server.Nodes) == 0 {
				continue
			}
			for i, n := range g.Rep.Server.Nodes {
				t.Rows = append(t.Rows, nodeRow(g, i, n))
			}
		}
	}
	if len(t.Rows) == 0 {
		return nil
	}
	t.Foot = []string{"Each node is measured as a single server is: its own cgroup, its engine counters over a connection to it alone; the Server side section's figures for a cluster are the sum of its nodes. Role is the node's at the run's start, and → the one it ended with where a failover changed it. Replay lag is the leader's view of each replica."}
	return t
}

// nodeRow is one node's row: host figures and counters from the node's totals, replication from
// its interval samples.
func nodeRow(g *group, i int, n result.Node) []document.Cell {
	dash := document.Cell{Text: "—"}
	opt := func(v float64, ok bool, f func(float64) string) document.Cell {
		if !ok {
			return dash
		}
		return document.Cell{Text: f(v), Incomplete: g.Incomplete}
	}
	s := nodeSamples(g.Rep.Intervals, n.Name)
	ctr := func(k string) (float64, bool) { v, ok := n.Counters[k]; return float64(v), ok }
	fc, fcOK := ctr("wsrep_flow_control_paused_ns")
	if fcOK && g.Rep.DurationS > 0 {
		fc = fc / (g.Rep.DurationS * 1e9) * 100
	}
	cert, certOK := ctr("wsrep_local_cert_failures")
	bf, bfOK := ctr("wsrep_local_bf_aborts")
	redo, redoOK := n.PerTxn["wal_bytes"]
	role := n.Role
	if s.lastRole != "" && s.lastRole != role {
		role += " → " + s.lastRole
	}
	return []document.Cell{
		{Text: g.V.Name, Head: true}, {Text: g.Workload}, {Text: n.Name + " (" + n.Addr + ")"}, {Text: orDash(role)},
		opt(n.CPUPct, n.CPUSource != "", func(v float64) string { return document.Fixed(v, 1) }),
		opt(n.MemLoadMB, n.MemLoadMB > 0, fmtSmart),
		opt(float64(n.DiskWriteBytes)/(1<<20), deviceLevel(&n.Server), fmtSmart),
		opt(redo/1024, redoOK, fmtSmart),
		opt(cert, certOK, fmtCount), opt(bf, bfOK, fmtCount),
		opt(fc, fcOK && g.Rep.DurationS > 0, func(v float64) string { return document.Fixed(v, 2) }),
		opt(s.replayLagMax, s.hasLag, fmtLagS), opt(s.replayBytesMax/1024, s.hasBytes, fmtSmart),
		{Text: nodeNote(n, s.down)},
	}
}

func nodeNote(n result.Node, down int) string {
	var notes []string
	if down > 0 {
		notes = append(notes, fmt.Sprintf("did not answer %d interval samples", down))
	}
	if n.Error != "" {
		notes = append(notes, n.Error)
	}
	return strings.Join(notes, "; ")
}

// nodeSummary is what one node's interval samples add up to.
type nodeSummary struct {
	lastRole                     string
	down                         int
	replayLagMax, replayBytesMax float64
	hasLag, hasBytes             bool
}

func nodeSamples(ivs []result.Interval, name string) nodeSummary {
	var s nodeSummary
	for _, iv := range ivs {
		for _, n := range iv.Nodes {
			if n.Node != name {
				continue
			}
			if n.Down {
				s.down++
				continue
			}
			s.lastRole = n.Role
			if n.ReplayLagS != nil {
				s.replayLagMax, s.hasLag = max(s.replayLagMax, *n.ReplayLagS), true
			}
			if n.ReplayLagBytes != nil {
				s.replayBytesMax, s.hasBytes = max(s.replayBytesMax, float64(*n.ReplayLagBytes)), true
			}
		}
	}
	return s
}

// nodeChart is one per-interval replication figure of every clustered engine's nodes, a line per
// node; f's false leaves the sample out.
type nodeChart struct {
	title, yName string
	f            func(n result.NodeInterval) (float64, bool)
}

var nodeCharts = []nodeChart{
	{"Replication lag (replay, s) per replica", "replay lag s", func(n result.NodeInterval) (float64, bool) { return derefF(n.ReplayLagS, 1) }},
	{"Replication lag (WAL not replayed, KB) per replica", "replay lag KB", func(n result.NodeInterval) (float64, bool) { return derefI(n.ReplayLagBytes, 1.0/1024) }},
	{"Galera receive queue per node", "write sets", func(n result.NodeInterval) (float64, bool) { return derefI(n.RecvQueue, 1) }},
	{"Galera commit lag per node", "write sets behind", func(n result.NodeInterval) (float64, bool) { return derefI(n.CommitLag, 1) }},
	{"Galera certification failures per interval", "failures", func(n result.NodeInterval) (float64, bool) { return derefI(n.CertFailures, 1) }},
	{"Galera flow control paused per interval", "% paused", func(n result.NodeInterval) (float64, bool) { return derefF(n.FlowControlPaused, 100) }},
	{"Server CPU % per node", "CPU %", func(n result.NodeInterval) (float64, bool) { return n.CPUPct, !n.Down }},
}

func derefF(p *float64, scale float64) (float64, bool) {
	if p == nil {
		return 0, false
	}
	return *p * scale, true
}

func derefI(p *int64, scale float64) (float64, bool) {
	if p == nil {
		return 0, false
	}
	return float64(*p) * scale, true
}

// clusterCharts draws the per-node interval charts of each workload with a clustered engine.
func (m *model) clusterCharts(notes *[]string) []document.FigGroup {
	var out []document.FigGroup
	for _, w := range m.Workloads {
		fg := document.FigGroup{Title: w + ", " + threadsText(m.Headline[w]) + ": per node"}
		for _, c := range nodeCharts {
			svg, err := m.nodeLineChart(m.headlineGroups(w), c)
			if err != nil {
				*notes = append(*notes, fmt.Sprintf("%s: %s: chart not drawn: %v", fg.Title, c.title, err))
				continue
			}
			if svg != "" {
				fg.Figures = append(fg.Figures, document.Figure{Title: c.title, SVG: svg})
			}
		}
		if len(fg.Figures) > 0 {
			out = append(out, fg)
		}
	}
	return out
}

func (m *model) nodeLineChart(gs []*group, c nodeChart) (template.HTML, error) {
	spec := document.LineChart{Title: c.title, XName: "seconds", YName: c.yName, XFromZero: true}
	for _, g := range gs {
		if g == nil || g.Rep == nil || g.Rep.Server == nil {
			continue
		}
		for _, n := range g.Rep.Server.Nodes {
			// One colour per line of the chart (two clusters' nodes share it), by the
			// line's place: the engines' own colours would give every node of one the same.
			s := document.Series{Name: g.V.Name + " " + n.Name, Color: document.Palette[len(spec.Series)%len(document.Palette)]}
			for _, iv := range g.Rep.Intervals {
				for _, ni := range iv.Nodes {
					if y, ok := c.f(ni); ok && ni.Node == n.Name {
						s.X, s.Y = append(s.X, iv.T), append(s.Y, y)
					}
				}
			}
			if len(s.X) > 0 {
				spec.Series = append(spec.Series, s)
			}
		}
	}
	return spec.SVG()
}

// aggregates says how each clustered engine's server figures were formed ("galera: sum of 3
// nodes"), "" when no run was of a cluster.
func (m *model) aggregates() string {
	var parts []string
	for _, v := range m.Variants {
		for _, r := range m.Results {
			if r.Server != nil && r.Server.Aggregate != "" && m.variantOf(r) == v {
				parts = append(parts, v.Name+": "+r.Server.Aggregate)
				break
			}
		}
	}
	return strings.Join(parts, "; ")
}

// routingNotes say where each postgres-ha headline run's clients ran: on the leader, or on the
// replicas (compare --read-replicas, read-only workloads only).
func (m *model) routingNotes() []string {
	var out []string
	for _, w := range m.Workloads {
		for _, g := range m.headlineGroups(w) {
			if g == nil || g.Rep == nil || g.Rep.Routing == "" {
				continue
			}
			where := "the leader"
			if g.Rep.Routing == "replicas" {
				where = "the replicas (--read-replicas: target_session_attrs=prefer-standby, the leader only when no replica answers)"
			}
			out = append(out, fmt.Sprintf("%s, %s: the clients ran on %s.", m.variantOf(g.Rep).Name, w, where))
		}
	}
	return out
}
