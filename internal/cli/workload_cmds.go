package cli

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/fairbench/fairbench/internal/attach"
	"github.com/fairbench/fairbench/internal/job"
	"github.com/fairbench/fairbench/internal/output"
	"github.com/fairbench/fairbench/internal/randgen"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/runner"
	"github.com/fairbench/fairbench/internal/runspec"
	"github.com/fairbench/fairbench/internal/slo"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/waits"
	"github.com/fairbench/fairbench/internal/workload"
)

// jobFlags are the flags every workload command shares: the target, the workload, the workload's
// own options and the random-number settings.
type jobFlags struct {
	target, workload string
	opts             map[string]*string
	rnd              randgen.Config
	seed             uint64
}

func (f *jobFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.target, "target", "", "server DSN: postgres://user:pass@host:port/db, mysql://..., mariadb://...")
	fs.StringVar(&f.workload, "workload", "", "workload name (see 'fairbench workloads')")
	f.opts = map[string]*string{}
	// Every workload's options become flags; a workload rejects the ones that are not its own.
	// A flag's text gives each workload's default where they differ; an empty flag value means
	// "not given", so the workload's own default (or prepare's record) applies.
	seen := map[string]bool{}
	for _, s := range workload.OptionOwners() {
		for _, o := range s.Options {
			seen[o.Name] = true
		}
	}
	for _, n := range slices.Sorted(maps.Keys(seen)) {
		help, defaults := workload.DescribeOption(n)
		if defaults != `""` {
			help += " (default " + defaults + ")"
		}
		f.opts[n] = fs.String(n, "", "workload option: "+help)
	}
	d := randgen.DefaultConfig("uniform")
	fs.StringVar(&f.rnd.Type, "rand-type", d.Type, "distribution of row ids: uniform, special (sysbench 1.0.20's default), gaussian, pareto, zipfian")
	fs.Uint64Var(&f.seed, "rand-seed", 0, "random seed; 0 = from the clock")
	fs.IntVar(&f.rnd.SpecIter, "rand-spec-iter", d.SpecIter, "iterations for the special and gaussian distributions")
	fs.IntVar(&f.rnd.SpecPct, "rand-spec-pct", d.SpecPct, "percent of the range that special's hot values fall in")
	fs.IntVar(&f.rnd.SpecRes, "rand-spec-res", d.SpecRes, "percent of special values that are hot")
	fs.Float64Var(&f.rnd.ParetoH, "rand-pareto-h", d.ParetoH, "shape parameter of the pareto distribution")
	fs.Float64Var(&f.rnd.ZipfExp, "rand-zipfian-exp", d.ZipfExp, "exponent of the zipfian distribution")
}

// showWorkloadHelp makes `CMD --workload NAME --help` end with NAME's options and its own
// defaults, and plain `CMD --help` say how to see them.
func (f *jobFlags) showWorkloadHelp(cmd *cobra.Command) {
	plain := cmd.HelpFunc()
	cmd.SetHelpFunc(func(c *cobra.Command, args []string) {
		plain(c, args)
		w := c.OutOrStdout()
		spec, err := workload.Lookup(f.workload)
		if f.workload == "" || err != nil {
			fmt.Fprintf(w, "\nWorkload options' defaults differ by workload: '%s --workload NAME --help' lists NAME's own.\n", c.CommandPath())
			return
		}
		fmt.Fprintf(w, "\nOptions of %s, with its defaults:\n%s", spec.Name, spec.OptionsHelp())
		if len(spec.DataOptions) > 0 && c.Name() != "prepare" {
			fmt.Fprintf(w, "\n%s takes --%s from what prepare recorded on the target; given, they must match it.\n",
				c.Name(), strings.Join(spec.DataOptions, ", --"))
		}
	})
}

// parseTarget reads a --target DSN and its password (password_file=, the environment); an error
// is the user's input.
func parseTarget(dsn string) (sqldb.Target, error) {
	t, err := sqldb.ParseTarget(dsn)
	if err == nil {
		err = t.ResolvePassword(os.Getenv)
	}
	return t, badInput(err)
}

