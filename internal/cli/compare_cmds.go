package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fairbench/fairbench/internal/compare"
	"github.com/fairbench/fairbench/internal/document"
	"github.com/fairbench/fairbench/internal/engine"
	"github.com/fairbench/fairbench/internal/engine/discovery"
	"github.com/fairbench/fairbench/internal/engine/profile"
	"github.com/fairbench/fairbench/internal/output"
	"github.com/fairbench/fairbench/internal/report"
	"github.com/fairbench/fairbench/internal/runspec"
	"github.com/fairbench/fairbench/internal/suite"
)

func newEnginesCmd() *cobra.Command {
	var mysqlRoot string
	cmd := &cobra.Command{
		Use:   "engines",
		Short: "List the database engines fairbench can start on this machine",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			listEngines(cmd.OutOrStdout(), discovery.DiscoverWithClusters(mysqlRoot))
			return nil
		},
	}
	cmd.Flags().StringVar(&mysqlRoot, "mysql-root", "", "directory of a Debian root holding MySQL (default "+discovery.DefaultMySQLRoot()+")")
	return cmd
}

// compareFlags are compare's settings as the command line gives them.
type compareFlags struct {
	quietWait                                               time.Duration
	instrument                                              string
	engines, suiteName, out, mysqlRoot, workDir, bufferPool string
	profileName, explain, metricsAddr, serverCPUs, budget   string
	device                                                  string
	faults, targets                                         []string
	nodeExporters                                           string
	run                                                     runFlags
	clients                                                 clientFlags
	repeat                                                  int
	binlog, force, verbose, noJournal, readReplicas         bool
	applyProfile                                            bool
	seed                                                    uint64
}

func newCompareCmd() *cobra.Command {
	var c compareFlags
	cmd := &cobra.Command{
		Use:   "compare [--engines postgres,mariadb,mysql] [--suite quick|standard|FILE.yaml] [--out DIR]",
		Short: "Start each engine with the same tuning, run the suite on it, and write a comparison report",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := c.options(cmd)
			if err != nil {
				return err
			}
			live, stopLive, err := startLive(c.metricsAddr, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer stopLive()
			opts.Live = live
			runErr := compare.Run(cmd.Context(), opts)
			if _, err := os.Stat(filepath.Join(opts.OutDir, "report.md")); err == nil {
				fmt.Fprintf(cmd.OutOrStdout(), "report: %s and %s\n", filepath.Join(opts.OutDir, "report.md"), filepath.Join(opts.OutDir, "report.html"))
			}
			if runErr != nil {
				return fmt.Errorf("compare did not finish (what was measured is in %s, marked incomplete): %w", opts.OutDir, runErr)
			}
			return nil
		},
	}
	c.register(cmd.Flags())
	return cmd
}

