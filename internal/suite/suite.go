// Package suite describes what a comparison runs: which workloads, on how much data, with how
// many threads and for how long. Built-in suites reproduce known methodologies; a YAML file can
// describe any other (docs/suites.md).
package suite

import (
	"bytes"
	"embed"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Suite is a list of steps run in order on each engine.
type Suite struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	// Defaults for every step.
	Threads  []int             `yaml:"-"`
	Time     time.Duration     `yaml:"-"`
	Warmup   time.Duration     `yaml:"-"`
	Repeat   int               `yaml:"repeat"`
	RandType string            `yaml:"rand_type"`
	Options  map[string]string `yaml:"options"`
	Steps    []Step            `yaml:"steps"`
}

// Ramp adds clients step by step to the saturation point (runner.Ramp).
type Ramp struct {
	Add   int
	Every time.Duration
	Max   int
	SLO   time.Duration
}

// Step is one workload run. Zero fields take the suite's defaults.
type Step struct {
	Ramp     *Ramp             `yaml:"-"`
	Workload string            `yaml:"workload"`
	Threads  []int             `yaml:"-"`
	Time     time.Duration     `yaml:"-"`
	Warmup   time.Duration     `yaml:"-"`
	Options  map[string]string `yaml:"options"`
}

// file is the YAML form: durations and thread lists are written the way users write them.
type file struct {
	Name        string            `yaml:"name"`
	Description string            `yaml:"description"`
	Threads     threadList        `yaml:"threads"`
	Time        string            `yaml:"time"`
	Warmup      string            `yaml:"warmup"`
	Repeat      int               `yaml:"repeat"`
	RandType    string            `yaml:"rand_type"`
	Options     map[string]string `yaml:"options"`
	Steps       []stepFile        `yaml:"steps"`
}

type rampFile struct {
	Add   int    `yaml:"add"`
	Every string `yaml:"every"`
	Max   int    `yaml:"max"`
	SLO   string `yaml:"slo"`
}

type stepFile struct {
	Ramp     *rampFile         `yaml:"ramp"`
	Workload string            `yaml:"workload"`
	Threads  threadList        `yaml:"threads"`
	Time     string            `yaml:"time"`
	Warmup   string            `yaml:"warmup"`
	Options  map[string]string `yaml:"options"`
}

// threadList accepts 16, [1, 2, 4] or "1,2,4".
type threadList []int

func (t *threadList) UnmarshalYAML(n *yaml.Node) error {
	var one int
	if err := n.Decode(&one); err == nil {
		*t = threadList{one}
		return nil
	}
	var many []int
	if err := n.Decode(&many); err == nil {
		*t = many
		return nil
	}
	var s string
	if err := n.Decode(&s); err != nil {
		return fmt.Errorf("line %d: threads must be a number or a list of numbers", n.Line)
	}
	for _, p := range strings.Split(s, ",") {
		var v int
		if _, err := fmt.Sscan(strings.TrimSpace(p), &v); err != nil || v < 1 {
			return fmt.Errorf("line %d: threads %q: use a number or a list like 1,2,4", n.Line, s)
		}
		*t = append(*t, v)
	}
	return nil
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
	sort.Strings(names)
	return names
}

// Load resolves a built-in suite name or reads a YAML file.
func Load(nameOrPath string) (*Suite, error) {
	if data, err := builtin.ReadFile("builtin/" + nameOrPath + ".yaml"); err == nil {
		return Parse(data, nameOrPath)
	}
	data, err := os.ReadFile(nameOrPath)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, fmt.Errorf("no suite %q: use one of %s, or the path of a YAML suite file", nameOrPath, strings.Join(Builtin(), ", "))
		}
		return nil, err
	}
	return Parse(data, nameOrPath)
}