// job builds the job from the flags: every input error surfaces here, before any server is touched.
func (f *jobFlags) job(fs *pflag.FlagSet) (*job.Job, error) {
	if f.workload == "" {
		return nil, badInputf("no workload given: pass --workload NAME (see 'fairbench workloads')")
	}
	t, err := parseTarget(f.target)
	if err != nil {
		return nil, err
	}
	set := map[string]string{}
	for n, v := range f.opts {
		if fs.Changed(n) {
			set[n] = *v
		}
	}
	j, err := job.New(t, f.workload, set, f.rnd, f.seed)
	return j, badInput(err)
}

// refuseArrivals refuses, before any connection, an arrival rate (run --rate, capacity) for a
// workload whose clients each run a fixed list of queries (TPC-H's tests), which no rate paces.
func refuseArrivals(j *job.Job, what string) error {
	if runner.IsFixedList(j.Workload) {
		return badInputf("%s: %s %s: drop %s, or choose a workload that runs until the time is up (oltp_*, tpcb, tpcc, a workload file)",
			what, j.Spec.Name, runner.FixedListConflict(runner.FixedRate), what)
	}
	return nil
}

// refuseWarmup says that a fixed list has no warm-up to give a time to, before any connection
// (the runner would refuse it too, after connecting).
func refuseWarmup(j *job.Job) error {
	if runner.IsFixedList(j.Workload) {
		return badInputf("--warmup: %s %s: drop --warmup", j.Spec.Name, runner.FixedListConflict(runner.FixedWarmup))
	}
	return nil
}

// connectCheck makes the first contact: unreachable servers and wrong passwords are the user's to fix.
func connectCheck(cmd *cobra.Command, j *job.Job) (string, error) {
	v, err := j.ServerVersion(cmd.Context())
	if cmd.Context().Err() != nil {
		return v, err // interrupted (Ctrl-C): not the input's fault
	}
	return v, badInput(err)
}

func newPrepareCmd() *cobra.Command {
	var f jobFlags
	var loadThreads int
	var force bool
	cmd := &cobra.Command{
		Use:   "prepare --target DSN --workload NAME [options]",
		Short: "Create and load the workload's tables",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			j, err := f.job(cmd.Flags())
			if err != nil {
				return err
			}
			ver, err := connectCheck(cmd, j)
			if err != nil {
				return err
			}
			out := cmd.ErrOrStderr()
			fmt.Fprintf(out, "Preparing %s on %s (%s)\n", j.Spec.Name, j.Target.Redacted(), ver)
			bar := progressBar(out)
			start := time.Now()
			// A throwaway server's data directory, found now: one that dies mid-load is gone after.
			hs, _ := findHostSource(cmd.Context(), j.Target, "")
			dataDir := ""
			if hs.Local != nil {
				dataDir = hs.Local.DataDir
			}
			if err := j.Prepare(cmd.Context(), j.Env(loadThreads, force, bar, out)); err != nil {
				return classify(diagnoseLoadFailure(cmd.Context(), err, dataDir))
			}
			if existing := j.Workload.Traits().ExistingTables; existing != nil {
				fmt.Fprintf(cmd.OutOrStdout(), "prepare: %s runs on existing tables (%s), which are there: nothing loaded\n", j.Spec.Name, strings.Join(existing, ", "))
				return nil
			}
			fmt.Fprintf(cmd.OutOrStdout(), "prepare: %s loaded in %.2fs\n", j.Spec.Name, time.Since(start).Seconds())
			return nil
		},
	}
	f.register(cmd.Flags())
	f.showWorkloadHelp(cmd)
	cmd.Flags().IntVar(&loadThreads, "load-threads", defaultLoadThreads(), "tables loaded in parallel")
	cmd.Flags().BoolVar(&force, "force", false, "drop and recreate tables that fairbench created earlier (never others)")
	return cmd
}

func defaultLoadThreads() int { return max(2, runtime.NumCPU()) }