// register declares compare's flags: what to compare and where the results go, then how the
// servers are set up, then what is injected or watched during the run.
func (c *compareFlags) register(f *pflag.FlagSet) {
	f.StringVar(&c.engines, "engines", "all", "engines to compare, e.g. postgres,mariadb,mysql or postgres@17,postgres@15 (a bare name = its newest installed version; all = every installed engine, newest each)")
	f.StringArrayVar(&c.targets, "targets", nil, "servers you run, compared as they are configured: NAME=DSN,NAME=DSN (e.g. pg15=postgres://bench@10.0.0.5/bench); "+
		"fairbench creates and drops only its own tables there, and changes no setting; with --targets, --engines adds throwaway servers only when given")
	f.BoolVar(&c.applyProfile, "apply-profile", false, "with --targets: set the fairness profile's settings that a running server takes (SET GLOBAL; ALTER SYSTEM and a reload) for each round, and put them back after; those that need a restart stay as configured and are named")
	f.StringVar(&c.nodeExporters, "node-exporter", "", "with --targets: NAME=URL,... a node_exporter on a remote target's host, for its CPU, memory and disk figures")
	f.StringVar(&c.suiteName, "suite", "quick", "suite: "+strings.Join(suite.Builtin(), ", ")+", or a YAML file (docs/suites.md)")
	c.run.registerOverrides(f)
	f.IntVar(&c.repeat, "repeat", runspec.DefaultRepeat, "rounds of the suite (default: the suite's own; quick has 5), the engine order rotated each round; picks carry intervals from them")
	f.StringVar(&c.budget, "budget", "auto", "time for the whole comparison: after the --repeat rounds, the picks still undecided get more rounds (only their steps and engines) until decided or this is spent; "+
		"auto = the suite's budget (quick: 10m), else twice the rounds' measured time; 0 = the --repeat rounds only")
	addInstrumentFlag(f, &c.instrument)
	f.DurationVar(&c.quietWait, "quiet-wait", compare.DefaultQuietWait, "before each step, wait up to this long for other processes to leave the CPU (0: do not wait); a step measured on a busy machine is marked either way")
	f.StringVar(&c.out, "out", "", "output directory (default out/compare-TIMESTAMP)")
	f.BoolVar(&c.force, "force", false, "replace results already in --out")
	c.registerServer(f)
	f.Uint64Var(&c.seed, "rand-seed", 0, "random seed; 0 = from the clock")
	f.BoolVar(&c.verbose, "verbose", false, "print the per-second interval lines too")
	f.StringArrayVar(&c.faults, "fault", nil, "inject a fault into a cluster engine during each step's measured window, e.g. kill-node@30s[,node=node2], "+
		"kill-leader@30s, stop-node@30s,for=10s (SIGSTOP/SIGCONT), partition-node@30s,for=10s; repeat the flag for several")
	f.BoolVar(&c.readReplicas, "read-replicas", false, "postgres-ha: run read-only workloads (oltp_read_only, oltp_point_select, select_random_*) on the replicas "+
		"(target_session_attrs=prefer-standby); mixed workloads stay on the leader; no effect on galera, whose every node takes reads and writes, or on single servers")
	addMetricsFlag(f, &c.metricsAddr)
	c.clients.register(f)
}

// registerServer declares the flags that say how each server is installed, tuned and confined.
func (c *compareFlags) registerServer(f *pflag.FlagSet) {
	f.StringVar(&c.mysqlRoot, "mysql-root", "", "directory of a Debian root holding MySQL (default "+discovery.DefaultMySQLRoot()+")")
	f.StringVar(&c.workDir, "workdir", "", "where the servers' throwaway data directories go (default the system temp dir)")
	f.StringVar(&c.device, "device", "", "put each server's data directory on a loop device of its own of this size (e.g. 8G; root): disk figures then come from the device's own counters, every write included")
	f.BoolVar(&c.noJournal, "device-no-journal", false, "make the --device filesystems without ext4's journal")
	f.StringVar(&c.bufferPool, "buffer-pool", "", "buffer pool of every engine (default 25% of RAM, at most 2G)")
	f.BoolVar(&c.binlog, "binlog", false, "turn the binary log on for MySQL and MariaDB (sync_binlog=1)")
	addProfileFlag(f, &c.profileName)
	f.StringVar(&c.explain, "explain", "", "run each engine again with one knob flipped, per knob, and report each knob's effect: "+knobList())
	f.StringVar(&c.serverCPUs, "server-cpus", "", "confine each server to this many CPUs (cgroup cpuset; root), the client to the others; a list such as 1,2 runs the suite once per count")
}