// Parse reads a suite from YAML, rejecting unknown keys so a typo does not silently change a run.
func Parse(data []byte, source string) (*Suite, error) {
	var f file
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("suite %s: %v", source, err)
	}
	s := &Suite{Name: f.Name, Description: f.Description, Threads: f.Threads, Repeat: f.Repeat, RandType: f.RandType, Options: f.Options}
	if s.Name == "" {
		s.Name = source
	}
	var err error
	if s.Time, err = duration(f.Time, source, "time"); err != nil {
		return nil, err
	}
	if s.Warmup, err = duration(f.Warmup, source, "warmup"); err != nil {
		return nil, err
	}
	if len(s.Threads) == 0 {
		s.Threads = []int{8}
	}
	if s.Time == 0 {
		s.Time = 30 * time.Second
	}
	if s.Repeat == 0 {
		s.Repeat = 1
	}
	if s.RandType == "" {
		s.RandType = "uniform"
	}
	if len(f.Steps) == 0 {
		return nil, fmt.Errorf("suite %s has no steps: add a steps: list with at least one workload", source)
	}
	for i, sf := range f.Steps {
		if sf.Workload == "" {
			return nil, fmt.Errorf("suite %s: step %d names no workload", source, i+1)
		}
		st := Step{Workload: sf.Workload, Threads: sf.Threads, Options: sf.Options}
		if st.Time, err = duration(sf.Time, source, "time"); err != nil {
			return nil, err
		}
		if st.Warmup, err = duration(sf.Warmup, source, "warmup"); err != nil {
			return nil, err
		}
		if sf.Ramp != nil {
			if st.Ramp, err = parseRamp(sf.Ramp, source); err != nil {
				return nil, err
			}
		}
		s.Steps = append(s.Steps, st)
	}
	return s, nil
}

func parseRamp(f *rampFile, source string) (*Ramp, error) {
	r := &Ramp{Add: f.Add, Max: f.Max}
	var err error
	if r.Every, err = duration(f.Every, source, "ramp every"); err != nil {
		return nil, err
	}
	if r.SLO, err = duration(f.SLO, source, "ramp slo"); err != nil {
		return nil, err
	}
	if r.Add == 0 {
		r.Add = 1
	}
	if r.Every == 0 {
		r.Every = 10 * time.Second
	}
	if r.Max < r.Add {
		return nil, fmt.Errorf("suite %s: a ramp needs max (the most clients) of at least add", source)
	}
	return r, nil
}

func duration(v, source, key string) (time.Duration, error) {
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("suite %s: %s %q is not a duration: use e.g. 30s or 2m", source, key, v)
	}
	return d, nil
}

// Resolved is a step with every default filled in.
type Resolved struct {
	Workload string
	Threads  []int
	Time     time.Duration
	Warmup   time.Duration
	Ramp     *Ramp // when set, Threads is [Ramp.Max] and Time bounds the ramp
	// Common are the suite-wide options: they apply where the workload has them. Own are the
	// step's: they must all be the workload's, and they win over Common.
	Common map[string]string
	Own    map[string]string
}

// Resolve fills each step from the suite's defaults.
func (s *Suite) Resolve() []Resolved {
	out := make([]Resolved, 0, len(s.Steps))
	for _, st := range s.Steps {
		r := Resolved{Workload: st.Workload, Threads: st.Threads, Time: st.Time, Warmup: st.Warmup, Ramp: st.Ramp, Common: s.Options, Own: st.Options}
		if len(r.Threads) == 0 {
			r.Threads = s.Threads
		}
		if r.Time == 0 {
			r.Time = s.Time
		}
		if r.Warmup == 0 {
			r.Warmup = s.Warmup
		}
		if r.Ramp != nil {
			r.Threads = []int{r.Ramp.Max}
			// A ramp runs until it saturates or reaches max; allow every step by default.
			if st.Time == 0 {
				r.Time = time.Duration(r.Ramp.Max/r.Ramp.Add+1) * r.Ramp.Every
			}
		}
		out = append(out, r)
	}
	return out
}

// Estimate is how long the measured part of the suite takes on one engine, for progress and ETA.
func (s *Suite) Estimate() time.Duration {
	var d time.Duration
	for _, r := range s.Resolve() {
		d += time.Duration(len(r.Threads)) * (r.Time + r.Warmup)
	}
	return d * time.Duration(s.Repeat)
}