// classify marks the errors that say the data on the target is not what the command needs
// (missing, not fairbench's, unfinished, other parameters) or that it cannot hold (a full
// disk) as the user's to fix.
func classify(err error) error {
	var np *workload.NotPreparedError
	var de *workload.DataError
	var full *sqldb.DiskFullError
	if errors.As(err, &np) || errors.As(err, &de) || errors.As(err, &full) {
		return badInput(err)
	}
	return err
}

// progressBar draws on a terminal and stays silent otherwise, so logs and CI output stay clean.
func progressBar(w io.Writer) func(done, total int64) {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	var bar *progressbar.ProgressBar
	return func(done, total int64) {
		if bar == nil {
			bar = progressbar.NewOptions64(total, progressbar.OptionSetWriter(w), progressbar.OptionSetDescription("rows"),
				progressbar.OptionShowCount(), progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
		}
		_ = bar.Set64(done)
	}
}

// newTargetCmd is the shape of cleanup and check: build the job, reach the server, do one thing.
func newTargetCmd(use, short string, action func(cmd *cobra.Command, j *job.Job) error) *cobra.Command {
	var f jobFlags
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			j, err := f.job(cmd.Flags())
			if err != nil {
				return err
			}
			if _, err := connectCheck(cmd, j); err != nil {
				return err
			}
			return action(cmd, j)
		},
	}
	f.register(cmd.Flags())
	f.showWorkloadHelp(cmd)
	return cmd
}

func newCleanupCmd() *cobra.Command {
	return newTargetCmd("cleanup --target DSN --workload NAME", "Drop the tables that fairbench's prepare created (and nothing else)",
		func(cmd *cobra.Command, j *job.Job) error {
			if err := j.Cleanup(cmd.Context(), j.Env(1, false, nil, cmd.ErrOrStderr())); err != nil {
				return classify(err)
			}
			if existing := j.Workload.Traits().ExistingTables; existing != nil {
				fmt.Fprintf(cmd.OutOrStdout(), "cleanup: %s runs on existing tables (%s), which are not fairbench's: none dropped\n", j.Spec.Name, strings.Join(existing, ", "))
				return nil
			}
			fmt.Fprintf(cmd.OutOrStdout(), "cleanup: %s tables dropped\n", j.Spec.Name)
			return nil
		})
}

func newCheckCmd() *cobra.Command {
	return newTargetCmd("check --target DSN --workload NAME", "Verify the workload's data after a run (row counts, invariants)",
		func(cmd *cobra.Command, j *job.Job) error { return runCheck(cmd, j) })
}

// runCheck runs the workload's data check and prints every verdict.
func runCheck(cmd *cobra.Command, j *job.Job) error {
	dc, err := j.Check(cmd.Context(), cmd.ErrOrStderr())
	if err != nil {
		return classify(err)
	}
	printVerdicts(cmd.OutOrStdout(), j.Spec.Name, dc)
	return job.CheckError(dc)
}

func printVerdicts(w io.Writer, name string, dc *result.DataCheck) {
	for _, v := range dc.Verdicts {
		mark := "ok  "
		if !v.OK {
			mark = "FAIL"
		}
		fmt.Fprintf(w, "check: %s %s %s\n", mark, v.Name, v.Detail)
	}
	if dc.Passed {
		fmt.Fprintf(w, "check: %s passed\n", name)
	}
}

type runFlags struct {
	threads        string
	duration       string
	warmup         string
	rate           float64
	reportInterval string
	maxTries       int
	out            string
	check          bool
	ramp           string
	slo            string
	objective      string // compare's --slo: a capacity objective for every step
	stages         string
	pool           int
	shard          string
	startAt        string
}

