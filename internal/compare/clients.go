package compare

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fairbench/fairbench/internal/job"
	"github.com/fairbench/fairbench/internal/merge"
	"github.com/fairbench/fairbench/internal/netsim"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/runner"
	"github.com/fairbench/fairbench/internal/runspec"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/suite"
	"github.com/fairbench/fairbench/internal/workload"
)

// clientHosts is where a comparison's clients run when --clients or --network asks for
// simulated hosts: each step's load comes from one fairbench process per host (run --shard
// I/N, all measuring from one --start-at), and their results are merged into the step's.
type clientHosts struct {
	hosts  *netsim.Hosts
	spec   netsim.Spec
	binary string
	relay  *netsim.Relay // the current server's; one per server started
	// keepDir is Options.shardDir.
	keepDir string
}

// checkClientHosts refuses steps that simulated hosts cannot run: each host needs a thread,
// and a ramp or a fixed list of queries (tpch) cannot be split over processes and merged.
func checkClientHosts(o *Options, steps []suite.Resolved) error {
	if o.Clients == 0 && o.Network == nil {
		return nil
	}
	if o.ReadReplicas {
		return errors.New("--read-replicas does not apply to client hosts (--clients, --network), whose clients connect to the leader: drop one of them")
	}
	for _, st := range steps {
		spec, err := workload.Lookup(st.Workload)
		if err != nil {
			return err
		}
		wl, err := spec.New(spec.WithDefaults(nil))
		if err != nil {
			return err
		}
		if runner.IsFixedList(wl) {
			return fmt.Errorf("--clients/--network: %s %s: drop it from the suite or drop the option", st.Workload, runner.FixedListConflict(runner.FixedSplit))
		}
		if st.Ramp != nil {
			return fmt.Errorf("--clients/--network: step %s ramps its clients, which client hosts cannot share: drop the ramp or the option", st.Workload)
		}
		for _, t := range st.Threads {
			if t < o.Clients {
				return fmt.Errorf("--clients %d: step %s has %d threads, fewer than the hosts: give at least one thread per host (--threads)", o.Clients, st.Workload, t)
			}
		}
	}
	return nil
}

// CheckClientHosts is checkClientHosts for a caller that holds only the options (reproduce,
// checking each of a study's runs before the first starts).
func CheckClientHosts(o *Options) error {
	steps, err := o.Suite.Resolve()
	if err != nil {
		return err
	}
	return checkClientHosts(o, steps)
}

// startClientHosts makes the simulated hosts, or returns nil when none are asked for.
func startClientHosts(o *Options) (*clientHosts, error) {
	if o.Clients == 0 && o.Network == nil {
		return nil, nil
	}
	var spec netsim.Spec
	if o.Network != nil {
		spec = *o.Network
	}
	bin := o.ClientBinary
	if bin == "" {
		var err error
		if bin, err = os.Executable(); err != nil {
			return nil, err
		}
	}
	h, err := netsim.Setup(max(o.Clients, 1), spec)
	if err != nil {
		return nil, err
	}
	return &clientHosts{hosts: h, spec: spec, binary: bin, keepDir: o.shardDir}, nil
}

// close removes the hosts and the relay; nil-safe, so Run can defer it unconditionally.
func (ch *clientHosts) close() error {
	if ch == nil {
		return nil
	}
	ch.stopRelay()
	return ch.hosts.Close()
}

// serve starts a relay on the bridge to a newly started server's loopback port. The relay
// delays only where netem does not.
func (ch *clientHosts) serve(serverPort int) (stop func(), err error) {
	if ch == nil {
		return func() {}, nil
	}
	oneWay := ch.spec.RTT / 2
	if ch.hosts.Netem {
		oneWay = 0
	}
	r, err := netsim.NewRelay(net.JoinHostPort(ch.hosts.BridgeIP, "0"), net.JoinHostPort("127.0.0.1", strconv.Itoa(serverPort)), oneWay)
	if err != nil {
		return nil, fmt.Errorf("relay to the server: %w", err)
	}
	ch.relay = r
	return ch.stopRelay, nil
}

func (ch *clientHosts) stopRelay() {
	if ch.relay != nil {
		ch.relay.Close()
		ch.relay = nil
	}
}

func (ch *clientHosts) record() *result.Network {
	n := &result.Network{Hosts: len(ch.hosts.Names), RTTMS: float64(ch.spec.RTT.Microseconds()) / 1000,
		BandwidthBits: ch.spec.BandwidthBits, Mechanism: "none"}
	switch {
	case ch.spec.RTT > 0 && ch.hosts.Netem:
		n.Mechanism = "netem"
	case ch.spec.RTT > 0:
		n.Mechanism = "relay"
	}
	return n
}

// shardStartLead is how far ahead of now the shards' common --start-at lies, past their
// warm-up: time for each process to start in its namespace and connect. 3 s was missed by
// 0.6 s with three hosts on 2 cores at load 20 (the run then fails: a shard that starts
// late would measure another window), so it leaves room for twice that.
const shardStartLead = 6 * time.Second

