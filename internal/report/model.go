package report

import (
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/fairbench/fairbench/internal/document"
	"github.com/fairbench/fairbench/internal/interval"
	"github.com/fairbench/fairbench/internal/result"
)

// variant is one column of the report: an engine, told apart from other runs of the same engine
// by a label when the label means more than the thread count.
type variant struct {
	Kind   string
	Engine string // engine and release, "postgres@17": two releases of one kind are two variants
	// Alias is the user's name for a server of theirs or a build (result.Engine.Alias): the
	// column is named by it, and no upgrade row joins it to another.
	Alias string
	// Build is the directory a build was started from; AsConfigured a server run as its owner
	// configured it (compare --targets).
	Build        string
	AsConfigured bool
	Label        string
	Name         string // what the reader sees: "mysql" or "mysql (binlog-on)"
	Version      string
	Index        int    // position in the report's engine order
	Color        string // in every chart and swatch: its engine's own (document.Colors)
}

// group is every run that shares variant, workload and thread count: the repeats of one
// measurement, summarised by medians.
type group struct {
	V        *variant
	Workload string
	Threads  int
	Runs     []*result.Result
	// Used are the runs the figures come from: the complete runs, or all runs when none completed.
	Used           []*result.Result
	Incomplete     bool // no run completed: figures shown for information, never ranked
	IncompleteRuns int  // runs left out of the figures because they did not complete

	TPS, QPS       float64
	Lat            result.Latency
	Errors         int64 // totals over Used, so a single bad repeat is not hidden by a median
	Retries        int64
	MinTPS, MaxTPS float64
	Spread         float64 // (max-min)/median TPS; 0 with a single run
	// Samples are the used runs' figures (TPS, or saturation TPS for ramps) in the order the runs
	// started; Rounds their comparison rounds (nil where not recorded). Two engines' figures are
	// paired by round (paired).
	Samples []float64
	Rounds  []int
	Rep     *result.Result
	// Ramp is Rep's ramp, for groups of ramp runs; nil otherwise.
	Ramp *result.Ramp

	Server *serverAgg
}

type serverAgg struct {
	CPUPct                        optFloat
	DataSizeMB, ClientCPUUsPerTxn optFloat
	// Memory is the cgroup's charge (or, where a server had none, the PSS sum under load); never
	// an RSS sum, which counts PostgreSQL's shared buffers once per backend.
	MemIdleMB, MemLoadMB, MemAnonLoadMB, MemCacheLoadMB optFloat
	// Disk figures are at the device only (cgroup or node_exporter), never /proc/PID/io's.
	DiskReadMB, DiskWriteMB, DiskReadOps, DiskWriteOps optFloat
	DiskWriteKBPerTxn, DiskWriteOpsPerTxn              optFloat
	DataDirMB                                          optFloat
	MemorySources, DiskSources                         []string // distinct kinds, for the table's foot
	PerTxn                                             map[string]float64
}

// optFloat tells "not measured" from zero, which matters for server metrics that only local
// servers have.
type optFloat struct {
	V  float64
	OK bool
}

type groupKey struct {
	Engine, Label, Workload string // Engine: "postgres@17"
	Threads                 int
}

type model struct {
	Results  []*result.Result
	Env      *result.Environment
	Variants []*variant
	// rule is how every pick's interval is drawn: at a fixed count of rounds, or at the look of
	// the sequential plan that compare's rounds until decided reached (environment.json).
	rule interval.Rule
	// Workloads are those with fixed-thread runs, which the Results, Charts, Scalability and
	// Server sections compare; RampWorkloads those with ramp runs, which only the Saturation
	// section and their own decision rows show; AllWorkloads these and TPC-H, in report order.
	Workloads     []string
	RampWorkloads []string
	// CapacityWorkloads are those with a capacity search (a step with an objective).
	CapacityWorkloads []string
	AllWorkloads      []string
	groups            map[groupKey]*group
	// rampGroups holds the ramp runs of one variant and workload (Threads is 0 in the key): a
	// ramp measures many thread counts in one run, so it never shares a group with fixed runs.
	rampGroups map[groupKey]*group
	// capacityGroups holds the capacity searches of one variant and workload (Threads 0 in the
	// key): their figure is the capacity, never a throughput.
	capacityGroups map[groupKey]*group
	// Threads lists the thread counts measured for each workload, ascending.
	Threads map[string][]int
	// TPCHSets are the TPC-H comparisons, one per workload, test mode and scale factor; their
	// runs are in no other group.
	TPCHSets   []*tpchSet
	tpchGroups map[tpchKey]*tpchGroup
	// Headline is the thread count a workload's main table and decision use: the largest count
	// every engine ran, so columns compare like with like.
	Headline map[string]int
	// effLabel maps a result to the label that identifies its variant.
	effLabel map[*result.Result]string
	// Explain holds the compare --explain runs (a knob flipped): only the knob section shows
	// them, so no other figure mixes them with the comparison's own runs.
	Explain []*result.Result
	parity  *parityAudit
}