// register shows runspec's defaults in the help; only flags the user sets reach runspec.Resolve,
// which applies the defaults.
func (r *runFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&r.threads, "threads", strconv.Itoa(runspec.DefaultThreads), fmt.Sprintf("client threads, at most %d; a list such as 1,2,4,8 runs a thread sweep", runspec.MaxThreads))
	fs.StringVar(&r.duration, "time", runspec.DefaultTime.String(), "measured duration (30s, 2m; a bare number is seconds)")
	fs.StringVar(&r.warmup, "warmup", runspec.DefaultWarmup.String(), "run this long first without counting")
	fs.Float64Var(&r.rate, "rate", 0, "open loop: transactions per second in total (Poisson arrivals); 0 = closed loop")
	fs.StringVar(&r.reportInterval, "report-interval", runspec.DefaultReportInterval.String(), "interval between progress lines and interval records")
	fs.IntVar(&r.maxTries, "max-tries", runspec.DefaultMaxTries, "attempts per transaction on deadlocks and serialization failures")
	fs.StringVar(&r.out, "out", "", "write the result as JSON to this file")
	fs.BoolVar(&r.check, "check", false, "run the workload's data check after the run")
	fs.StringVar(&r.ramp, "ramp", "", "add clients step by step to the saturation point: add=1,every=10s,max=64 (--time then bounds the ramp; default: every step)")
	fs.StringVar(&r.slo, "slo", "", "with --ramp: stop when a step's p99 latency exceeds this, e.g. 50ms")
	fs.StringVar(&r.stages, "stages", "", "a stage ramp (the ingest/join study's load): add=1,every=30s,max=64[,delay=0-40ms]: a client per stage up to max, each request after a random delay (not counted as latency), clients sharing --pool connections")
	fs.IntVar(&r.pool, "pool", runspec.DefaultStagePool, "with --stages: connections the clients share; a client waits for a free one, and that wait is latency")
	fs.StringVar(&r.shard, "shard", "", "this process is shard I/N of a multi-host run: --threads and --rate are the whole run's, each shard takes its share (fairbench merge joins the results)")
	fs.StringVar(&r.startAt, "start-at", "", "begin measuring at this wall-clock time (RFC 3339, or +30s from now rounded up to a whole second), so shards on several hosts measure the same window")
}

// registerOverrides registers the run settings compare lays over a suite's.
func (r *runFlags) registerOverrides(fs *pflag.FlagSet) {
	fs.StringVar(&r.threads, "threads", strconv.Itoa(runspec.DefaultThreads), "client threads for every step (overrides the suite); a list runs a sweep")
	fs.StringVar(&r.duration, "time", runspec.DefaultTime.String(), "measured time of every step, ramps included (overrides the suite)")
	fs.StringVar(&r.warmup, "warmup", runspec.DefaultWarmup.String(), "warm-up before every step (overrides the suite)")
	fs.StringVar(&r.objective, "slo", "", "a latency objective for every step, e.g. 'p99<=10ms': each step searches for the highest arrival rate "+
		"that meets it (its capacity, docs/capacity.md) instead of running closed loop; --threads is then the connections")
}

// layer reads the run-setting flags the user gave, through runspec's rules.
func (r *runFlags) layer(fs *pflag.FlagSet) (runspec.Layer, error) {
	var l runspec.Layer
	var err error
	if fs.Changed("threads") {
		if l.Threads, err = runspec.ParseThreads("--threads", r.threads); err != nil {
			return l, err
		}
	}
	durations := []struct {
		flag     string
		v        string
		dst      **time.Duration
		positive bool
	}{{"time", r.duration, &l.Time, true}, {"warmup", r.warmup, &l.Warmup, false}, {"report-interval", r.reportInterval, &l.ReportInterval, true}}
	for _, d := range durations {
		if !fs.Changed(d.flag) {
			continue
		}
		parse := runspec.ParseDuration
		if d.positive {
			parse = runspec.ParsePositiveDuration
		}
		v, err := parse("--"+d.flag, d.v)
		if err != nil {
			return l, err
		}
		*d.dst = &v
	}
	if fs.Changed("rate") {
		if err := runspec.CheckRate("--rate", r.rate); err != nil {
			return l, err
		}
		l.Rate = &r.rate
	}
	if fs.Changed("max-tries") {
		if err := runspec.CheckMaxTries("--max-tries", r.maxTries); err != nil {
			return l, err
		}
		l.MaxTries = &r.maxTries
	}
	if fs.Changed("slo") && r.objective != "" {
		o, err := slo.Parse(r.objective)
		if err != nil {
			return l, badInput(err)
		}
		text := o.String()
		l.SLO = &text
	}
	if r.slo != "" && r.ramp == "" {
		return l, badInputf("--slo goes with --ramp: add --ramp add=1,every=10s,max=64")
	}
	if r.ramp != "" {
		if l.Ramp, err = runspec.ParseRamp(r.ramp, r.slo); err != nil {
			return l, err
		}
	}
	return l, r.stageLayer(fs, &l)
}

