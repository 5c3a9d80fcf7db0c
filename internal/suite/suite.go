// Package suite describes what a comparison runs: which workloads, on how much data, with how
// many threads and for how long. Built-in suites reproduce known methodologies; a YAML file can
// describe any other (docs/suites.md). Run settings are read and defaulted by runspec, the same
// rules as the command line's.
package suite

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/fairbench/fairbench/internal/inputfile"
	"github.com/fairbench/fairbench/internal/runspec"
	"github.com/fairbench/fairbench/internal/slo"
	"github.com/fairbench/fairbench/internal/sqldb"
)

// Suite is a list of steps run in order on each engine.
type Suite struct {
	Name        string
	Description string
	Repeat      int
	// Budget is the suite's time for compare's rounds until decided (budget:); nil leaves it to
	// the command line's default, 0 runs Repeat rounds only.
	Budget   *time.Duration
	RandType string
	Options  map[string]string // workload options for every step whose workload has them
	Run      runspec.Layer     // run settings for every step
	// Override is laid over every step's settings: the command line's --threads, --time, --warmup.
	Override runspec.Layer
	Steps    []Step
	// Targets are servers the user runs, NAME=DSN as compare --targets takes them (targets:), no
	// password among them: a suite file is shared, and the password comes from password_file= or
	// the environment.
	Targets []string
}

// Step is one workload run; its run settings win over the suite's.
type Step struct {
	// Name tells apart steps of one workload (tpcc statements vs routines): the step's own name:
	// in the file, else its own options (style=routines), else "step N"; "" for a workload run by
	// one step only. It names the step's results files and its rows in the report.
	Name     string
	Workload string
	Run      runspec.Layer
	Options  map[string]string
}

// file is the YAML form, as users write it. Pointers tell a missing key (take the default) from
// a zero one (an error where zero makes no sense: repeat: 0, time: 0s, add: 0).
type file struct {
	Name        string            `yaml:"name"`
	Description string            `yaml:"description"`
	Threads     threadList        `yaml:"threads"`
	Time        *string           `yaml:"time"`
	Warmup      *string           `yaml:"warmup"`
	Repeat      *int              `yaml:"repeat"`
	Budget      *string           `yaml:"budget"`
	SLO         *string           `yaml:"slo"`
	RandType    string            `yaml:"rand_type"`
	Options     map[string]string `yaml:"options"`
	Steps       []stepFile        `yaml:"steps"`
	Targets     []string          `yaml:"targets"`
}

type rampFile struct {
	Add   *int   `yaml:"add"`
	Every string `yaml:"every"`
	Max   *int   `yaml:"max"`
	SLO   string `yaml:"slo"`
	// A stage ramp's own (stages:).
	Delay string `yaml:"delay"`
	Pool  *int   `yaml:"pool"`
}

type stepFile struct {
	Name     string            `yaml:"name"`
	Ramp     *rampFile         `yaml:"ramp"`
	Stages   *rampFile         `yaml:"stages"`
	Workload string            `yaml:"workload"`
	Threads  threadList        `yaml:"threads"`
	Time     *string           `yaml:"time"`
	Warmup   *string           `yaml:"warmup"`
	SLO      *string           `yaml:"slo"`
	Options  map[string]string `yaml:"options"`
}

// threadList accepts 16, [1, 2, 4] or "1,2,4"; whether the counts are sensible is runspec's call.
type threadList struct {
	set  bool
	text string // the "1,2,4" form, parsed by runspec
	list []int
}

func (t *threadList) UnmarshalYAML(n *yaml.Node) error {
	t.set = true
	var one int
	if err := n.Decode(&one); err == nil {
		t.list = []int{one}
		return nil
	}
	if err := n.Decode(&t.list); err == nil {
		return nil
	}
	if err := n.Decode(&t.text); err != nil || t.text == "" {
		return fmt.Errorf("line %d: threads must be a number or a list of numbers", n.Line)
	}
	return nil
}

func (t threadList) threads(setting string) ([]int, error) {
	switch {
	case !t.set:
		return nil, nil
	case t.text != "":
		return runspec.ParseThreads(setting, t.text)
	}
	return t.list, runspec.CheckThreads(setting, t.list)
}

//go:embed builtin/*.yaml
var builtin embed.FS

// Builtin lists the names of the suites shipped with fairbench.
func Builtin() []string {
	entries, _ := builtin.ReadDir("builtin")
	var names []string
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	slices.Sort(names)
	return names
}