// Clusters sit beside the single server they are made of.
var engineOrder = map[string]int{"postgres": 0, "postgres-ha": 1, "mysql": 2, "mariadb": 3, "galera": 4}

func lessKind(a, b string) bool {
	ra, oka := engineOrder[a]
	rb, okb := engineOrder[b]
	switch {
	case oka && okb:
		return ra < rb
	case oka != okb:
		return oka
	}
	return a < b
}

// nameVariants names each column: the engine kind, or, where the report holds two releases of
// one kind (an upgrade study), engine@release in every column, so that no column leaves its
// release to be guessed; plus the label that tells runs apart.
func nameVariants(vs []*variant) {
	releases := map[string]map[string]bool{}
	upgrade := false
	for _, v := range vs {
		if v.Alias != "" {
			continue
		}
		if releases[v.Kind] == nil {
			releases[v.Kind] = map[string]bool{}
		}
		releases[v.Kind][v.Engine] = true
		upgrade = upgrade || len(releases[v.Kind]) > 1
	}
	for _, v := range vs {
		v.Name = v.Kind
		if upgrade || v.Alias != "" {
			v.Name = v.Engine
		}
		if v.Label != "" {
			v.Name += " (" + v.Label + ")"
		}
	}
}

// olderRelease orders two names of one engine kind ("postgres@15" < "postgres@18") by release,
// numerically, so an upgrade reads left to right.
func olderRelease(a, b string) bool {
	_, ra, _ := strings.Cut(a, "@")
	_, rb, _ := strings.Cut(b, "@")
	as, bs := strings.Split(ra, "."), strings.Split(rb, ".")
	for i := 0; i < len(as) && i < len(bs); i++ {
		x, _ := strconv.Atoi(as[i])
		y, _ := strconv.Atoi(bs[i])
		if x != y {
			return x < y
		}
	}
	if len(as) != len(bs) {
		return len(as) < len(bs)
	}
	return a < b
}

var workloadOrder = map[string]int{
	"oltp_read_write": 0, "oltp_read_only": 1, "oltp_point_select": 2, "oltp_write_only": 3, "oltp_insert": 4,
}

func lessWorkload(a, b string) bool {
	// A suite step's rows ("payments (transfer=routine)") follow their workload's.
	ba, _, _ := strings.Cut(a, " (")
	bb, _, _ := strings.Cut(b, " (")
	if ba == bb {
		return a < b
	}
	ra, oka := workloadOrder[ba]
	rb, okb := workloadOrder[bb]
	switch {
	case oka && okb:
		return ra < rb
	case oka != okb:
		return oka
	}
	return ba < bb
}

// RuleOf is the rule the comparison's rounds followed: sequential where compare added rounds
// until decided (whether or not it needed any), fixed otherwise.
func RuleOf(env *result.Environment) interval.Rule {
	if env != nil && env.Rounds != nil && env.Rounds.Rule == "sequential" {
		return interval.Sequential(env.Rounds.MinRounds)
	}
	return interval.Fixed
}