// stageLayer reads --stages and --pool into l.
func (r *runFlags) stageLayer(fs *pflag.FlagSet, l *runspec.Layer) error {
	if fs.Lookup("stages") == nil {
		return nil
	}
	switch {
	case r.stages == "" && fs.Changed("pool"):
		return badInputf("--pool goes with --stages: add --stages add=1,every=30s,max=64")
	case r.stages == "":
		return nil
	case r.ramp != "":
		return badInputf("--stages and --ramp are two kinds of ramp: give one")
	}
	var pool *int
	if fs.Changed("pool") {
		pool = &r.pool
	}
	var err error
	l.Ramp, err = runspec.ParseStages(r.stages, pool)
	return err
}

// config is the runner's configuration, less the thread count: one run per entry of the returned list.
func (r *runFlags) config(fs *pflag.FlagSet, progress io.Writer) (runner.Config, []int, error) {
	l, err := r.layer(fs)
	if err != nil {
		return runner.Config{}, nil, err
	}
	spec, err := runspec.Resolve(l)
	if err != nil {
		return runner.Config{}, nil, err
	}
	cfg := runner.Config{Duration: spec.Time, Warmup: spec.Warmup, Rate: spec.Rate, ReportInterval: spec.ReportInterval,
		MaxTries: spec.MaxTries, Ramp: runner.RampFrom(spec.Ramp), Progress: progress}
	return cfg, spec.Threads, nil
}

// checkWritable fails before a run whose result could not be written after it: the directory
// must exist and take a file, and a file already there must be a results file (an earlier run's,
// which the new one replaces), never some other file the user would lose. It creates and removes
// a probe beside the result.
func checkWritable(out string) error {
	if out == "" {
		return nil
	}
	if err := output.Check("--out", out, isResults); err != nil {
		return badInput(err)
	}
	return nil
}

// isResults says whether the file at path is a fairbench results file.
func isResults(path string) bool {
	_, err := result.Read(path)
	return err == nil
}

// outPath names one step's file of a sweep: result.json becomes result-t16.json.
func outPath(out string, threads int, sweep bool) string {
	if !sweep || out == "" {
		return out
	}
	ext := filepath.Ext(out)
	return fmt.Sprintf("%s-t%d%s", strings.TrimSuffix(out, ext), threads, ext)
}

