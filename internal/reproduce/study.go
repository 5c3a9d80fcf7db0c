// Package reproduce reruns the published studies fairbench follows, each in one command, and
// sets the publications' figures beside fairbench's own in the units that survive a change of
// hardware: ratios between engines, rankings, where a curve bends. Every row is judged
// "agrees", "disagrees" or "not comparable here", and a disagreement carries the evidence
// fairbench has for it. A disagreement is a result: the fairness profile and the workloads are
// never changed to make a study agree; where a study's own conditions were unfair, they are run
// as published beside the fair run, so the reader sees how much of a published gap they explain.
package reproduce

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/fairbench/fairbench/internal/document"
	"github.com/fairbench/fairbench/internal/interval"
	"github.com/fairbench/fairbench/internal/report"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/study"
)

// Scale is how big a reproduction is: small shrinks data and time by the study's documented
// rule (the shape of the method is kept: same threads, distribution, mix and conditions);
// full is the study's own size where the machine allows it.
type Scale string

const (
	Small Scale = "small"
	Full  Scale = "full"
	// tiny is for tests only (ParseScale refuses it): seconds per step and a few rows, so each
	// study's definition can run end to end against real servers in a test.
	tiny Scale = "tiny"
)

// ParseScale reads --scale.
func ParseScale(s string) (Scale, error) {
	switch Scale(s) {
	case Small, Full:
		return Scale(s), nil
	}
	return "", fmt.Errorf("--scale %q: use small (about 10 minutes a study here) or full (the study's own size)", s)
}

// Study is one published study as fairbench reruns it.
type Study struct {
	Name    string   // what the command line calls it
	Title   string   // the publication, in a few words
	Key     string   // its entry in published.yaml
	Engines []string // the engine kinds it compared
	// ScaleRule says in one sentence how small differs from full.
	ScaleRule string
	// Repeat is how many rounds each comparison runs by default (reproduce --repeat overrides):
	// enough for an interval on its rows where --scale small can afford them; 0 means 1.
	Repeat int
	// Runs is what to measure: each run is a compare (a suite and its conditions) whose
	// results land in OUT/<run name>.
	Runs func(sc Scale) []Run
	// Judge sets the published figures beside the measured ones.
	Judge func(pub Published, got Measured) []Row
	// Charts draws the study's curves as it drew them, published and measured normalised on one
	// chart (nil: the study drew none).
	Charts func(pub Published, got Measured) []document.LineChart
	// Explain, when set, adds sections that explain a published gap from the runs (the
	// shoot-out's MySQL read-write gap, knob by knob).
	Explain func(pub Published, got Measured) []*document.Section
}

// Run is one comparison a study needs: the fair run, or the study's conditions as published.
type Run struct {
	Name string
	// Engines are the kinds this run covers; nil means the study's engines (those installed).
	Engines []string
	// Suite is the suite file's text (docs/suites.md), so a run reads as a user would write it.
	Suite string
	// AsPublished names the study's unfair conditions that this run copies on purpose; empty
	// for a fair run.
	AsPublished string
	// Purpose says what a run that is neither fair nor as published is for.
	Purpose string
	// Binlog turns the binary log on for the MySQL-family engines of this run (MySQL 8.4's
	// default, which the shoot-out most likely ran with).
	Binlog bool
	// BufferPoolBytes is the study's buffer pool, the same on every engine (0 = the profile's).
	BufferPoolBytes int64
	// MaxConnections is raised alike on every engine for studies with many clients (0 = the profile's).
	MaxConnections int
	// Profile is profile.ModeDefaults for a run of each engine as its package ships it; "" is fair.
	Profile string
	// Explain lists knobs (profile.Knobs) that compare flips one at a time after each engine's
	// own run, to measure each one's share of a gap.
	Explain []string
	// ServerCPUs runs the suite once per entry with the server confined to that many CPUs.
	ServerCPUs []int
	// Repeat is the rounds of the comparison, the engine order rotated each round (0: the
	// suite's own).
	Repeat int
	// Bandwidth, when set, makes this run fairbench's storage-bandwidth study instead of a
	// compare: OLTP and TPC-H Q18 with the data directory on a capped device.
	Bandwidth *BandwidthRun
}

// BandwidthRun is a run of `fairbench study bandwidth`.
type BandwidthRun struct {
	Limits    []string // caps, "max" for none
	Threads   int
	Tables    int
	Time      time.Duration
	TPCHScale float64
	// TableSize and DeviceBytes are the study's own defaults when 0 (tests set them smaller).
	TableSize   int
	DeviceBytes int64
}

// Measured is what the runs produced: results by run name.
type Measured struct {
	Runs map[string][]*result.Result
	// Bandwidth holds the bandwidth study's documents by run name.
	Bandwidth map[string]*study.Bandwidth
	// Cores is the number of CPUs of the machine that measured them.
	Cores int
	// Rules are the rules each run's rounds followed (report.RuleOf): a comparison that ran
	// rounds until decided is judged at the look its rounds reached.
	Rules map[string]interval.Rule
}

// Rule is the rule a ratio drawn from the named runs is judged by: sequential where any of them
// ran rounds until decided (their rounds stopped on what they showed), fixed otherwise.
func (m Measured) Rule(runs ...string) interval.Rule {
	rule := interval.Fixed
	for _, run := range runs {
		if r := m.Rules[run]; r.IsSequential() && (!rule.IsSequential() || r.MinRounds < rule.MinRounds) {
			rule = r
		}
	}
	return rule
}

