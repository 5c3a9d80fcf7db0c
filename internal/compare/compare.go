// Package compare is fairbench's main job: for each engine in turn it starts a throwaway local
// server with the shared fairness profile, runs the suite against it, stops it, and finally
// renders the report from the results files alone.
package compare

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/fairbench/fairbench/internal/capacity"
	"github.com/fairbench/fairbench/internal/cgroup"
	"github.com/fairbench/fairbench/internal/engine"
	"github.com/fairbench/fairbench/internal/engine/discovery"
	"github.com/fairbench/fairbench/internal/engine/profile"
	"github.com/fairbench/fairbench/internal/fault"
	"github.com/fairbench/fairbench/internal/fingerprint"
	"github.com/fairbench/fairbench/internal/job"
	"github.com/fairbench/fairbench/internal/livemetrics"
	"github.com/fairbench/fairbench/internal/machineload"
	"github.com/fairbench/fairbench/internal/netsim"
	"github.com/fairbench/fairbench/internal/randgen"
	"github.com/fairbench/fairbench/internal/report"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/runner"
	"github.com/fairbench/fairbench/internal/runspec"
	"github.com/fairbench/fairbench/internal/slo"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/suite"
	"github.com/fairbench/fairbench/internal/sysinfo"
	"github.com/fairbench/fairbench/internal/throttle"
	"github.com/fairbench/fairbench/internal/throwaway"
	"github.com/fairbench/fairbench/internal/workload"
	_ "github.com/fairbench/fairbench/internal/workload/all" // registers every workload
)

// Options is one comparison.
type Options struct {
	// QuietWait is how long each step waits for other work on the machine to end before it
	// measures anyway, marked busy (the command line's default: DefaultQuietWait); 0 measures at
	// once, still marking a busy machine.
	QuietWait time.Duration
	// WaitEvery is the wait sampling's period in each step (job.Job.WaitEvery); 0 is off.
	WaitEvery time.Duration
	Engines   []string
	// Targets are servers the user runs (--targets): measured as they are configured, in the
	// same rotated rounds as the engines fairbench starts, and never stopped.
	Targets []Target
	// ApplyProfile sets the fairness profile's run-time settings on each target for its rounds,
	// restoring them after (--apply-profile); otherwise a target runs as configured.
	ApplyProfile bool
	Suite        *suite.Suite
	// Budget, above 0, runs rounds until decided (rounds.go): the suite's rounds are the
	// minimum, and the open picks get more within this time for the whole comparison. 0 runs the
	// suite's rounds, judged once.
	Budget  time.Duration
	OutDir  string
	Profile profile.Profile
	// Explain lists knobs (profile.Knobs) to flip one at a time: each engine a knob applies to runs
	// the suite again with that knob flipped, and the report shows each knob's effect.
	Explain   []string
	MySQLRoot string
	WorkDir   string // where servers' data directories go; "" = the system temp dir
	// DeviceBytes, when above 0, puts each server's data directory on a loop device of its own of
	// that size (root), so its disk figures come from the device's own counters, every write
	// included; DeviceNoJournal makes that device's ext4 without a journal.
	DeviceBytes     int64
	DeviceNoJournal bool
	Seed            uint64
	Command         string    // the command line, recorded to reproduce the run
	Log             io.Writer // progress lines
	// Interval lines from the runner, when wanted (nil = only the per-step summary).
	IntervalLog io.Writer
	// Live, when set, receives every step's measured intervals (--metrics-addr).
	Live *livemetrics.Exporter
	// Clients, when above 0, runs each step's load from that many simulated client hosts
	// (network namespaces), one fairbench process each, merged into the step's result.
	Clients int
	// Network, when set, puts that distance between the clients and the server (one simulated
	// host unless Clients says more).
	Network *netsim.Spec
	// ClientBinary is the fairbench the client hosts run; "" = this executable.
	ClientBinary string
	// ServerCPUs, when given, runs the suite on each engine once per entry with the server
	// confined to that many CPUs (profile.Profile.CPUs) and the client kept off them where CPUs
	// are left: the core-scaling studies' sweep.
	ServerCPUs []int
	// Faults are injected into each cluster engine during every step's measured window
	// (--fault); every engine must then be a cluster.
	Faults []runspec.Fault
	// ReadReplicas sends the measured clients of read-only workloads (workload.Traits.ReadOnly) on
	// postgres-ha to its replicas (--read-replicas); mixed workloads and other engines are
	// unchanged.
	ReadReplicas bool
	// beforeStep, when set, is called before each step with the number of steps done; an error
	// from it fails the comparison there. The test that no server or data directory outlives a
	// failure injects one; unexported, so only this package's tests can.
	beforeStep func(done int) error
	// shardDir, when set, keeps the client hosts' own results there (tests check the merge
	// against them); otherwise they go to a temporary directory removed after each step.
	shardDir string
}