// Load resolves a built-in suite name or reads a YAML file.
func Load(nameOrPath string) (*Suite, error) {
	if data, err := builtin.ReadFile("builtin/" + nameOrPath + ".yaml"); err == nil {
		return Parse(data, nameOrPath)
	}
	data, err := readSuiteFile(nameOrPath)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, fmt.Errorf("no suite %q: use one of %s, or the path of a YAML suite file", nameOrPath, strings.Join(Builtin(), ", "))
		}
		return nil, err
	}
	return Parse(data, nameOrPath)
}

// MaxFileBytes bounds a suite file: the built-in ones are under 2 KB, and a YAML decoder holds a
// large file many times over in memory (a 300 MB file took 2 GB before it was refused).
const MaxFileBytes = 1 << 20

func readSuiteFile(path string) ([]byte, error) {
	data, err := inputfile.Read(path, MaxFileBytes)
	var big *inputfile.TooLargeError
	if errors.As(err, &big) {
		return nil, fmt.Errorf("suite file %w: a suite lists steps, a few lines each; give a suite file, not a data file", err)
	}
	return data, err
}

// Parse reads a suite from YAML, rejecting unknown keys so a typo does not silently change a run,
// and every run setting runspec rejects.
func Parse(data []byte, source string) (*Suite, error) {
	var f file
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("suite %s is empty: write at least a steps: list (see docs/suites.md)", source)
		}
		return nil, fmt.Errorf("suite %s: %v", source, err)
	}
	s := &Suite{Name: f.Name, Description: strings.TrimSpace(f.Description), RandType: f.RandType, Options: f.Options,
		Repeat: runspec.DefaultRepeat}
	if s.Name == "" {
		s.Name = source
	}
	if s.RandType == "" {
		s.RandType = "uniform"
	}
	at := "suite " + source + ": "
	if f.Repeat != nil {
		if err := runspec.CheckRepeat(at+"repeat", *f.Repeat); err != nil {
			return nil, err
		}
		s.Repeat = *f.Repeat
	}
	if f.Budget != nil {
		b, err := runspec.ParseBudget(at+"budget", *f.Budget)
		if err != nil {
			return nil, err
		}
		s.Budget = &b
	}
	if err := checkTargets(at, f.Targets); err != nil {
		return nil, err
	}
	s.Targets = f.Targets
	var err error
	if s.Run, err = layer(at, f.Threads, f.Time, f.Warmup, nil, ""); err != nil {
		return nil, err
	}
	if s.Run.SLO, err = objective(at, f.SLO); err != nil {
		return nil, err
	}
	if len(f.Steps) == 0 {
		return nil, fmt.Errorf("suite %s has no steps: add a steps: list with at least one workload", source)
	}
	for i, sf := range f.Steps {
		if sf.Workload == "" {
			return nil, fmt.Errorf("suite %s: step %d names no workload", source, i+1)
		}
		st := Step{Name: strings.TrimSpace(sf.Name), Workload: sf.Workload, Options: sf.Options}
		ramp, kind := sf.Ramp, "ramp"
		if sf.Stages != nil {
			if sf.Ramp != nil {
				return nil, fmt.Errorf("suite %s: step %d has both ramp: and stages:, two kinds of ramp: keep one", source, i+1)
			}
			ramp, kind = sf.Stages, "stages"
		}
		if st.Run, err = layer(fmt.Sprintf("%sstep %d ", at, i+1), sf.Threads, sf.Time, sf.Warmup, ramp, kind); err != nil {
			return nil, err
		}
		if st.Run.SLO, err = objective(fmt.Sprintf("%sstep %d ", at, i+1), sf.SLO); err != nil {
			return nil, err
		}
		s.Steps = append(s.Steps, st)
	}
	if err := nameSteps(source, s.Steps); err != nil {
		return nil, err
	}
	if _, err := s.Resolve(); err != nil {
		return nil, err
	}
	return s, nil
}

// nameSteps gives every step of a workload that more than one step runs a name of its own (see
// Step.Name), so that overrides such as --threads, which make their run settings alike, never make
// two steps write one results file. Names the file gives must differ within a workload.
func nameSteps(source string, steps []Step) error {
	count := map[string]int{}
	for _, st := range steps {
		count[st.Workload]++
	}
	taken := map[[2]string]int{}
	for i := range steps {
		st := &steps[i]
		if st.Name == "" && count[st.Workload] > 1 {
			// The one step of a workload without options of its own keeps no name: "payments"
			// beside "payments (transfer=routine)".
			st.Name = optionsName(st.Options)
			if _, dup := taken[[2]string{st.Workload, st.Name}]; dup {
				st.Name = fmt.Sprintf("step %d", i+1)
			}
		}
		key := [2]string{st.Workload, st.Name}
		if j, dup := taken[key]; dup {
			return fmt.Errorf("suite %s: steps %d and %d of %s are both named %q: give each a name of its own", source, j+1, i+1, st.Workload, st.Name)
		}
		taken[key] = i
	}
	return nil
}