// options checks every flag and builds the comparison's options, planning it once so that a
// suite that cannot run fails here, before any server starts.
func (c *compareFlags) options(cmd *cobra.Command) (*compare.Options, error) {
	s, err := c.suite(cmd.Flags())
	if err != nil {
		return nil, err
	}
	given := c.targets
	if len(given) == 0 {
		given = s.Targets // the suite's targets:, where the command line names none
	}
	targets, err := compare.ParseTargets(given)
	if err != nil {
		return nil, badInput(err)
	}
	if err := compare.ParseNodeExporters(c.nodeExporters, targets); err != nil {
		return nil, badInput(err)
	}
	var engines []string
	if len(targets) == 0 || cmd.Flags().Changed("engines") {
		if _, err := discovery.Select(c.engines, c.mysqlRoot); err != nil {
			return nil, badInput(err)
		}
		engines = []string{c.engines}
	}
	prof, err := profileFromFlags(c.bufferPool, c.binlog, c.profileName)
	if err != nil {
		return nil, err
	}
	knobs, err := compare.ParseExplain(c.explain)
	if err != nil {
		return nil, badInput(err)
	}
	cpus, err := parseServerCPUs(c.serverCPUs, len(engine.ServerCPUs(1<<20)), os.Geteuid() == 0)
	if err != nil {
		return nil, err
	}
	deviceBytes, err := parseDevice(c.device)
	if err != nil {
		return nil, err
	}
	out := c.out
	if out == "" {
		out = filepath.Join("out", "compare-"+time.Now().Format("20060102-150405"))
	}
	if err := checkOutDir(out, c.force); err != nil {
		return nil, err
	}
	waitEvery, err := instrumentEvery(c.instrument)
	if err != nil {
		return nil, err
	}
	opts := &compare.Options{QuietWait: c.quietWait, WaitEvery: waitEvery, Engines: engines, Targets: targets, ApplyProfile: c.applyProfile, Suite: s, OutDir: out, Profile: prof, Explain: knobs, MySQLRoot: c.mysqlRoot, ServerCPUs: cpus,
		WorkDir: c.workDir, DeviceBytes: deviceBytes, DeviceNoJournal: c.noJournal, Seed: c.seed, ReadReplicas: c.readReplicas, Command: "fairbench " + strings.Join(os.Args[1:], " "), Log: cmd.ErrOrStderr()}
	if opts.Faults, err = runspec.ParseFaults("--fault", c.faults); err != nil {
		return nil, err
	}
	if c.verbose {
		opts.IntervalLog = cmd.ErrOrStderr()
	}
	if err := c.clients.apply(opts); err != nil {
		return nil, err
	}
	insts, err := compare.Plan(cmd.Context(), opts)
	if err != nil {
		return nil, badInput(err)
	}
	if opts.Budget, err = c.resolveBudget(cmd.Flags(), opts, insts); err != nil {
		return nil, err
	}
	return opts, nil
}

// resolveBudget is the time for rounds until decided: --budget, else the suite's budget:, else
// the default; "auto" never asks for what the comparison cannot do (one round, a core sweep),
// where a budget given outright is refused.
func (c *compareFlags) resolveBudget(fs *pflag.FlagSet, opts *compare.Options, insts []compare.Contender) (time.Duration, error) {
	given := fs.Changed("budget") && c.budget != "auto"
	var b time.Duration
	switch {
	case given:
		var err error
		if b, err = runspec.ParseBudget("--budget", c.budget); err != nil {
			return 0, err
		}
	case opts.Suite.Budget != nil:
		b = *opts.Suite.Budget
	case opts.Suite.Repeat < 2 || len(opts.ServerCPUs) > 1:
		return 0, nil
	default:
		b = compare.DefaultBudget(opts, insts)
	}
	check := *opts
	check.Budget = b
	if err := compare.CheckBudget(&check, insts); err != nil {
		if !given {
			return 0, nil
		}
		return 0, badInput(err)
	}
	return b, nil
}

// suite loads --suite with the run settings the command line overrides laid over it.
func (c *compareFlags) suite(fs *pflag.FlagSet) (*suite.Suite, error) {
	s, err := suite.Load(c.suiteName)
	if err != nil {
		return nil, badInput(err)
	}
	if s.Override, err = c.run.layer(fs); err != nil {
		return nil, err
	}
	if fs.Changed("repeat") {
		if err := runspec.CheckRepeat("--repeat", c.repeat); err != nil {
			return nil, err
		}
		s.Repeat = c.repeat
	}
	if _, err := s.Resolve(); err != nil {
		return nil, err
	}
	return s, nil
}