// Plan checks everything that can be known before any work: engines installed, targets that
// answer and may hold fairbench's tables, workloads and options valid. Errors here are the
// user's to fix.
func Plan(ctx context.Context, o *Options) ([]Contender, error) {
	if len(o.Engines) == 0 && len(o.Targets) == 0 {
		return nil, errors.New("no engines given: pass --engines postgres,mariadb,mysql (a version with @, e.g. postgres@17), or --targets NAME=DSN,... for servers you run")
	}
	var insts []Contender
	if len(o.Engines) > 0 {
		found, err := discovery.Select(strings.Join(o.Engines, ","), o.MySQLRoot)
		if err != nil {
			return nil, err
		}
		for _, inst := range found {
			insts = append(insts, Contender{Installation: inst})
		}
	}
	var kinds []string
	for _, inst := range insts {
		if err := o.Profile.Check(inst.Installation.NodeKind(), inst.Installation.Kind); err != nil {
			return nil, err
		}
		kinds = append(kinds, inst.Kind)
	}
	insts, err := planTargets(ctx, o, insts)
	if err != nil {
		return nil, err
	}
	if err := checkExplain(o.Explain, kinds); err != nil {
		return nil, err
	}
	steps, err := o.Suite.Resolve()
	if err != nil {
		return nil, err
	}
	rnd := randgen.DefaultConfig(o.Suite.RandType)
	fixedLists := 0
	for i, st := range steps {
		j, err := newJob(sqldb.Target{Kind: sqldb.Postgres}, st, rnd, 0, "")
		if err != nil {
			return nil, fmt.Errorf("suite %s: %w", o.Suite.Name, err)
		}
		if err := checkFixedListWarmup(j, o.Suite.Steps[i], i); err != nil {
			return nil, fmt.Errorf("suite %s: %w", o.Suite.Name, err)
		}
		if runner.IsFixedList(j.Workload) {
			fixedLists++
		}
	}
	if w := o.Suite.Override.Warmup; w != nil && *w > 0 && fixedLists == len(steps) {
		return nil, fmt.Errorf("--warmup: every step of suite %s %s: drop --warmup", o.Suite.Name, runner.FixedListConflict(runner.FixedWarmup))
	}
	if err := checkSuiteOptions(o.Suite); err != nil {
		return nil, err
	}
	if err := checkResultNames(o.Suite.Name, steps); err != nil {
		return nil, err
	}
	if err := checkClientHosts(o, steps); err != nil {
		return nil, err
	}
	if err := checkFaults(o, insts, steps); err != nil {
		return nil, err
	}
	return insts, nil
}

// checkFixedListWarmup refuses a warm-up written on a step whose clients each run a fixed list
// (TPC-H's tests): the list is the test, timed from its first query, so the time would be dropped
// without a word. A suite-wide warm-up is a default for the steps that run until their time is up,
// and does not reach such a step (stepWarmup).
func checkFixedListWarmup(j *job.Job, st suite.Step, i int) error {
	if runner.IsFixedList(j.Workload) && st.Run.Warmup != nil && *st.Run.Warmup > 0 {
		return fmt.Errorf("step %d: warmup: %s %s: drop warmup: from the step", i+1, st.Workload, runner.FixedListConflict(runner.FixedWarmup))
	}
	return nil
}

// stepWarmup is the warm-up a step's runs get: none for a fixed list (checkFixedListWarmup).
func stepWarmup(j *job.Job, st suite.Resolved) time.Duration {
	if runner.IsFixedList(j.Workload) {
		return 0
	}
	return st.Warmup
}

// checkSuiteOptions rejects a suite-wide option that no step's workload has: it would apply to
// nothing, and is almost always a misspelling (table_size for table-size).
func checkSuiteOptions(s *suite.Suite) error {
	known := map[string]bool{}
	for _, st := range s.Steps {
		spec, err := workload.Lookup(st.Workload)
		if err != nil {
			return err
		}
		for _, o := range spec.Options {
			known[o.Name] = true
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.Options)) {
		if !known[name] {
			valid := slices.Sorted(maps.Keys(known))
			return fmt.Errorf("suite %s: option %q belongs to none of its steps' workloads: use one of %s", s.Name, name, strings.Join(valid, ", "))
		}
	}
	return nil
}

// checkResultNames refuses a suite two of whose steps would write the same results file (the
// same workload at the same thread count, e.g. tpcc twice with different styles): the second
// would overwrite the first, and the report would show one of them as if it were both.
func checkResultNames(suiteName string, steps []suite.Resolved) error {
	first := map[string]int{}
	for i, st := range steps {
		for _, th := range st.Threads {
			name := resultName("ENGINE", st, stepRun{threads: th}, 1)
			if j, ok := first[name]; ok && j != i {
				return fmt.Errorf("suite %s: steps %d and %d both run %s and would write the same results file, the second overwriting the first: run them as two suites, or as one step with a list of thread counts", suiteName, j+1, i+1, st.Workload)
			}
			first[name] = i
		}
	}
	return nil
}