// optionsName is a step's own options as "k=v, k=v", sorted, or "" without any.
func optionsName(opts map[string]string) string {
	parts := make([]string, 0, len(opts))
	for _, k := range slices.Sorted(maps.Keys(opts)) {
		parts = append(parts, k+"="+opts[k])
	}
	return strings.Join(parts, ", ")
}

// objective reads an slo: key, written as its canonical text.
func objective(at string, text *string) (*string, error) {
	if text == nil {
		return nil, nil
	}
	o, err := slo.Parse(*text)
	if err != nil {
		return nil, fmt.Errorf("%s%w", at, err)
	}
	canonical := o.String()
	return &canonical, nil
}

// layer reads one level's run settings (the suite's or a step's) through runspec; kind says
// whether ramp was given as ramp: or stages:.
func layer(at string, threads threadList, tm, warmup *string, ramp *rampFile, kind string) (runspec.Layer, error) {
	var l runspec.Layer
	var err error
	if l.Threads, err = threads.threads(at + "threads"); err != nil {
		return l, err
	}
	if tm != nil {
		d, err := runspec.ParsePositiveDuration(at+"time", *tm)
		if err != nil {
			return l, err
		}
		l.Time = &d
	}
	if warmup != nil {
		d, err := runspec.ParseDuration(at+"warmup", *warmup)
		if err != nil {
			return l, err
		}
		l.Warmup = &d
	}
	if ramp != nil {
		if kind == "ramp" && (ramp.Delay != "" || ramp.Pool != nil) {
			return l, fmt.Errorf("%sramp: delay and pool belong to a stage ramp: write stages instead of ramp", at)
		}
		in := runspec.RampInput{Add: ramp.Add, Max: ramp.Max, Every: ramp.Every, SLO: ramp.SLO,
			Stages: kind == "stages", Delay: ramp.Delay, Pool: ramp.Pool}
		if l.Ramp, err = in.Ramp(at + kind); err != nil {
			return l, err
		}
	}
	return l, nil
}

// Resolved is a step with every run setting filled in.
type Resolved struct {
	Name     string // Step.Name
	Workload string
	runspec.Spec
	// Common are the suite-wide options: they apply where the workload has them. Own are the
	// step's: they must all be the workload's, and they win over Common.
	Common map[string]string
	Own    map[string]string
}

// Resolve lays each step's settings over the suite's, and the override over both.
func (s *Suite) Resolve() ([]Resolved, error) {
	out := make([]Resolved, 0, len(s.Steps))
	for _, st := range s.Steps {
		spec, err := runspec.Resolve(s.Run, st.Run, s.Override)
		if err != nil {
			return nil, err
		}
		out = append(out, Resolved{Name: st.Name, Workload: st.Workload, Spec: spec, Common: maps.Clone(s.Options), Own: maps.Clone(st.Options)})
	}
	return out, nil
}

// Estimate is how long the measured part of the suite takes on one engine, for progress and ETA.
func (s *Suite) Estimate() time.Duration {
	steps, err := s.Resolve()
	if err != nil {
		return 0
	}
	var d time.Duration
	for _, r := range steps {
		d += time.Duration(len(r.Threads)) * (r.Time + r.Warmup)
	}
	return d * time.Duration(s.Repeat)
}

// checkTargets refuses a targets: entry that is not NAME=DSN, or whose DSN carries a password.
func checkTargets(at string, targets []string) error {
	for i, t := range targets {
		name, dsn, ok := strings.Cut(t, "=")
		if !ok || name == "" || !strings.Contains(dsn, "://") {
			return fmt.Errorf("%stargets entry %d is not NAME=DSN (e.g. pg17=postgres://bench@db1/bench)", at, i+1)
		}
		tg, err := sqldb.ParseTarget(dsn)
		if err != nil {
			return fmt.Errorf("%stargets %s: %w", at, name, err)
		}
		if tg.Password != "" {
			return fmt.Errorf("%stargets %s: a suite file holds no password: remove it from the DSN and give it by password_file= or FAIRBENCH_PASSWORD", at, name)
		}
	}
	return nil
}