func newModel(in *Input) *model {
	m := &model{
		Env:            in.Environment,
		rule:           RuleOf(in.Environment),
		groups:         map[groupKey]*group{},
		rampGroups:     map[groupKey]*group{},
		capacityGroups: map[groupKey]*group{},
		Threads:        map[string][]int{},
		Headline:       map[string]int{},
		effLabel:       map[*result.Result]string{},
	}
	for _, r := range in.Results {
		if r != nil {
			// Results read from files have their facets; ones built in memory get them here.
			result.FillFacets(r)
		}
		switch {
		case r == nil:
		case len(r.Flipped) > 0:
			m.Explain = append(m.Explain, r)
		default:
			m.Results = append(m.Results, r)
		}
	}
	sort.SliceStable(m.Results, func(i, j int) bool { return lessRun(m.Results[i], m.Results[j]) })
	m.assignLabels()
	seen := m.groupRuns()
	m.orderVariants(seen.variants)
	m.Workloads = sortedWorkloads(seen.workloads)
	m.RampWorkloads = sortedWorkloads(seen.rampWorkloads)
	m.AllWorkloads = sortedWorkloads(seen.allWorkloads)
	for w, ts := range seen.threads {
		m.Threads[w] = sortedKeys(ts)
	}
	for _, g := range m.groups {
		g.summarise()
	}
	for _, g := range m.rampGroups {
		g.summariseRamp()
	}
	for _, g := range m.capacityGroups {
		g.summariseCapacity()
	}
	m.CapacityWorkloads = sortedWorkloads(seen.capacityWorkloads)
	for _, w := range m.Workloads {
		m.Headline[w] = m.headline(w)
	}
	m.buildTPCHSets()
	return m
}

// runsSeen is what groupRuns found among the results: the variants, and the workloads and
// thread counts that fixed-thread runs, ramps and TPC-H runs measured.
type runsSeen struct {
	variants                                                  map[[2]string]*variant
	workloads, rampWorkloads, capacityWorkloads, allWorkloads map[string]bool
	threads                                                   map[string]map[int]bool
}

// groupRuns puts each run in its variant and in its group: repeats of one variant, workload
// and thread count; ramps by variant and workload; TPC-H runs in their sets.
func (m *model) groupRuns() runsSeen {
	seen := runsSeen{variants: map[[2]string]*variant{}, workloads: map[string]bool{}, rampWorkloads: map[string]bool{}, capacityWorkloads: map[string]bool{},
		allWorkloads: map[string]bool{}, threads: map[string]map[int]bool{}}
	for _, r := range m.Results {
		vk := [2]string{r.Engine.Name(), m.effLabel[r]}
		v := seen.variants[vk]
		if v == nil {
			v = &variant{Kind: r.Engine.Kind, Engine: vk[0], Label: vk[1], Alias: r.Engine.Alias, Build: r.Engine.Build, AsConfigured: r.Engine.AsConfigured}
			seen.variants[vk] = v
		}
		if v.Version == "" {
			v.Version = r.Engine.Version
		}
		w := r.WorkloadID()
		seen.allWorkloads[w] = true
		switch {
		case r.TPCH != nil:
			m.addTPCH(v, r)
		case r.Capacity != nil:
			seen.capacityWorkloads[w] = true
			addRun(m.capacityGroups, groupKey{vk[0], vk[1], w, 0}, &group{V: v, Workload: w}, r)
		case r.Ramp != nil:
			seen.rampWorkloads[w] = true
			addRun(m.rampGroups, groupKey{vk[0], vk[1], w, 0}, &group{V: v, Workload: w}, r)
		default:
			seen.workloads[w] = true
			if seen.threads[w] == nil {
				seen.threads[w] = map[int]bool{}
			}
			seen.threads[w][r.Threads] = true
			addRun(m.groups, groupKey{vk[0], vk[1], w, r.Threads}, &group{V: v, Workload: w, Threads: r.Threads}, r)
		}
	}
	return seen
}

// addRun adds r to the group under k, which starts as fresh when there is none yet.
func addRun(groups map[groupKey]*group, k groupKey, fresh *group, r *result.Result) {
	g := groups[k]
	if g == nil {
		g = fresh
		groups[k] = g
	}
	g.Runs = append(g.Runs, r)
}

// orderVariants names the variants, puts them in the report's engine order (kind, then older
// release first, then label) and gives each its colour.
func (m *model) orderVariants(variants map[[2]string]*variant) {
	for _, v := range variants {
		m.Variants = append(m.Variants, v)
	}
	nameVariants(m.Variants)
	sort.Slice(m.Variants, func(i, j int) bool {
		a, b := m.Variants[i], m.Variants[j]
		if a.Kind != b.Kind {
			return lessKind(a.Kind, b.Kind)
		}
		if a.Engine != b.Engine {
			return olderRelease(a.Engine, b.Engine)
		}
		return a.Label < b.Label
	})
	kinds := make([]string, len(m.Variants))
	for i, v := range m.Variants {
		v.Index = i
		kinds[i] = v.Kind
	}
	for i, c := range document.Colors(kinds) {
		m.Variants[i].Color = c
	}
}