// Find returns the first complete result of a run for an engine and workload, with no knob
// flipped.
func (m Measured) Find(run, engine, workload string) *result.Result {
	return m.FindFlipped(run, engine, workload, "")
}

// All returns the complete results of a run for an engine and workload with no knob flipped,
// in the order they started: its rounds.
func (m Measured) All(run, engine, workload string) []*result.Result {
	return m.AllFlipped(run, engine, workload, "")
}

// AllFlipped is All for the runs of an engine with one knob flipped ("" for none).
func (m Measured) AllFlipped(run, engine, workload, knob string) []*result.Result {
	var out []*result.Result
	for _, r := range m.Runs[run] {
		if r.Engine.Kind == engine && r.Workload.Name == workload && r.Complete && strings.Join(r.Flipped, ",") == knob {
			out = append(out, r)
		}
	}
	slices.SortStableFunc(out, func(a, b *result.Result) int { return a.StartedAt.Compare(b.StartedAt) })
	return out
}

// FindFlipped is Find for the run of an engine with one knob flipped ("" for none).
func (m Measured) FindFlipped(run, engine, workload, knob string) *result.Result {
	for _, r := range m.Runs[run] {
		if r.Engine.Kind == engine && r.Workload.Name == workload && r.Complete && strings.Join(r.Flipped, ",") == knob {
			return r
		}
	}
	return nil
}

var studies = map[string]*Study{}

func register(s *Study) { studies[s.Name] = s }

// List returns every study, by name.
func List() []*Study {
	var out []*Study
	for _, s := range studies {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Lookup finds a study by name; an unknown one is an error naming the known ones.
func Lookup(name string) (*Study, error) {
	if s, ok := studies[name]; ok {
		return s, nil
	}
	var names []string
	for _, s := range List() {
		names = append(names, s.Name)
	}
	return nil, fmt.Errorf("no study %q: fairbench reproduces %s (fairbench reproduce --list)", name, strings.Join(names, ", "))
}

// Rounds is the study's default rounds at a scale: its Repeat, and one at the tests' tiny scale.
func (s *Study) Rounds(sc Scale) int {
	if sc == tiny || s.Repeat < 1 {
		return 1
	}
	return s.Repeat
}

// Executor runs one comparison into dir; the command line gives compare's, tests may give a
// smaller one.
type Executor func(ctx context.Context, run Run, engines []string, dir string) error

// Options are one reproduction.
type Options struct {
	Scale   Scale
	Repeat  int      // rounds of every compare run (0: the suite's own)
	Engines []string // restrict to these kinds (or KIND@RELEASE, one per kind); nil = the study's engines that are installed
	OutDir  string
	Log     io.Writer
	Cores   int
	Execute Executor
}

// Reproduce runs the study's comparisons, judges the rows and writes OUT/report.{md,html}.
// A run that fails still leaves its rows, judged "not comparable here" with the reason.
func Reproduce(ctx context.Context, s *Study, o Options) ([]Row, error) {
	pub, err := LoadPublished(s.Key)
	if err != nil {
		return nil, err
	}
	got := Measured{Runs: map[string][]*result.Result{}, Bandwidth: map[string]*study.Bandwidth{}, Cores: o.Cores, Rules: map[string]interval.Rule{}}
	for _, run := range s.Runs(o.Scale) {
		engines := pick(run.Engines, s.Engines, o.Engines)
		if len(engines) == 0 {
			continue
		}
		run.Repeat = o.Repeat
		dir := filepath.Join(o.OutDir, run.Name)
		logf(o.Log, "== %s: run %q on %s", s.Name, run.Name, strings.Join(engines, ", "))
		if err := o.Execute(ctx, run, engines, dir); err != nil {
			if ctx.Err() != nil {
				return nil, err
			}
			logf(o.Log, "run %q failed: %v (its rows will say so)", run.Name, err)
		}
		rs, _ := result.ReadPath(dir)
		got.Runs[run.Name] = rs
		if env, err := result.ReadEnvironment(dir); err == nil {
			got.Rules[run.Name] = report.RuleOf(env)
		}
		if run.Bandwidth != nil {
			got.Bandwidth[run.Name] = readBandwidth(dir)
		}
	}
	rows := s.Judge(pub, got)
	return rows, writeReport(o.OutDir, s, o.Scale, rows, got, pub)
}

// pick is the run's engines, else the study's, narrowed to the user's choice. A user's
// KIND@RELEASE takes the place of its kind, so that a study can run on the release it published
// (postgres@17) rather than the newest installed.
func pick(run, study, user []string) []string {
	want := run
	if want == nil {
		want = study
	}
	if user == nil {
		return want
	}
	var out []string
	for _, k := range want {
		for _, u := range user {
			if kind, _, _ := strings.Cut(u, "@"); kind == k {
				out = append(out, u)
			}
		}
	}
	return out
}

// readBandwidth loads a bandwidth study's document; nil when the run left none.
func readBandwidth(dir string) *study.Bandwidth {
	data, err := os.ReadFile(filepath.Join(dir, "bandwidth.json"))
	if err != nil {
		return nil
	}
	var doc study.Bandwidth
	if json.Unmarshal(data, &doc) != nil {
		return nil
	}
	return &doc
}

func logf(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, format+"\n", args...)
	}
}