func newRunCmd() *cobra.Command {
	var f jobFlags
	var r runFlags
	var nodeExporter, metricsAddr string
	var flush bool
	var instrument string
	cmd := &cobra.Command{
		Use:   fmt.Sprintf("run --target DSN --workload NAME [--threads %d] [--time %s] [options]", runspec.DefaultThreads, runspec.DefaultTime),
		Short: "Run a workload and measure throughput and latency",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			j, err := f.job(cmd.Flags())
			if err != nil {
				return err
			}
			cfg, threads, err := r.config(cmd.Flags(), cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			if cfg.Rate > 0 {
				if err := refuseArrivals(j, "--rate"); err != nil {
					return err
				}
			}
			if cmd.Flags().Changed("warmup") && cfg.Warmup > 0 {
				if err := refuseWarmup(j); err != nil {
					return err
				}
			}
			sh, err := r.sharding(&cfg, threads)
			if err != nil {
				return err
			}
			hosts, err := measuredTarget(cmd, j, r.out, nodeExporter)
			if err != nil {
				return err
			}
			live, stopLive, err := startLive(metricsAddr, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer stopLive()
			j.Live = live
			j.CheckAfterRun, j.NoFlush = r.check, !flush
			if j.WaitEvery, err = instrumentEvery(instrument); err != nil {
				return err
			}
			for _, n := range threads {
				cfg.Threads = n
				if sh != nil {
					if cfg.Threads, err = sh.shard.Threads(n); err != nil {
						return err
					}
					if err := sh.wait(cmd.Context(), cfg.Warmup); err != nil {
						return err
					}
				}
				res, runErr := measureAttached(cmd.Context(), j, cfg, hosts)
				if res != nil && sh != nil {
					res.Shard = sh.record()
				}
				if res != nil {
					if err := showRun(cmd, j.Spec.Name, res, r.out, n, len(threads) > 1); err != nil {
						return err
					}
				}
				if runErr != nil {
					if res == nil {
						return classify(runErr)
					}
					return fmt.Errorf("run stopped: %w", runErr)
				}
			}
			return nil
		},
	}
	f.register(cmd.Flags())
	f.showWorkloadHelp(cmd)
	r.register(cmd.Flags())
	addMetricsFlag(cmd.Flags(), &metricsAddr)
	cmd.Flags().StringVar(&nodeExporter, "node-exporter", "", "URL of node_exporter's metrics on the server's machine (http://HOST:9100/metrics): host CPU, memory and disk from there")
	cmd.Flags().BoolVar(&flush, "flush", true, "write out the server's dirty pages before each measured step (PostgreSQL CHECKPOINT, "+
		"InnoDB's dirty pages to about zero) so every step starts from the same state; --flush=false skips it")
	addInstrumentFlag(cmd.Flags(), &instrument)
	return cmd
}

// measuredTarget is what a command that measures a target checks before it starts: its output
// file may be written, the server answers, and where its host figures come from.
func measuredTarget(cmd *cobra.Command, j *job.Job, out, nodeExporter string) (attach.Host, error) {
	if err := checkWritable(out); err != nil {
		return attach.Host{}, err
	}
	if _, err := connectCheck(cmd, j); err != nil {
		return attach.Host{}, err
	}
	return findHostSource(cmd.Context(), j.Target, nodeExporter)
}

// addInstrumentFlag declares --instrument, which turns the server-side wait sampling on or off.
func addInstrumentFlag(f *pflag.FlagSet, instrument *string) {
	f.StringVar(instrument, "instrument", "on", fmt.Sprintf("on: sample the clients' sessions on the server every %s "+
		"over the measured window (where the time went: CPU, log flush, locks, client...) and read the server's per-statement "+
		"accounts; off: neither; a duration (50ms) samples at that period", waits.DefaultEvery))
}

// instrumentEvery reads --instrument: the wait sampling's period, 0 for off; a duration sets
// the period itself (bench/instrument-overhead.sh measures what each costs).
func instrumentEvery(v string) (time.Duration, error) {
	switch v {
	case "on":
		return waits.DefaultEvery, nil
	case "off":
		return 0, nil
	}
	if d, err := time.ParseDuration(v); err == nil && d >= time.Millisecond && d <= time.Minute {
		return d, nil
	}
	return 0, badInputf("--instrument %q: write on, off, or a sampling period between 1ms and 1m such as 50ms", v)
}

// showRun prints one run's result and writes it under out (a sweep labels each run by its
// thread count and writes a file per count).
func showRun(cmd *cobra.Command, workloadName string, res *result.Result, out string, threads int, sweep bool) error {
	w := cmd.OutOrStdout()
	if res.Ramp != nil {
		printRamp(w, res)
	}
	if sweep {
		res.Label = fmt.Sprintf("threads=%d", threads)
	}
	printSummary(w, res)
	printServer(w, res.Server)
	printMachine(w, res.Machine)
	if res.DataCheck != nil {
		printVerdicts(w, workloadName, res.DataCheck)
	}
	if path := outPath(out, threads, sweep); path != "" {
		if err := result.Write(path, res); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "result written to %s\n", path)
	}
	return nil
}