func sortedWorkloads(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for w := range set {
		out = append(out, w)
	}
	sort.Slice(out, func(i, j int) bool { return lessWorkload(out[i], out[j]) })
	return out
}

func lessRun(a, b *result.Result) bool {
	if a.Engine.Kind != b.Engine.Kind {
		return lessKind(a.Engine.Kind, b.Engine.Kind)
	}
	if an, bn := a.Engine.Name(), b.Engine.Name(); an != bn {
		return olderRelease(an, bn)
	}
	if a.Workload.Name != b.Workload.Name {
		return lessWorkload(a.Workload.Name, b.Workload.Name)
	}
	// A ramp follows the fixed runs of its engine and workload.
	if (a.Ramp != nil) != (b.Ramp != nil) {
		return b.Ramp != nil
	}
	if a.Threads != b.Threads {
		return a.Threads < b.Threads
	}
	if a.Label != b.Label {
		return a.Label < b.Label
	}
	return a.StartedAt.Before(b.StartedAt)
}

// assignLabels decides which labels name a variant. A label that maps one to one onto thread
// counts within an engine and workload only names a sweep step, which the thread count already
// says; keeping it would split one engine into a column per step. Ramp runs are left out: their
// thread count is only the last step's, and their label says "ramp", which names no variant.
func (m *model) assignLabels() {
	type ew struct{ kind, workload string }
	byEW := map[ew][]*result.Result{}
	for _, r := range m.Results {
		if r.Ramp != nil {
			m.effLabel[r] = rampLabel(r.Label)
			continue
		}
		k := ew{r.Engine.Name(), r.WorkloadID()}
		byEW[k] = append(byEW[k], r)
	}
	for _, runs := range byEW {
		labelThreads := map[string]map[int]bool{}
		threadLabels := map[int]map[string]bool{}
		for _, r := range runs {
			if labelThreads[r.Label] == nil {
				labelThreads[r.Label] = map[int]bool{}
			}
			labelThreads[r.Label][r.Threads] = true
			if threadLabels[r.Threads] == nil {
				threadLabels[r.Threads] = map[string]bool{}
			}
			threadLabels[r.Threads][r.Label] = true
		}
		stepNames := true
		for _, ts := range labelThreads {
			if len(ts) != 1 {
				stepNames = false
			}
		}
		for _, ls := range threadLabels {
			if len(ls) != 1 {
				stepNames = false
			}
		}
		for _, r := range runs {
			if stepNames {
				m.effLabel[r] = ""
			} else {
				m.effLabel[r] = r.Label
			}
		}
	}
}

// rampLabel is the variant label of a ramp run: the plain "ramp" label belongs to the engine's
// own column; any other label names a variant as it does for fixed runs.
func rampLabel(label string) string {
	if label == "ramp" {
		return ""
	}
	return label
}

func (m *model) group(v *variant, workload string, threads int) *group {
	return m.groups[groupKey{v.Engine, v.Label, workload, threads}]
}

func (m *model) rampGroup(v *variant, workload string) *group {
	return m.rampGroups[groupKey{v.Engine, v.Label, workload, 0}]
}

// rampGroupsFor lists the ramp groups of a workload, in report order.
func (m *model) rampGroupsFor(workload string) []*group {
	var out []*group
	for _, v := range m.Variants {
		if g := m.rampGroup(v, workload); g != nil {
			out = append(out, g)
		}
	}
	return out
}

// variantsFor lists the variants that ran a workload, in report order.
func (m *model) variantsFor(workload string) []*variant {
	var out []*variant
	for _, v := range m.Variants {
		for _, t := range m.Threads[workload] {
			if m.group(v, workload, t) != nil {
				out = append(out, v)
				break
			}
		}
	}
	return out
}

func (m *model) headline(workload string) int {
	ts := m.Threads[workload]
	for i := len(ts) - 1; i >= 0; i-- {
		all := true
		for _, v := range m.variantsFor(workload) {
			if m.group(v, workload, ts[i]) == nil {
				all = false
				break
			}
		}
		if all {
			return ts[i]
		}
	}
	return ts[len(ts)-1]
}

// sweep reports whether some engine ran the workload at more than one thread count.
func (m *model) sweep(workload string) bool {
	for _, v := range m.variantsFor(workload) {
		n := 0
		for _, t := range m.Threads[workload] {
			if m.group(v, workload, t) != nil {
				n++
			}
		}
		if n > 1 {
			return true
		}
	}
	return false
}