// newJob builds a step's job, giving it the suite-wide options that its workload knows.
func newJob(t sqldb.Target, st suite.Resolved, rnd randgen.Config, seed uint64, answersCache string) (*job.Job, error) {
	spec, err := workload.Lookup(st.Workload)
	if err != nil {
		return nil, err
	}
	set := map[string]string{}
	for _, o := range spec.Options {
		if v, ok := st.Common[o.Name]; ok {
			set[o.Name] = v
		}
	}
	// Analytical answers are checked across the engines of this comparison, not against
	// answers cached by an earlier one.
	if answersCache != "" && hasOption(spec, "answers-cache") {
		set["answers-cache"] = answersCache
	}
	for k, v := range st.Own {
		set[k] = v
	}
	return job.New(t, st.Workload, set, rnd, seed)
}

// Run performs the comparison and writes results, environment.json and the report into OutDir.
// It stops every server it started, also on error or interrupt; what was measured before a
// failure is kept, marked incomplete, and the report is rendered from it.
func Run(ctx context.Context, o *Options) error {
	insts, err := Plan(ctx, o)
	if err != nil {
		return err
	}
	resultsDir := filepath.Join(o.OutDir, "results")
	if err := os.MkdirAll(resultsDir, 0o755); err != nil {
		return err
	}
	steps, err := o.Suite.Resolve()
	if err != nil {
		return err
	}
	if raised := raiseConnections(&o.Profile, steps); raised > 0 && o.Log != nil {
		fmt.Fprintf(o.Log, "== max_connections raised to %d on every engine, for the suite's %d clients\n", raised, raised-connectionHeadroom)
	}
	env := sysinfo.Collect(o.WorkDir)
	env.Command = o.Command
	env.Fairness = fairnessSummary(o.Profile)
	env.Notes = notes(o.Profile)
	hosts, err := startClientHosts(o)
	if err != nil {
		return err
	}
	defer hosts.close()
	c := &comparison{opts: o, steps: steps, resultsDir: resultsDir, started: time.Now(), hosts: hosts, env: env, othersLive: func() []string { return engine.OthersLive(localTargetPorts(o.Targets)...) }, brackets: map[string][2]float64{},
		stepOf: map[string]string{}, costs: costs{overhead: map[string]time.Duration{}, step: map[string]time.Duration{}},
		runs: len(insts)*max(1, len(o.ServerCPUs)) + len(explainRuns(o.Explain, insts))}
	c.totalSteps = c.runs * o.Suite.Repeat * stepCount(steps)
	c.logf("== suite %s: %s", o.Suite.Name, o.Suite.Description)
	var runErr error
	for rep := 1; rep <= o.Suite.Repeat && runErr == nil; rep++ {
		order := roundOrder(insts, rep)
		for _, inst := range order {
			env.Engines[inst.Name()] = inst.Version
			runs := []func() error{func() error { return c.coreSweep(ctx, inst, rep) }}
			for _, er := range explainRuns(o.Explain, []Contender{inst}) {
				runs = append(runs, func() error { return c.flipped(ctx, inst, rep, er.knob) })
			}
			if runErr = inTurn(runs, rep); runErr != nil {
				break
			}
		}
	}
	if runErr == nil && o.UntilDecided() {
		runErr = c.untilDecided(ctx, insts)
	}
	if err := writeEnvironment(o.OutDir, env); err != nil && runErr == nil {
		runErr = err
	}
	if in, err := report.Load(o.OutDir); err == nil {
		if err := report.WriteDir(o.OutDir, in); err != nil && runErr == nil {
			runErr = err
		}
	} else if runErr == nil {
		runErr = err
	}
	return runErr
}

// note adds a line to the report's notes, once.
func (c *comparison) note(line string) {
	if !slices.Contains(c.env.Notes, line) {
		c.env.Notes = append(c.env.Notes, line)
	}
}

// roundOrder rotates the engine order by one place each round (ABC, BCA, CAB), so over as many
// rounds as engines each runs once in every position: none always runs first on a cold machine
// or last after the others have warmed the page cache and the CPU's clock.
func roundOrder(insts []Contender, rep int) []Contender { return rotated(insts, rep) }

// rotated is xs rotated left by rep−1 places: round rep's order.
func rotated[T any](xs []T, rep int) []T {
	n := len(xs)
	order := make([]T, n)
	for i := range xs {
		order[i] = xs[(i+rep-1)%n]
	}
	return order
}

// inTurn runs an engine's own run and its flipped --explain runs (runs[0] and the rest) in round
// rep's turn, rotated as the engines are: with one knob the flipped run comes second in odd
// rounds and first in even ones. Whatever the second server of a pair meets (a warmer page
// cache, a neighbour's burst) then falls on either side of a knob's effect, never on the same
// side every round, where pairing by round would make it look precise.
func inTurn(runs []func() error, rep int) error {
	for _, run := range rotated(runs, rep) {
		if err := run(); err != nil {
			return err
		}
	}
	return nil
}