// printMachine says what else the machine did during the run, and warns when it was busy.
func printMachine(w io.Writer, m *result.MachineLoad) {
	if m == nil {
		return
	}
	fmt.Fprintf(w, "Machine: other processes used %.1f%% of the CPU on average (peak %.1f%%), steal %.1f%% (peak %.1f%%)\n",
		m.OthersCPUPctMean, m.OthersCPUPctMax, m.StealPctMean, m.StealPctMax)
	if m.MemoryNSBefore > 0 {
		fmt.Fprintf(w, "    memory: %.0f ns a load before the window, %.0f after (other tenants' traffic slows it; steal does not show it)\n", m.MemoryNSBefore, m.MemoryNSAfter)
	}
	if m.Busy {
		fmt.Fprintf(w, "    WARNING: more than %.0f%% of the machine was busy with other work: these figures are weak evidence; measure again on a quiet machine\n", m.BusyPct)
	}
}

// printSummary is sysbench's end-of-run report, so its users read it without a guide.
func printSummary(w io.Writer, r *result.Result) {
	if r.TPCH != nil {
		printTPCH(w, r)
		return
	}
	per := func(n int64) float64 {
		if r.DurationS <= 0 {
			return 0
		}
		return float64(n) / r.DurationS
	}
	state := ""
	if !r.Complete {
		state = " (INCOMPLETE: " + r.Error + ")"
	}
	fmt.Fprintf(w, "%s on %s, %d threads%s\n", r.Workload.Name, r.Engine.Version, r.Threads, state)
	fmt.Fprintf(w, "SQL statistics:\n    queries performed:\n")
	fmt.Fprintf(w, "        read:                            %d\n", r.Queries.Read)
	fmt.Fprintf(w, "        write:                           %d\n", r.Queries.Write)
	fmt.Fprintf(w, "        other:                           %d\n", r.Queries.Other)
	fmt.Fprintf(w, "        total:                           %d\n", r.Queries.Total)
	fmt.Fprintf(w, "    transactions:                        %-8d (%.2f per sec.)\n", r.Transactions, r.TPS)
	fmt.Fprintf(w, "    queries:                             %-8d (%.2f per sec.)\n", r.Queries.Total, r.QPS)
	fmt.Fprintf(w, "    errors:                              %-8d (%.2f per sec.)\n", r.Errors, per(r.Errors))
	fmt.Fprintf(w, "    retries:                             %-8d (%.2f per sec.)\n", r.Retries, per(r.Retries))
	fmt.Fprintf(w, "General statistics:\n    total time:                          %.4fs\n", r.DurationS)
	fmt.Fprintf(w, "    client CPU:                          %.2fs (%.1f µs per transaction)\n", r.ClientCPUS, perTxnMicros(r))
	l := r.LatencyMS
	fmt.Fprintf(w, "Latency (ms):\n         avg: %.2f  p50: %.2f  p90: %.2f  p95: %.2f  p99: %.2f  p99.9: %.2f  max: %.2f\n",
		l.Avg, l.P50, l.P90, l.P95, l.P99, l.P999, l.Max)
	if len(r.Metrics) > 0 {
		for _, k := range slices.Sorted(maps.Keys(r.Metrics)) {
			fmt.Fprintf(w, "    %-37s%.2f\n", k+":", r.Metrics[k])
		}
	}
	if len(r.ByKind) > 0 {
		fmt.Fprintf(w, "By transaction type:\n")
		for _, k := range slices.Sorted(maps.Keys(r.ByKind)) {
			s := r.ByKind[k]
			fmt.Fprintf(w, "    %-14s %8d (%.2f per sec.)  avg %.2f  p95 %.2f  p99 %.2f ms  errors %d  retries %d  rollbacks %d\n",
				k, s.Transactions, s.TPS, s.LatencyMS.Avg, s.LatencyMS.P95, s.LatencyMS.P99, s.Errors, s.Retries, s.Rollbacks)
		}
	}
	if r.ScheduleLagMS != nil {
		fmt.Fprintf(w, "Schedule lag (ms): avg: %.2f  p99: %.2f  max: %.2f\n", r.ScheduleLagMS.Avg, r.ScheduleLagMS.P99, r.ScheduleLagMS.Max)
	}
}