func (m *model) hasRepeats() bool {
	for _, g := range m.groups {
		if len(g.Runs) > 1 {
			return true
		}
	}
	return false
}

// pickUsed chooses the runs a group's figures come from: complete ones that measured enough to
// mean something, and, while two or more such rounds remain, not measured under steal after
// compare's tries (stillStolen). A group with none is shown for information and never ranked.
func (g *group) pickUsed() {
	var stolen int
	for _, r := range g.Runs {
		if r.Complete && r.IsMeaningful() {
			g.Used = append(g.Used, r)
			if stillStolen(r) {
				stolen++
			}
		}
	}
	if stolen > 0 && len(g.Used)-stolen >= 2 {
		g.Used = slices.DeleteFunc(g.Used, stillStolen)
	}
	g.IncompleteRuns = len(g.Runs) - len(g.Used)
	if len(g.Used) == 0 {
		g.Used = g.Runs
		g.Incomplete = true
		g.IncompleteRuns = 0
	}
}

func (g *group) summarise() {
	g.pickUsed()
	pick := func(f func(r *result.Result) float64) float64 {
		vals := make([]float64, len(g.Used))
		for i, r := range g.Used {
			vals[i] = f(r)
		}
		return median(vals)
	}
	g.TPS = pick(func(r *result.Result) float64 { return r.TPS })
	g.QPS = pick(func(r *result.Result) float64 { return r.QPS })
	g.Lat = result.Latency{
		Avg:  pick(func(r *result.Result) float64 { return r.LatencyMS.Avg }),
		P50:  pick(func(r *result.Result) float64 { return r.LatencyMS.P50 }),
		P90:  pick(func(r *result.Result) float64 { return r.LatencyMS.P90 }),
		P95:  pick(func(r *result.Result) float64 { return r.LatencyMS.P95 }),
		P99:  pick(func(r *result.Result) float64 { return r.LatencyMS.P99 }),
		P999: pick(func(r *result.Result) float64 { return r.LatencyMS.P999 }),
		Max:  pick(func(r *result.Result) float64 { return r.LatencyMS.Max }),
	}
	g.MinTPS, g.MaxTPS = math.Inf(1), math.Inf(-1)
	for _, r := range g.Used {
		g.Errors += r.Errors
		g.Retries += r.Retries
		g.MinTPS = math.Min(g.MinTPS, r.TPS)
		g.MaxTPS = math.Max(g.MaxTPS, r.TPS)
	}
	if g.TPS > 0 {
		g.Spread = (g.MaxTPS - g.MinTPS) / g.TPS
	}
	// The run nearest the median stands for the group in charts over time, where a median of
	// curves would be a curve no run produced.
	for _, r := range g.Used {
		if g.Rep == nil || math.Abs(r.TPS-g.TPS) < math.Abs(g.Rep.TPS-g.TPS) {
			g.Rep = r
		}
	}
	g.Samples, g.Rounds = inStartOrder(g.Used, func(r *result.Result) float64 { return r.TPS }), roundsOf(g.Used)
	g.Server = summariseServer(g.Used)
}

// inStartOrder gives f of each run, the runs taken in the order they started.
// stillStolen says whether the hypervisor stole more than compare's limit from a run's window
// even after compare measured it again (machine.set_aside): its round measures the host's other
// tenants as much as the engine (on this machine steal explained 86% of the insert rounds'
// spread), so its pick leaves it out, as it leaves out a run that failed, and says so; the
// rounds are paired by number, so the other engines' rounds stay as they are.
func stillStolen(r *result.Result) bool {
	m := r.Machine
	return m != nil && len(m.SetAside) > 0 && m.StealPctMean > m.StealLimitPct
}

// roundsOf gives the runs' rounds in the order they started (as inStartOrder gives their
// figures), or nil when any run has none (results from before rounds were recorded, or from
// outside compare): their figures are then paired by position.
func roundsOf(runs []*result.Result) []int {
	rounds := make([]int, 0, len(runs))
	for _, r := range result.ByStart(runs) {
		if r.Round <= 0 {
			return nil
		}
		rounds = append(rounds, r.Round)
	}
	return rounds
}

// paired gives the figures of a and b from the rounds both ran (pairSeries).
func paired(a, b *group) (x, y []float64) {
	return pairSeries(series{vals: a.Samples, rounds: a.Rounds}, series{vals: b.Samples, rounds: b.Rounds})
}