// run measures one step from the hosts: the server is settled once here, then each host runs
// its share, and the shards' results are merged exactly (one host: its result as it is).
func (ch *clientHosts) run(ctx context.Context, j *job.Job, cfg runner.Config) (*result.Result, error) {
	prepared, state, err := j.Ready(ctx)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(ch.keepDir, "fairbench-shards-")
	if err != nil {
		return nil, err
	}
	if ch.keepDir == "" {
		defer os.RemoveAll(dir)
	}
	startAt := runspec.WholeSecondAfter(time.Now().Add(cfg.Warmup + shardStartLead)).UTC()
	n := len(ch.hosts.Names)
	errs := make([]error, n)
	done := make(chan int, n)
	for i := range n {
		go func() { errs[i] = ch.runShard(ctx, i, j, cfg, startAt, dir); done <- i }()
	}
	for range n {
		<-done
	}
	res, mergeErr := ch.collect(dir, n)
	if res == nil {
		return nil, errors.Join(append(errs, mergeErr)...)
	}
	res.Prepared, res.StartState, res.Network = prepared, state, ch.record()
	return res, errors.Join(append(errs, mergeErr)...)
}

// collect reads the shards' results and merges them.
func (ch *clientHosts) collect(dir string, n int) (*result.Result, error) {
	var shards []merge.Shard
	for i := range n {
		path := filepath.Join(dir, fmt.Sprintf("shard-%d.json", i+1))
		r, err := result.Read(path)
		if err != nil {
			return nil, fmt.Errorf("client host %d wrote no result: %w", i+1, err)
		}
		shards = append(shards, merge.Shard{Name: fmt.Sprintf("client host %d", i+1), Result: r})
	}
	if n == 1 {
		return shards[0].Result, nil
	}
	m, err := merge.Merge(shards)
	if m != nil {
		// The hosts share this machine's name; each is known by its namespace and address.
		for k := range m.Shards {
			if i := m.Shards[k].Shard.Index - 1; i >= 0 && i < n {
				m.Shards[k].Shard.Host = fmt.Sprintf("%s (%s)", ch.hosts.Names[i], ch.hosts.Addrs[i])
			}
		}
	}
	return m, err
}

// runShard runs host i's fairbench process and waits for it. Ctrl-C reaches it as an
// interrupt, so it stops and writes what it measured, as a run on a real host would.
func (ch *clientHosts) runShard(ctx context.Context, i int, j *job.Job, cfg runner.Config, startAt time.Time, dir string) error {
	target, password := ch.targetFor(j.Target)
	args := append([]string{"run"}, shardArgs(j, cfg, i, len(ch.hosts.Names), startAt)...)
	args = append(args, "--target", target, "--out", filepath.Join(dir, fmt.Sprintf("shard-%d.json", i+1)))
	cmd := ch.hosts.Command(i, ch.binary, args...)
	// The password goes by the environment, never on a command line others can read.
	cmd.Env = os.Environ()
	if password != "" {
		cmd.Env = append(cmd.Env, sqldb.PasswordEnv+"="+password)
	}
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("client host %d: %w", i+1, err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	var err error
	select {
	case err = <-waited:
	case <-ctx.Done():
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
		select {
		case err = <-waited:
		case <-time.After(15 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			err = <-waited
		}
	}
	if err != nil {
		return fmt.Errorf("client host %d (%s): %v: %s", i+1, ch.hosts.Names[i], err, lastLine(out.String()))
	}
	return nil
}

// targetFor points the server's DSN at the relay on the bridge, the password taken out.
func (ch *clientHosts) targetFor(t sqldb.Target) (dsn, password string) {
	return t.Through(ch.relay.Addr().String()), t.Password
}

// shardArgs is `run`'s command line for shard i of n: the step's workload, options and run
// settings, the totals divided by run itself.
func shardArgs(j *job.Job, cfg runner.Config, i, n int, startAt time.Time) []string {
	args := []string{"--workload", j.Spec.Name, "--threads", strconv.Itoa(cfg.Threads),
		"--time", cfg.Duration.String(), "--warmup", cfg.Warmup.String(), "--flush=false",
		"--start-at", startAt.Format(time.RFC3339Nano)}
	if n > 1 {
		args = append(args, "--shard", fmt.Sprintf("%d/%d", i+1, n))
	}
	if cfg.Rate > 0 {
		args = append(args, "--rate", strconv.FormatFloat(cfg.Rate, 'f', -1, 64))
	}
	if cfg.ReportInterval > 0 {
		args = append(args, "--report-interval", cfg.ReportInterval.String())
	}
	if cfg.MaxTries > 0 {
		args = append(args, "--max-tries", strconv.Itoa(cfg.MaxTries))
	}
	r := j.Rand
	args = append(args, "--rand-type", r.Type, "--rand-spec-iter", strconv.Itoa(r.SpecIter), "--rand-spec-pct", strconv.Itoa(r.SpecPct),
		"--rand-spec-res", strconv.Itoa(r.SpecRes), "--rand-pareto-h", fmt.Sprint(r.ParetoH), "--rand-zipfian-exp", fmt.Sprint(r.ZipfExp))
	if j.Seed != 0 {
		// Each host its own stream: the same seed everywhere would send the same rows.
		args = append(args, "--rand-seed", strconv.FormatUint(j.Seed+uint64(i), 10))
	}
	// The options given, as given: those left out come from the defaults or prepare's record
	// in the shard as they did here.
	for _, k := range slices.Sorted(maps.Keys(j.Set)) {
		args = append(args, "--"+k+"="+j.Set[k])
	}
	return args
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