// printTPCH is the analytical tests' summary: a time per query, and never a time for a wrong or
// timed-out answer.
func printTPCH(w io.Writer, r *result.Result) {
	t := r.TPCH
	state := ""
	if !r.Complete {
		state = " (INCOMPLETE: " + r.Error + ")"
	}
	fmt.Fprintf(w, "TPC-H %s test, scale factor %g, on %s%s\n", t.Mode, t.ScaleFactor, r.Engine.Version, state)
	fmt.Fprintf(w, "answers checked: %s\n", t.AnswersChecked)
	fmt.Fprintf(w, "%6s %7s %12s %10s  %s\n", "query", "stream", "seconds", "rows", "status")
	for _, q := range t.Queries {
		secs := fmt.Sprintf("%.3f", q.Seconds)
		if q.Status != "ok" {
			secs = "-"
		}
		fmt.Fprintf(w, "%6d %7d %12s %10d  %s %s\n", q.Query, q.Stream, secs, q.Rows, q.Status, q.Detail)
	}
	if t.GeoMeanS > 0 {
		fmt.Fprintf(w, "geometric mean: %.3f s\n", t.GeoMeanS)
	}
	if t.QueriesPerHour > 0 {
		fmt.Fprintf(w, "queries per hour: %.0f (%d streams)\n", t.QueriesPerHour, t.Streams)
	}
	if total, ok := t.LoadSeconds["total"]; ok {
		fmt.Fprintf(w, "load: %.1f s\n", total)
	}
}

func printRamp(w io.Writer, r *result.Result) {
	fmt.Fprintf(w, "Ramp (stopped: %s):\n", r.Ramp.StoppedBecause)
	for _, s := range r.Ramp.Steps {
		mark := ""
		if s.Threads == r.Ramp.SaturationThreads {
			mark = "  <- saturation point"
		}
		fmt.Fprintf(w, "    %4d threads  %10.2f tps  p95 %8.2f ms  p99 %8.2f ms%s\n", s.Threads, s.TPS, s.P95MS, s.P99MS, mark)
	}
}

func perTxnMicros(r *result.Result) float64 {
	if r.Transactions == 0 {
		return 0
	}
	return r.ClientCPUS * 1e6 / float64(r.Transactions)
}

func newWorkloadsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "workloads",
		Short: "List the workloads with a one-line description and their options",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			w := cmd.OutOrStdout()
			for _, s := range workload.All() {
				fmt.Fprintf(w, "%-24s %s\n", s.Name, s.Description)
				var opts []string
				for _, o := range s.Options {
					opts = append(opts, fmt.Sprintf("--%s=%s", o.Name, o.Default))
				}
				fmt.Fprintf(w, "%-24s options: %s\n", "", strings.Join(opts, " "))
			}
			fmt.Fprintf(w, "%-24s %s\n", "FILE.yaml", "your own workload: tables, generated rows and weighted transactions from a file (docs/workload-files.md)")
			var fileOpts []string
			for _, o := range workload.FileOptions {
				fileOpts = append(fileOpts, fmt.Sprintf("--%s=%s", o.Name, o.Default))
			}
			fmt.Fprintf(w, "%-24s options: %s (the second for existing_tables: true)\n", "", strings.Join(fileOpts, " "))
			if examples, _ := filepath.Glob(filepath.Join("examples", "workloads", "*.yaml")); len(examples) > 0 {
				fmt.Fprintf(w, "%-24s examples here: %s\n", "", strings.Join(examples, " "))
			}
			return nil
		},
	}
}