// noteOthersLive says, in the log, the report's notes and the step's result, when another
// fairbench's servers ran on this machine as a measured step began or ended: the engines then
// shared the CPU and disk with them, and their figures are low by an unknown amount (two compares
// at once each measured about half their TPS alone). The step is marked busy, as a step that
// shared the CPU with other processes is, so every pick drawn from it says so.
func (c *comparison) noteOthersLive(res *result.Result, before []string) {
	others := slices.Compact(slices.Sorted(slices.Values(append(before, c.othersLive()...))))
	if len(others) == 0 {
		return
	}
	if res.Machine == nil {
		res.Machine = &result.MachineLoad{}
	}
	res.Machine.Busy, res.Machine.OtherFairbench = true, others
	note := fmt.Sprintf("Another fairbench was running servers on this machine during this comparison (%s): the engines shared the machine with them, so their figures may be low and are not comparable with a run alone.", strings.Join(others, "; "))
	c.logf("== warning: %s", note)
	if !slices.ContainsFunc(c.env.Notes, func(n string) bool { return strings.HasPrefix(n, "Another fairbench") }) {
		c.env.Notes = append(c.env.Notes, note)
	}
}

// connectionHeadroom is what a server needs beyond the clients: fairbench's admin and monitor
// connections, the fingerprint's and a loader's.
const connectionHeadroom = 10

// raiseConnections lifts the fair profile's max_connections, alike for every engine, where a
// step runs more clients than it allows (a thread sweep to 512), and returns the new limit (0
// when it was enough). The defaults profile keeps each package's own limit, as it promises.
func raiseConnections(p *profile.Profile, steps []suite.Resolved) int {
	if p.Mode == profile.ModeDefaults {
		return 0
	}
	need := 0
	for _, st := range steps {
		for _, th := range st.Threads {
			need = max(need, th+connectionHeadroom)
		}
	}
	if p.MaxConnections == 0 {
		p.MaxConnections = profile.Default().MaxConnections
	}
	if need <= p.MaxConnections {
		return 0
	}
	p.MaxConnections = need
	return need
}

// coreSweep runs the suite on inst once per --server-cpus entry (once, unconfined, without
// one), the counts of one engine one after another so a drifting machine moves them alike.
func (c *comparison) coreSweep(ctx context.Context, inst Contender, rep int) error {
	for _, n := range append([]int{}, c.opts.ServerCPUs...) {
		prof := c.opts.Profile
		prof.CPUs = n
		if err := c.engine(ctx, inst, rep, prof); err != nil {
			return err
		}
	}
	if len(c.opts.ServerCPUs) == 0 {
		return c.engine(ctx, inst, rep, c.opts.Profile)
	}
	return nil
}

// pinClient keeps this process (the client) off the CPUs of a server confined to n, on the
// CPUs left; with none left it stays where it was, sharing them, and says so.
func (c *comparison) pinClient(n int) (restore func(), err error) {
	if n <= 0 {
		return func() {}, nil
	}
	rest := engine.ClientCPUs(n)
	if len(rest) == 0 {
		c.logf("   server on CPUs %s, all this machine gives fairbench: the client shares them", cgroup.CPUList(engine.ServerCPUs(n)))
		return func() {}, nil
	}
	c.logf("   server on CPUs %s, client on CPUs %s", cgroup.CPUList(engine.ServerCPUs(n)), cgroup.CPUList(rest))
	return cgroup.PinProcess(rest)
}

// flipped runs the suite on inst with knob flipped, beside inst's own run of the round (inTurn):
// near it in time, so that a machine whose speed drifts (steal, other tenants) moves the two
// figures alike.
func (c *comparison) flipped(ctx context.Context, inst Contender, rep int, knob string) error {
	prof := c.opts.Profile
	prof.Flip = []string{knob}
	c.logf("== explain %s: %s with that one knob flipped", knob, inst.Kind)
	return c.engine(ctx, inst, rep, prof)
}

func hasOption(spec workload.Spec, name string) bool {
	return slices.ContainsFunc(spec.Options, func(o workload.Option) bool { return o.Name == name })
}

func stepCount(steps []suite.Resolved) int {
	n := 0
	for _, st := range steps {
		n += len(st.Threads)
	}
	return n
}

type comparison struct {
	opts       *Options
	steps      []suite.Resolved
	resultsDir string
	started    time.Time
	doneSteps  int
	totalSteps int
	// runs is how many runs of the suite a round holds: one per engine and core count, and per
	// --explain knob that applies.
	runs  int
	hosts *clientHosts // nil: the clients run in this process
	env   *result.Environment
	// brackets are each run's last capacity bracket, where a step has an objective, by the run's name
	// apart from its round: engine, step, thread count, cores and flipped knob.
	brackets map[string][2]float64
	// othersLive lists the servers of another live fairbench on this machine (engine.OthersLive).
	othersLive func() []string
	// only, during an added round, is the open steps (by stepKey) this engine runs, each at the
	// pick's thread count; nil runs every step.
	only map[string]int
	// stepOf maps a result's workload name (result.WorkloadID) to its step's key.
	stepOf map[string]string
	costs  costs
}

func (c *comparison) logf(format string, args ...any) {
	if c.opts.Log != nil {
		fmt.Fprintf(c.opts.Log, format+"\n", args...)
	}
}