// checkOutDir refuses to mix a new comparison's results with an old one's unless told to.
func checkOutDir(out string, force bool) error {
	old, _ := filepath.Glob(filepath.Join(out, "results", "*.json"))
	if len(old) == 0 {
		return nil
	}
	if !force {
		return badInputf("%s already holds results of an earlier run: choose another --out, or pass --force to replace them", out)
	}
	for _, p := range old {
		if err := os.Remove(p); err != nil {
			return err
		}
	}
	return nil
}

// profileFromFlags is the profile --profile names with --buffer-pool and --binlog applied, the
// same for compare and serve so both start identical servers.
func profileFromFlags(bufferPool string, binlog bool, mode string) (profile.Profile, error) {
	prof := profile.Default()
	prof.Binlog = binlog
	m, err := profile.ParseMode(mode)
	if err != nil {
		return prof, badInput(err)
	}
	prof.Mode = m
	if m == profile.ModeDefaults && bufferPool != "" {
		return prof, badInputf("--buffer-pool contradicts --profile defaults (which keeps each engine's own buffer pool): drop one of them")
	}
	if bufferPool != "" {
		n, err := runspec.ParseSize("--buffer-pool", bufferPool)
		if err != nil {
			return prof, err
		}
		// A pool the machine cannot hold fails only once a server maps it, in its log: say so first.
		if mem := profile.MachineMemory(); n > mem {
			return prof, badInputf("--buffer-pool %s is more than this machine's memory (%.1f GiB): give at most that (the default is 25%% of it, at most 2G)",
				bufferPool, float64(mem)/(1<<30))
		}
		prof.BufferPoolBytes = n
	}
	return prof, nil
}

func newReportCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "report DIR",
		Short: "Render DIR/report.md and DIR/report.html again from DIR/results/*.json, or from the shard results in DIR (merged, a row per shard)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			noResults := badInputf("%s has no results files under results/ and no shard results: run 'fairbench compare --out %s' first, or put the shards' results (run --shard) in it", args[0], args[0])
			files, _ := filepath.Glob(filepath.Join(args[0], "results", "*.json"))
			if shardFiles, _ := filepath.Glob(filepath.Join(args[0], "*.json")); len(files)+len(shardFiles) == 0 {
				return noResults
			}
			for _, f := range []struct {
				name string
				ours output.Ours
			}{{"report.md", report.WroteMarkdown}, {"report.html", document.WrotePage}} {
				if err := output.Check("report", filepath.Join(args[0], f.name), f.ours); err != nil {
					return badInput(err)
				}
			}
			in, err := report.Load(args[0])
			if err != nil {
				return badInput(err)
			}
			if err := report.WriteDir(args[0], in); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "report: %s and %s\n", filepath.Join(args[0], "report.md"), filepath.Join(args[0], "report.html"))
			return nil
		},
	}
}