// pairSeries gives the figures of a and b from the rounds both ran, in round order, so that the
// k-th of each come from one round even where one engine lost a round (a run left out of its
// pick) or ran rounds the other did not; by position where either lacks its rounds.
func pairSeries(a, b series) (x, y []float64) {
	if a.rounds == nil || b.rounds == nil {
		return a.vals, b.vals
	}
	for _, m := range result.MatchRounds(a.rounds, b.rounds) {
		x, y = append(x, a.vals[m[0]]), append(y, b.vals[m[1]])
	}
	return x, y
}

func inStartOrder(runs []*result.Result, f func(*result.Result) float64) []float64 {
	sorted := result.ByStart(runs)
	out := make([]float64, len(sorted))
	for i, r := range sorted {
		out[i] = f(r)
	}
	return out
}

// summariseRamp summarises ramp runs by their saturation point: TPS is the median saturation
// throughput, so the decision's tie and noise rules apply to ramps as to fixed runs; Rep is the
// ramp nearest that median, whose steps the tables and charts show; Threads and Lat are those of
// Rep's saturation step.
func (g *group) summariseRamp() {
	g.summariseBy(func(r *result.Result) float64 { return r.Ramp.SaturationTPS })
	g.Ramp = g.Rep.Ramp
	g.Threads = g.Ramp.SaturationThreads
	if st, ok := rampStep(g.Ramp, g.Threads); ok {
		g.Lat = result.Latency{P95: st.P95MS, P99: st.P99MS}
	}
}

// summariseBy summarises runs ranked by one figure of each other than its TPS (a ramp's
// saturation throughput, a search's capacity): TPS is the figure's median, so the decision's tie
// and noise rules apply as for fixed runs; Samples each run's in start order; Rep the run nearest
// the median.
func (g *group) summariseBy(figure func(*result.Result) float64) {
	g.pickUsed()
	vals := make([]float64, len(g.Used))
	for i, r := range g.Used {
		vals[i] = figure(r)
	}
	g.TPS = median(vals)
	g.MinTPS, g.MaxTPS = math.Inf(1), math.Inf(-1)
	for _, r := range g.Used {
		g.Errors += r.Errors
		g.Retries += r.Retries
		g.MinTPS, g.MaxTPS = math.Min(g.MinTPS, figure(r)), math.Max(g.MaxTPS, figure(r))
		if g.Rep == nil || math.Abs(figure(r)-g.TPS) < math.Abs(figure(g.Rep)-g.TPS) {
			g.Rep = r
		}
	}
	if g.TPS > 0 {
		g.Spread = (g.MaxTPS - g.MinTPS) / g.TPS
	}
	g.Samples, g.Rounds = inStartOrder(g.Used, figure), roundsOf(g.Used)
	g.Server = summariseServer(g.Used)
}

// rampStep finds the step of a ramp at a thread count.
func rampStep(rp *result.Ramp, threads int) (result.RampStep, bool) {
	for _, st := range rp.Steps {
		if st.Threads == threads {
			return st, true
		}
	}
	return result.RampStep{}, false
}

// memLoadMB is the memory under load: the cgroup's, or the PSS sum where there was no cgroup.
func memLoadMB(s *result.Server) float64 {
	if s.MemLoadMB > 0 {
		return s.MemLoadMB
	}
	return s.PSSPeakMB
}

// deviceLevel says whether the disk figures were counted at the block device, and whole.
func deviceLevel(s *result.Server) bool { return s.DiskDevice != "" && !s.DiskUndercounted }

// sourceKind shortens a source to what a reader needs ("cgroup v1", "/proc", "node_exporter").
func sourceKind(src string) string {
	switch {
	case src == "":
		return ""
	case strings.HasPrefix(src, "cgroup v"):
		if strings.Contains(src, "(a lower bound") {
			return src[:len("cgroup v1")] + " (a lower bound)"
		}
		return src[:len("cgroup v1")]
	case strings.HasPrefix(src, "block device "):
		return "its own block device (every write)"
	case strings.HasPrefix(src, "/proc"):
		return "/proc"
	case strings.HasPrefix(src, "node_exporter"):
		return "node_exporter (whole host)"
	}
	return src
}

func addSource(list []string, src string) []string {
	k := sourceKind(src)
	if k == "" || slices.Contains(list, k) {
		return list
	}
	return append(list, k)
}