// serverWorkDir is where a server's data directory goes: the work directory, or with
// --device a loop device made for this one server, which close removes (after the server stops).
func (c *comparison) serverWorkDir(ctx context.Context, name string) (dir string, close func() error, err error) {
	o := c.opts
	if o.DeviceBytes <= 0 {
		return o.WorkDir, func() error { return nil }, nil
	}
	if _, err := throttle.ReapStale(o.WorkDir); err != nil {
		c.logf("   reaping loop devices left by a killed fairbench: %v", err)
	}
	dev, err := throttle.NewDevice(ctx, throttle.DeviceOptions{WorkDir: o.WorkDir, SizeBytes: o.DeviceBytes, NoJournal: o.DeviceNoJournal})
	if err != nil {
		return "", nil, fmt.Errorf("a loop device for %s: %w", name, err)
	}
	c.logf("   %s: data directory on %s (%s), a loop device of its own: disk figures from /sys/block/%s/stat",
		name, dev.Path, dev.DevNum(), filepath.Base(dev.Path))
	return dev.Dir, dev.Close, nil
}

// eta extrapolates from the steps done so far; before the first one it uses the suite's estimate.
func (c *comparison) eta() string {
	if c.doneSteps == 0 {
		return "~" + (c.opts.Suite.Estimate() * time.Duration(c.runs)).Round(time.Second).String()
	}
	per := time.Since(c.started) / time.Duration(c.doneSteps)
	return (per * time.Duration(c.totalSteps-c.doneSteps)).Round(time.Second).String()
}