func newServeCmd() *cobra.Command {
	var kind, mysqlRoot, workDir, bufferPool, profileName, device string
	var binlog, noJournal bool
	cmd := &cobra.Command{
		Use:   "serve --engine postgres|mariadb|mysql[@VERSION]",
		Short: "Start one throwaway server with the fairness profile, print its DSN, stop it on Ctrl-C",
		Long: "serve starts the same throwaway server that compare uses and prints its DSN on stdout, so other\n" +
			"tools (sysbench, pgbench, your application) can be measured against exactly the same setup.\n" +
			"The server and its data directory are removed when fairbench gets SIGINT or SIGTERM.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			insts, err := discovery.Select(kind, mysqlRoot)
			if err != nil {
				return badInput(err)
			}
			if len(insts) != 1 {
				return badInputf("--engine %s names %d engines: serve starts one, e.g. --engine postgres@17", kind, len(insts))
			}
			inst := insts[0]
			prof, err := profileFromFlags(bufferPool, binlog, profileName)
			if err != nil {
				return err
			}
			if err := prof.Check(inst.NodeKind(), inst.Kind); err != nil {
				return badInput(err)
			}
			return serve(cmd, inst, prof, workDir, device, noJournal)
		},
	}
	f := cmd.Flags()
	f.StringVar(&kind, "engine", "", "postgres, mariadb or mysql, optionally with a version: postgres@17 (default the newest installed)")
	f.StringVar(&mysqlRoot, "mysql-root", "", "directory of a Debian root holding MySQL (default "+discovery.DefaultMySQLRoot()+")")
	f.StringVar(&workDir, "workdir", "", "where the data directory goes (default the system temp dir)")
	f.StringVar(&bufferPool, "buffer-pool", "", "buffer pool (default 25% of RAM, at most 2G)")
	f.BoolVar(&binlog, "binlog", false, "binary log on (MySQL, MariaDB)")
	f.StringVar(&device, "device", "", "put the data directory on a loop device of its own of this size (e.g. 8G; root), whose /sys/block counters are then the server's alone")
	f.BoolVar(&noJournal, "device-no-journal", false, "make the --device filesystem without ext4's journal, whose writes no cgroup is charged for")
	addProfileFlag(f, &profileName)
	_ = cmd.MarkFlagRequired("engine")
	return cmd
}

func addProfileFlag(f *pflag.FlagSet, v *string) {
	f.StringVar(v, "profile", profile.ModeFair, "fair: the same settings on every engine; defaults: each engine as its package ships it (buffer pool included, MySQL's binary log on)")
}

// knobList documents the knobs --explain takes.
func knobList() string {
	var parts []string
	for _, k := range profile.Knobs {
		parts = append(parts, k.Name+" ("+k.Doc+")")
	}
	return strings.Join(parts, "; ")
}

// listEngines prints every engine@version that can be started here and where it comes from,
// then what the install script could add.
func listEngines(w io.Writer, found []discovery.Installation) {
	have := map[string]bool{}
	for _, inst := range found {
		have[inst.Kind] = true
		have[inst.Name()] = true
		fmt.Fprintf(w, "%-14s %-14s %-10s %s\n", inst.Name(), "("+inst.Origin+")", inst.Version, inst.Binary)
	}
	var more []string
	for _, k := range discovery.Kinds {
		if !have[k] {
			fmt.Fprintf(w, "%-14s not installed: run scripts/install-engines.sh\n", k)
		}
		for _, r := range discovery.Installable[k] {
			if !have[k+"@"+r] {
				more = append(more, k+"@"+r)
			}
		}
	}
	if len(more) > 0 {
		fmt.Fprintf(w, "more versions: scripts/install-engines.sh --versions %s (or --versions all)\n", strings.Join(more, ","))
	}
	if os.Geteuid() != 0 {
		fmt.Fprintf(w, "(engines in the Debian roots under %s run under chroot: run fairbench as root to list and start them)\n", discovery.RootsDir())
	}
}

// parseServerCPUs reads --server-cpus: CPU counts from 1 to the CPUs this machine gives
// fairbench (have), each once. Confining a server needs a cgroup, which needs root.
func parseServerCPUs(v string, have int, root bool) ([]int, error) {
	if v == "" {
		return nil, nil
	}
	fix := fmt.Sprintf("give CPU counts from 1 to %d, such as 1,2", have)
	var out []int
	for _, part := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		switch {
		case err != nil:
			return nil, badInputf("--server-cpus %q: %q is not a whole number; %s", v, part, fix)
		case n < 1 || n > have:
			return nil, badInputf("--server-cpus %q: %d CPUs, but this machine gives fairbench %d; %s", v, n, have, fix)
		case slices.Contains(out, n):
			return nil, badInputf("--server-cpus %q: %d is listed twice; %s", v, n, fix)
		}
		out = append(out, n)
	}
	if !root {
		return nil, badInputf("--server-cpus needs root, to confine the server with a cgroup: run fairbench as root, or drop --server-cpus")
	}
	return out, nil
}
