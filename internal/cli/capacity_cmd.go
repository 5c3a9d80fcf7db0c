package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fairbench/fairbench/internal/capacity"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/runner"
	"github.com/fairbench/fairbench/internal/slo"
	"github.com/fairbench/fairbench/internal/workload"
)

// DefaultCapacityConnections is --max-connections' default: enough for thousands of arrivals a
// second at a few milliseconds each, and the same for every engine.
const DefaultCapacityConnections = 32

func newCapacityCmd() *cobra.Command {
	var f jobFlags
	var objective, out, nodeExporter, instrument string
	var s capacity.Settings
	cmd := &cobra.Command{
		Use:   "capacity --target DSN --workload NAME --slo 'p99<=10ms' [--max-connections N] [--budget 10m]",
		Short: "The highest arrival rate the server carries while a latency percentile stays within its limit, found by search, with its interval",
		Long: "An open loop (arrivals on a Poisson schedule, latency from each scheduled arrival) climbs from --start-rate by doubling until a " +
			"rate fails, bisects to --resolution, then measures the bracket again in --rounds rounds for the capacity's 95% interval. " +
			"A rate passes when its window meets the objective, completes at least 97% of the offered rate, and its backlog does not grow. " +
			"Every rate's figures, what gave way (server, connections or client) and the capacity go into --out. See docs/capacity.md.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if s.SLO, err = slo.Parse(objective); err != nil {
				return badInput(err)
			}
			if !cmd.Flags().Changed("start-rate") {
				s.Plan.Start = s.SLO.StartRate(s.Window)
			}
			if err := checkCapacitySettings(s); err != nil {
				return err
			}
			j, err := f.job(cmd.Flags())
			if err != nil {
				return err
			}
			if err := checkKind(j.Workload, s.SLO.Kind); err != nil {
				return err
			}
			if err := refuseArrivals(j, "capacity"); err != nil {
				return err
			}
			hosts, err := measuredTarget(cmd, j, out, nodeExporter)
			if err != nil {
				return err
			}
			if j.WaitEvery, err = instrumentEvery(instrument); err != nil {
				return err
			}
			s.Log = cmd.ErrOrStderr()
			fmt.Fprintf(s.Log, "capacity of %s at %s with %d connections, %s windows after %s of warm-up, budget %s\n",
				j.Spec.Name, s.SLO.Text(), s.Connections, s.Window, s.Warmup, s.Budget)
			res, err := capacity.Search(cmd.Context(), s, func(ctx context.Context, cfg runner.Config) (*result.Result, error) {
				return measureAttached(ctx, j, cfg, hosts)
			})
			if err != nil {
				return classify(err)
			}
			printCapacity(cmd.OutOrStdout(), res)
			if out != "" {
				if err := result.Write(out, res); err != nil {
					return fmt.Errorf("writing %s: %w", out, err)
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "result written to %s\n", out)
			}
			if !res.Complete {
				return fmt.Errorf("%s", res.Error)
			}
			return nil
		},
	}
	f.register(cmd.Flags())
	f.showWorkloadHelp(cmd)
	fs := cmd.Flags()
	fs.StringVar(&objective, "slo", "", "the latency objective: a percentile from p50 to p99.9 of the transactions (or of one kind: p90(new_order)), <=, a time: 'p99<=10ms'")
	fs.IntVar(&s.Connections, "max-connections", DefaultCapacityConnections, "the open loop's clients, each with its own connection: the same for every engine, and recorded")
	fs.DurationVar(&s.Budget, "budget", 10*time.Minute, "the whole search's time; a rate that would end past it is not started, and the result says what was reached")
	fs.DurationVar(&s.Window, "window", 10*time.Second, "each rate's measured window")
	fs.DurationVar(&s.Warmup, "warmup", 3*time.Second, "each rate's own warm-up before its window")
	fs.Float64Var(&s.Plan.Start, "start-rate", 0, "the first rate tried, per second (default: the lowest whose window holds enough transactions for the percentile, 1,000 for a p99)")
	fs.Float64Var(&s.Plan.MaxRate, "max-rate", 0, "the highest rate tried (0: no limit)")
	fs.Float64Var(&s.Plan.Resolution, "resolution", 0.05, "the bisection stops when the bracket is this close (0.05: 5%)")
	fs.IntVar(&s.Plan.Rounds, "rounds", 5, "confirmation rounds of the bracket, for the capacity's 95% interval")
	fs.StringVar(&out, "out", "", "write the result, with every rate measured, as JSON to this file")
	fs.StringVar(&nodeExporter, "node-exporter", "", "URL of node_exporter's metrics on the server's machine: host CPU, memory and disk from there")
	addInstrumentFlag(fs, &instrument)
	return cmd
}

// checkCapacitySettings refuses settings that no search can run with, before any connection.
func checkCapacitySettings(s capacity.Settings) error {
	switch {
	case s.Connections < 1:
		return badInputf("--max-connections %d: give at least 1 connection", s.Connections)
	case s.Budget <= 0:
		return badInputf("--budget %s: give a positive time for the whole search, e.g. 10m", s.Budget)
	case s.Window < time.Second || s.Warmup < 0:
		return badInputf("--window %s, --warmup %s: a window of at least 1s (its backlog is read over its thirds) and a warm-up of 0s or more", s.Window, s.Warmup)
	case s.Budget < s.Window+s.Warmup:
		return badInputf("--budget %s is shorter than one rate's warm-up and window (%s): give a longer budget", s.Budget, s.Window+s.Warmup)
	case s.Plan.Start <= 0 || s.Plan.Resolution <= 0 || s.Plan.Resolution >= 1 || s.Plan.Rounds < 1:
		return badInputf("--start-rate must be above 0, --resolution between 0 and 1 (0.05 for 5%%), --rounds at least 1")
	case s.Plan.MaxRate != 0 && s.Plan.MaxRate < s.Plan.Start:
		return badInputf("--max-rate %.0f is below --start-rate %.0f", s.Plan.MaxRate, s.Plan.Start)
	}
	return nil
}

// checkKind refuses an objective on a kind of transaction the workload does not run.
func checkKind(w workload.Workload, kind string) error {
	if kind == "" {
		return nil
	}
	kinds := w.Traits().TransactionKinds
	if len(kinds) == 0 {
		return badInputf("--slo names the transaction kind %s, and this workload has one kind of transaction: drop (%s)", kind, kind)
	}
	if slices.Contains(kinds, kind) {
		return nil
	}
	return badInputf("--slo names the transaction kind %s, which this workload does not run: choose one of %s", kind, strings.Join(kinds, ", "))
}

// printCapacity prints every rate measured and the capacity found.
func printCapacity(w io.Writer, r *result.Result) {
	c := r.Capacity
	fmt.Fprintf(w, "%-8s %10s %10s %10s %10s %9s %6s  %s\n", "phase", "offered/s", "done/s", "slo ms", "lag end ms", "busy", "pass", "why not / server")
	for _, st := range c.Steps {
		why := strings.Join(st.Failed, "; ")
		if why == "" {
			why = st.Waits
		}
		fmt.Fprintf(w, "%-8s %10.0f %10.0f %10.2f %10.2f %8.0f%% %6v  %s\n", st.Phase, st.OfferedPerS, st.CompletedPerS, st.LatencyMS, st.LagEndMS, 100*st.Busy, st.Pass, why)
	}
	fmt.Fprintln(w, capacity.Line(c))
	if c.Advice != "" {
		fmt.Fprintf(w, "what gave way: %s\n", c.Advice)
	}
}