// engine runs the whole suite on one server: a freshly started throwaway one, always stopped
// after, or the user's (a target), its fairbench tables always dropped after.
func (c *comparison) engine(ctx context.Context, inst Contender, rep int, prof profile.Profile) (err error) {
	name := inst.Name()
	// What the round cost outside its steps (start, load, fingerprint, stop), for rounds until
	// decided: deferred first, so it runs last, after the server stopped; an --explain run's
	// flipped profile is not what an added round starts.
	began, inSteps := time.Now(), time.Duration(0)
	defer func() {
		if len(prof.Flip) == 0 {
			c.costs.overhead[name] = time.Since(began) - inSteps
		}
	}()
	open := c.startServer
	if inst.Target != nil {
		open = c.attachServer
	}
	srv, closeServer, err := open(ctx, inst, prof)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := closeServer(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	inSteps, err = c.suiteOn(ctx, srv, rep, prof)
	return err
}

// startServer starts a throwaway server of inst with prof, its data directory on a loop device
// of its own where --device asks; close stops it and removes both.
func (c *comparison) startServer(ctx context.Context, inst Contender, prof profile.Profile) (*roundServer, func() error, error) {
	name := inst.Name()
	c.logf("== %s %s (%s): starting a throwaway server, profile %s (ETA %s)", name, inst.Version, inst.Origin, profileText(prof), c.eta())
	workDir, closeDevice, err := c.serverWorkDir(ctx, name)
	if err != nil {
		return nil, nil, err
	}
	srv, err := throwaway.Start(ctx, inst.Installation, prof, workDir)
	if err != nil {
		return nil, nil, errors.Join(fmt.Errorf("starting %s: %w", name, err), closeDevice())
	}
	stop := func() error {
		var errs []error
		if err := srv.Close(); err != nil {
			errs = append(errs, fmt.Errorf("stopping %s: %w", name, err))
		}
		c.logf("== %s: server stopped, data directory removed", name)
		if err := closeDevice(); err != nil {
			errs = append(errs, fmt.Errorf("removing %s's loop device: %w", name, err))
		}
		return errors.Join(errs...)
	}
	if err := fault.Check(srv.FaultCluster(), c.opts.Faults); err != nil {
		return nil, nil, errors.Join(err, stop())
	}
	unpin, err := c.pinClient(prof.CPUs)
	if err != nil {
		return nil, nil, errors.Join(err, stop())
	}
	stopRelay, err := c.hosts.serve(srv.Target.Port)
	if err != nil {
		unpin()
		return nil, nil, errors.Join(err, stop())
	}
	return throwawayServer(srv, inst), func() error {
		stopRelay()
		unpin()
		return stop()
	}, nil
}

// suiteOn runs every step of the suite (or of the round's open picks) on srv, loading each data
// set once, and says how long its steps took; a target's fairbench tables are dropped after.
func (c *comparison) suiteOn(ctx context.Context, srv *roundServer, rep int, prof profile.Profile) (inSteps time.Duration, err error) {
	o := c.opts
	rnd := randgen.DefaultConfig(o.Suite.RandType)
	var data loadedData
	if srv.attached {
		defer func() {
			if cerr := c.dropData(ctx, srv, &data); cerr != nil && err == nil {
				err = cerr
			}
		}()
	}
	for _, st := range c.steps {
		threadCounts := st.Threads
		if c.only != nil {
			t, ok := c.only[stepKey(st)]
			if !ok {
				continue
			}
			threadCounts = []int{t}
		}
		j, err := newJob(srv.target, st, rnd, o.Seed, filepath.Join(o.OutDir, "tpch-answers"))
		if err != nil {
			return inSteps, err
		}
		j.Live = o.Live
		if err := c.load(ctx, srv, &data, j, st); err != nil {
			return inSteps, err
		}
		for _, threads := range threadCounts {
			if o.beforeStep != nil {
				if err := o.beforeStep(c.doneSteps); err != nil {
					return inSteps, err
				}
			}
			run := stepRun{srv: srv, prof: prof, dataset: data.dataset, threads: threads, rep: rep}
			t0 := time.Now()
			err := c.step(ctx, j, st, run)
			inSteps += time.Since(t0)
			c.costs.step[srv.name()+"|"+stepKey(st)] = time.Since(t0)
			if err != nil {
				return inSteps, err
			}
		}
	}
	return inSteps, nil
}

// loadedData is what one server holds: the data set's key, the job that loaded it (whose
// Cleanup drops it) and its fingerprint.
type loadedData struct {
	key     string
	job     *job.Job
	dataset *result.Dataset
}

// load makes the server hold j's data set: a step that needs other data than the last has the
// last one's tables dropped and its own loaded and fingerprinted; one that needs the same reuses it.
func (c *comparison) load(ctx context.Context, srv *roundServer, data *loadedData, j *job.Job, st suite.Resolved) error {
	o := c.opts
	name := srv.name()
	key := j.Spec.DatasetKey(j.Options)
	if key == data.key {
		data.job = j
		return nil
	}
	if data.job != nil {
		if err := data.job.Cleanup(ctx, data.job.Env(1, false, nil, o.Log)); err != nil {
			return err
		}
	}
	c.logf("   %s: preparing %s", name, key)
	t0 := time.Now()
	// On a target, fairbench's own tables left by an interrupted run are replaced; another's
	// table of the same name is refused, as always.
	if err := j.Prepare(ctx, j.Env(max(2, runtime.NumCPU()), srv.attached, nil, o.Log)); err != nil {
		return fmt.Errorf("preparing %s on %s: %w", st.Workload, name, err)
	}
	c.logf("   %s: prepared in %.1fs", name, time.Since(t0).Seconds())
	data.key, data.job = key, j
	var err error
	if data.dataset, err = fingerprint.Take(ctx, srv.conn); err != nil {
		return fmt.Errorf("fingerprinting the data loaded on %s: %w", name, err)
	}
	c.logf("   %s: data fingerprinted in %.1fs", name, data.dataset.Seconds)
	if a, ok := j.Workload.(workload.Answerer); ok {
		data.dataset.Answers = a.Answers(ctx, srv.conn)
	}
	if s, ok := j.Workload.(workload.SourceMixer); ok {
		data.dataset.SourceMix = s.SourceMix()
	}
	return nil
}

// stepRun is what one step records beside its measurements.
type stepRun struct {
	srv          *roundServer
	prof         profile.Profile
	dataset      *result.Dataset
	threads, rep int
}

// step runs one workload at one thread count and writes its result, complete or not.
func (c *comparison) step(ctx context.Context, j *job.Job, st suite.Resolved, run stepRun) error {
	o := c.opts
	srv, threads := run.srv, run.threads
	engName := srv.name()
	c.waitQuiet(ctx, srv.pids)
	c.logf("   %s: %s, %d threads, %s (step %d/%d, ETA %s)", engName, st.Workload, threads, st.Time, c.doneSteps+1, c.totalSteps, c.eta())
	mon, closeMon, err := srv.watch(ctx)
	if err != nil {
		return fmt.Errorf("watching %s: %w", engName, err)
	}
	defer closeMon()
	cfg := runner.Config{Threads: threads, Duration: st.Time, Warmup: stepWarmup(j, st), ReportInterval: st.ReportInterval,
		MaxTries: st.MaxTries, Rate: st.Rate, Progress: o.IntervalLog, Ramp: runner.RampFrom(st.Ramp)}
	j.PIDs, j.WaitEvery = srv.pids, o.WaitEvery
	routing := c.route(j, srv)
	j.Faults, j.Cluster = o.Faults, srv.fault
	// After a fault the data must still hold together (money conserved, TPC-C's conditions):
	// checked on the survivors after every step, whatever the workload's own habit.
	j.CheckAfterRun = j.CheckAfterRun || len(o.Faults) > 0
	clients := j.Run
	if c.hosts != nil {
		clients = func(ctx context.Context, cfg runner.Config) (*result.Result, error) { return c.hosts.run(ctx, j, cfg) }
	}
	othersBefore := c.othersLive()
	measure := func(ctx context.Context, cfg runner.Config) (*result.Result, error) {
		return j.Measured(ctx, cfg, mon, clients)
	}
	var res *result.Result
	var runErr error
	if st.SLO != "" {
		res, runErr = c.capacity(ctx, st, engName, resultName(engName, st, run, 1), threads, measure)
	} else {
		res, runErr = machineload.Unstolen(ctx, func(ctx context.Context) (*result.Result, error) { return measure(ctx, cfg) }, c.stolen(engName, st.Workload))
	}
	if res == nil {
		return runErr
	}
	c.noteOthersLive(res, othersBefore)
	res.Routing, res.Step = routing, st.Name
	c.stepOf[res.WorkloadID()] = stepKey(st)
	c.annotate(res, st, run)
	// job.Run checked the data after the run where the workload asks for it, and marked a
	// run that broke the data's invariants incomplete.
	if dc := res.DataCheck; dc != nil && dc.Passed {
		c.logf("   %s: %s: data check passed", engName, st.Workload)
	} else if dc != nil {
		runErr = fmt.Errorf("%s on %s: %s", st.Workload, engName, res.Error)
	}
	name := resultName(engName, st, run, o.Suite.Repeat)
	if err := result.Write(filepath.Join(c.resultsDir, name+".json"), res); err != nil {
		return err
	}
	c.doneSteps++
	c.logOutcome(engName, st.Workload, res)
	return runErr
}

// stolen logs a window set aside for steal (machineload.Unstolen).
func (c *comparison) stolen(engName, workload string) func(result.SetAsideWindow) {
	return func(w result.SetAsideWindow) {
		c.logf("   %s: %s: the hypervisor stole %.0f%% of the machine over the window (%.0f TPS): measuring again", engName, workload, w.StealPctMean, w.TPS)
	}
}

// capacity runs a step with a latency objective as a capacity search on the server (its threads
// are the open loop's connections), one confirmation round per compare round: the rounds' own
// capacities, in rotated order, give the pick its interval as they do throughput's. A later round
// starts from the bracket the engine's last round found (Plan's hint), so it costs a few rates.
// key names the run apart from its round (resultName's): a run with a knob flipped, or on fewer
// cores, keeps a bracket of its own, so neither starts from the other's capacity.
func (c *comparison) capacity(ctx context.Context, st suite.Resolved, engName, key string, threads int, measure capacity.Measure) (*result.Result, error) {
	objective, err := slo.Parse(st.SLO)
	if err != nil {
		return nil, err
	}
	hint := c.brackets[key]
	s := capacity.Settings{SLO: objective, Connections: threads, Window: st.Time, Warmup: st.Warmup,
		Budget: capacityBudget(st), Log: c.opts.Log,
		Plan: capacity.Plan{Start: objective.StartRate(st.Time), Rounds: 1, HintLow: hint[0], HintHigh: hint[1]}}
	res, err := capacity.Search(ctx, s, measure)
	if res != nil && res.Capacity != nil {
		if lo, hi, ok := capacity.Bracket(res.Capacity); ok {
			c.brackets[key] = [2]float64{lo, hi}
		}
		c.logf("   %s: %s", engName, capacity.Line(res.Capacity))
	}
	return res, err
}

// capacityBudget bounds one step's search: a climb of ten rates, a bisection of five and its
// confirmation, each a warm-up and a window.
func capacityBudget(st suite.Resolved) time.Duration { return 20 * (st.Time + st.Warmup) }

// DefaultQuietWait is how long compare's steps wait for a quiet machine unless told otherwise.
const DefaultQuietWait = 30 * time.Second

// waitQuiet holds a step back, up to QuietWait, while processes other than fairbench and the
// server use more than machineload.BusyPct of the machine's CPU, saying so; then the step runs
// anyway and its result is marked busy (job.Measured records the machine's load per interval).
func (c *comparison) waitQuiet(ctx context.Context, server func() []int) {
	wait := c.opts.QuietWait
	if wait <= 0 {
		return
	}
	said := false
	others := machineload.WaitQuiet(ctx, server, wait, func(pct float64) {
		if !said {
			c.logf("   waiting up to %s for the machine to be quiet: other processes use %.0f%% of its CPU", wait, pct)
			said = true
		}
	})
	if others > machineload.BusyPct {
		c.logf("   the machine is still busy (other processes use %.0f%% of its CPU): measuring anyway; the result and the report say so", others)
	}
}

// annotate records beside a step's measurements what it ran on: the engine, profile, data set,
// its label among the suite's runs, and the server's settings beside its figures.
func (c *comparison) annotate(res *result.Result, st suite.Resolved, run stepRun) {
	srv := run.srv
	res.Engine.Kind = srv.kind
	res.Engine.Alias, res.Engine.Build, res.Engine.AsConfigured = srv.alias, srv.build, srv.attached
	res.Profile = run.prof.Name()
	if srv.attached {
		res.Profile = AsConfigured
		if len(srv.applied) > 0 {
			res.Profile = AsConfiguredWithProfile
		}
	}
	res.Flipped = run.prof.Flip
	res.Dataset = run.dataset
	res.Round = run.rep
	if len(st.Threads) > 1 {
		res.Label = fmt.Sprintf("threads=%d", run.threads)
	}
	if len(c.opts.ServerCPUs) > 1 {
		// Each core count is a variant of the engine: its own curve by threads in the report.
		res.Label = fmt.Sprintf("cpus=%d", run.prof.CPUs)
	}
	if srvRes := res.Server; srvRes != nil {
		srvRes.Profile = srv.applied
		srvRes.Translations = srv.translations
		srvRes.Settings = srv.settings
		recordCPUs(srvRes, run.prof.CPUs)
		res.FlipExpect = profile.FlipExpect(run.prof.Flip, srv.kind, srv.applied)
	}
}

// logOutcome logs a step's headline figures once its result is written.
func (c *comparison) logOutcome(engName, workloadName string, res *result.Result) {
	state := ""
	if !res.Complete {
		state = " INCOMPLETE"
	}
	if t := res.TPCH; t != nil {
		ok := 0
		for _, q := range t.Queries {
			if q.Status == "ok" {
				ok++
			}
		}
		c.logf("   %s: %s: %d/%d answers ok, geometric mean %.3f s%s", engName, workloadName, ok, len(t.Queries), t.GeoMeanS, state)
	} else {
		c.logf("   %s: %s: %.1f TPS, p95 %.2f ms, %d errors%s", engName, workloadName, res.TPS, res.LatencyMS.P95, res.Errors, state)
	}
}

// recordCPUs notes in the result where a server confined to n CPUs ran, and its client.
func recordCPUs(srv *result.Server, n int) {
	if n <= 0 {
		return
	}
	srv.CPUs = n
	srv.CPUList = cgroup.CPUList(engine.ServerCPUs(n))
	if rest := engine.ClientCPUs(n); len(rest) > 0 {
		srv.ClientCPUList = cgroup.CPUList(rest)
	} else {
		srv.ClientCPUList = srv.CPUList + " (shared with the server)"
	}
}

// resultName names a step's results file after engine and release (postgres@17-oltp_read_write):
// two versions of one engine in one comparison, a sweep's steps, a ramp, an --explain run and a
// repeat must not overwrite each other.
func resultName(engName string, st suite.Resolved, run stepRun, repeat int) string {
	// A workload file's path as one name: its '/'s made the results nested directories, and a
	// "../" would have put them outside --out.
	name := engName + "-" + fileSafe(st.Workload)
	if st.Name != "" {
		name += "-" + fileSafe(st.Name)
	}
	if len(st.Threads) > 1 {
		name += fmt.Sprintf("-t%d", run.threads)
	}
	if st.Ramp != nil {
		name += "-ramp"
	}
	if run.prof.CPUs > 0 {
		name += fmt.Sprintf("-cpus%d", run.prof.CPUs)
	}
	if len(run.prof.Flip) > 0 {
		name += "-explain-" + strings.Join(run.prof.Flip, "-")
	}
	if repeat > 1 {
		name += fmt.Sprintf("-%d", run.rep)
	}
	return name
}

// fileSafe is a step name as part of a file name: letters, digits, '.' and '_' kept, runs of
// anything else one '-'.
func fileSafe(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range s {
		ok := r == '.' || r == '_' || (r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z')
		switch {
		case ok:
			b.WriteRune(r)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}

func writeEnvironment(dir string, env *result.Environment) error {
	return result.WriteJSON(filepath.Join(dir, "environment.json"), env)
}

// fairnessSummary is the profile in words, for the report's fairness section.
func fairnessSummary(p profile.Profile) map[string]string {
	if p.Mode == profile.ModeDefaults {
		return map[string]string{
			"profile": "defaults: each engine as its package ships it (buffer pool, WAL/redo, max_connections, binary log); only the loopback address and the character set are set",
		}
	}
	return map[string]string{
		"profile": "fair: the same settings on every engine",
		"buffer pool (shared_buffers = innodb_buffer_pool_size)": fmt.Sprintf("%d MiB", p.BufferPoolBytes>>20),
		"max connections": fmt.Sprint(p.MaxConnections),
		"redo / WAL size (max_wal_size = innodb redo capacity)": fmt.Sprintf("%d MiB", p.RedoBytes>>20),
		"durable commits":             "fsync + synchronous_commit=on; innodb_flush_log_at_trx_commit=1",
		"binary log (MySQL, MariaDB)": onOff(p.Binlog),
	}
}

func notes(p profile.Profile) []string {
	n := []string{"Each engine ran alone on the machine, in a fresh data directory, started and stopped by fairbench."}
	switch {
	case p.Mode == profile.ModeDefaults:
		n = append(n, "Profile defaults: each engine ran with its package's own settings, so they differ (MySQL writes and syncs a binary log, MariaDB and PostgreSQL do not; buffer pools and redo sizes are each engine's default); the parity section lists every difference.")
	case !p.Binlog:
		n = append(n, "The binary log is off on MySQL and MariaDB (as PostgreSQL has no equivalent on by default); --binlog turns it on for both.")
	default:
		n = append(n, "The binary log is on for MySQL and MariaDB, with sync_binlog=1.")
	}
	return n
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// route points j's measured clients at postgres-ha's replicas when --read-replicas asks and the
// workload only reads (prefer-standby: a replica where one answers), and says where they ran;
// "" for engines without a leader (galera's nodes all take writes, single servers).
func (c *comparison) route(j *job.Job, srv *roundServer) string {
	j.ReadTarget = nil
	if srv.kind != discovery.PostgresHA {
		return ""
	}
	if !c.opts.ReadReplicas || !j.Workload.Traits().ReadOnly {
		return "leader"
	}
	rt := srv.target.WithSessionAttrs("prefer-standby")
	j.ReadTarget = &rt
	return "replicas"
}