func summariseServer(runs []*result.Result) *serverAgg {
	const mb = 1 << 20
	collect := func(f func(r *result.Result) (float64, bool)) optFloat { return medianOf(runs, f) }
	a := &serverAgg{
		CPUPct:             collect(serverFig(func(s *result.Server) float64 { return s.CPUPct })),
		MemIdleMB:          collect(serverFig(func(s *result.Server) float64 { return s.MemIdleMB })),
		MemLoadMB:          collect(serverFig(memLoadMB)),
		MemAnonLoadMB:      collect(serverFig(func(s *result.Server) float64 { return s.MemAnonLoadMB })),
		MemCacheLoadMB:     collect(serverFig(func(s *result.Server) float64 { return s.MemCacheLoadMB })),
		DiskReadMB:         collect(deviceFig(func(s *result.Server) float64 { return float64(s.DiskReadBytes) / mb })),
		DiskWriteMB:        collect(deviceFig(func(s *result.Server) float64 { return float64(s.DiskWriteBytes) / mb })),
		DiskReadOps:        collect(deviceFig(func(s *result.Server) float64 { return float64(s.DiskReadOps) })),
		DiskWriteOps:       collect(deviceFig(func(s *result.Server) float64 { return float64(s.DiskWriteOps) })),
		DiskWriteKBPerTxn:  collect(deviceFig(func(s *result.Server) float64 { return s.HostPerTxn["disk_write_bytes"] / 1024 })),
		DiskWriteOpsPerTxn: collect(deviceFig(func(s *result.Server) float64 { return s.HostPerTxn["disk_write_ops"] })),
		DataDirMB:          collect(serverFig(func(s *result.Server) float64 { return float64(s.DataDirBytes) / mb })),
		DataSizeMB:         collect(serverFig(func(s *result.Server) float64 { return float64(s.DataSizeBytes) / mb })),
		ClientCPUUsPerTxn: collect(func(r *result.Result) (float64, bool) {
			if r.Transactions <= 0 || r.ClientCPUS <= 0 {
				return 0, false
			}
			return r.ClientCPUS / float64(r.Transactions) * 1e6, true
		}),
		PerTxn: perTxnMedians(runs),
	}
	for _, r := range runs {
		if r.Server != nil {
			a.MemorySources = addSource(a.MemorySources, r.Server.MemorySource)
			a.DiskSources = addSource(a.DiskSources, r.Server.DiskSource)
		}
	}
	return a
}

// medianOf is the median of a figure over the runs that have it.
func medianOf(runs []*result.Result, f func(r *result.Result) (float64, bool)) optFloat {
	var vals []float64
	for _, r := range runs {
		if v, ok := f(r); ok {
			vals = append(vals, v)
		}
	}
	if len(vals) == 0 {
		return optFloat{}
	}
	return optFloat{median(vals), true}
}

// serverFig reads a figure of the run's server; zero means not measured.
func serverFig(f func(s *result.Server) float64) func(r *result.Result) (float64, bool) {
	return func(r *result.Result) (float64, bool) {
		if r.Server == nil {
			return 0, false
		}
		v := f(r.Server)
		return v, v != 0
	}
}

// deviceFig reads a disk figure of the run's server where it was counted at the block device,
// and whole (deviceLevel); zero means not measured.
func deviceFig(f func(s *result.Server) float64) func(r *result.Result) (float64, bool) {
	return func(r *result.Result) (float64, bool) {
		if r.Server == nil || !deviceLevel(r.Server) {
			return 0, false
		}
		v := f(r.Server)
		return v, v != 0
	}
}

// perTxnMedians is the median of each engine counter per transaction over the runs that have
// it; nil when no run has any.
func perTxnMedians(runs []*result.Result) map[string]float64 {
	keys := map[string]bool{}
	for _, r := range runs {
		if r.Server != nil {
			for k := range r.Server.PerTxn {
				keys[k] = true
			}
		}
	}
	if len(keys) == 0 {
		return nil
	}
	out := map[string]float64{}
	for k := range keys {
		var vals []float64
		for _, r := range runs {
			if r.Server == nil {
				continue
			}
			if v, ok := r.Server.PerTxn[k]; ok {
				vals = append(vals, v)
			}
		}
		out[k] = median(vals)
	}
	return out
}

func median(vals []float64) float64 { return interval.Median(vals) }
