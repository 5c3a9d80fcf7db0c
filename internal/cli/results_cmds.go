package cli

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fairbench/fairbench/internal/document"
	"github.com/fairbench/fairbench/internal/export"
	"github.com/fairbench/fairbench/internal/history"
	"github.com/fairbench/fairbench/internal/merge"
	"github.com/fairbench/fairbench/internal/output"
	"github.com/fairbench/fairbench/internal/regress"
	"github.com/fairbench/fairbench/internal/report"
	"github.com/fairbench/fairbench/internal/result"
)

// Commands over results files that are already written: nothing here talks to a server.

func newHistoryCmd() *cobra.Command {
	var htmlOut string
	cmd := &cobra.Command{
		Use:   "history DIR|FILE...",
		Short: "One table of the same engine and workload across runs (compare directories or results files), oldest first",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if htmlOut != "" {
				if err := output.Check("--html", htmlOut, document.WrotePage); err != nil {
					return badInput(err)
				}
			}
			lines, err := history.Load(args)
			if err != nil {
				return badInput(err)
			}
			if htmlOut != "" {
				page, err := report.HistoryHTML(lines)
				if err != nil {
					return err
				}
				if err := result.WriteFileAtomic(htmlOut, page); err != nil {
					return err
				}
			}
			_, err = cmd.OutOrStdout().Write(report.HistoryMarkdown(lines))
			return err
		},
	}
	cmd.Flags().StringVar(&htmlOut, "html", "", "also write the table with charts of TPS and p99 by run to this HTML file")
	return cmd
}

func newDiffCmd() *cobra.Command {
	var failIf string
	var o regress.Options
	cmd := &cobra.Command{
		Use:   "diff A B",
		Short: "Is B faster or slower than A? Each engine and workload, judged with the Mann-Whitney U test",
		Long: "A and B are results files or compare directories. Samples are the repeats of a step when each side has " +
			fmt.Sprint(regress.MinRepeats) + " or more, else its measured intervals. Closed-loop runs are judged on throughput, " +
			"open-loop runs (--rate) on p99 latency. Exit status 1 when --fail-if finds a step slower than allowed.",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			var gate *regress.FailIf
			if failIf != "" {
				g, err := regress.ParseFailIf(failIf)
				if err != nil {
					return badInput(err)
				}
				gate = &g
			}
			if o.Alpha <= 0 || o.Alpha >= 1 || o.MinChange < 0 || o.MinChange >= 1 {
				return badInputf("--alpha must be between 0 and 1 and --min-change between 0 and 1 (e.g. --alpha 0.05 --min-change 0.02)")
			}
			a, err := result.ReadPath(args[0])
			if err != nil {
				return badInput(err)
			}
			b, err := result.ReadPath(args[1])
			if err != nil {
				return badInput(err)
			}
			rows := regress.Diff(a, b, o)
			if err := regress.Markdown(cmd.OutOrStdout(), rows, o); err != nil {
				return err
			}
			return gateError(gate, rows)
		},
	}
	cmd.Flags().StringVar(&failIf, "fail-if", "", "exit 1 when a step is significantly slower by more than this, e.g. slower-than=5%")
	cmd.Flags().Float64Var(&o.Alpha, "alpha", 0.05, "significance level of the test")
	cmd.Flags().Float64Var(&o.MinChange, "min-change", regress.DefaultMinChange, "smallest relative change called faster or slower")
	return cmd
}

func gateError(gate *regress.FailIf, rows []regress.Row) error {
	if gate == nil {
		return nil
	}
	bad := gate.Failing(rows)
	if len(bad) == 0 {
		return nil
	}
	var names []string
	for _, r := range bad {
		name := fmt.Sprintf("%s %+.1f%%", r.Key, r.Change*100)
		if r.Busy != "" {
			name += " (" + regress.BusyNote(r) + ")"
		}
		if len(r.PlansChanged) > 0 {
			name += " (plan changed: " + strings.Join(r.PlansChanged, ", ") + ")"
		}
		names = append(names, name)
	}
	return fmt.Errorf("%d step(s) slower than %.1f%%: %s", len(bad), gate.SlowerThan*100, strings.Join(names, "; "))
}

func newExportCmd() *cobra.Command {
	var csvOut string
	var intervals bool
	cmd := &cobra.Command{
		Use:   "export --csv FILE|- DIR|FILE...",
		Short: "Write results as CSV for spreadsheets: one row per run, or per interval with --intervals",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if csvOut == "" {
				return badInputf("export needs --csv FILE (or --csv - for standard output)")
			}
			if csvOut != "-" {
				if err := output.Check("--csv", csvOut, export.Wrote); err != nil {
					return badInput(err)
				}
			}
			var rs []*result.Result
			for _, p := range args {
				got, err := result.ReadPath(p)
				if err != nil {
					return badInput(err)
				}
				rs = append(rs, got...)
			}
			write := export.Runs
			if intervals {
				write = export.Intervals
			}
			if csvOut == "-" {
				return write(cmd.OutOrStdout(), rs)
			}
			var b strings.Builder
			if err := write(&b, rs); err != nil {
				return err
			}
			return result.WriteFileAtomic(csvOut, []byte(b.String()))
		},
	}
	cmd.Flags().StringVar(&csvOut, "csv", "", "CSV file to write, - for standard output")
	cmd.Flags().BoolVar(&intervals, "intervals", false, "one row per measured interval instead of one per run")
	return cmd
}

func newMergeCmd() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "merge --out ALL.json SHARD.json|DIR...",
		Short: "Join the shards of one multi-host run (run --shard I/N) into one result, exactly; a directory gives every shard result in it",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return badInputf("merge needs --out FILE for the merged result")
			}
			if err := checkWritable(out); err != nil {
				return err
			}
			shards, err := readShards(args)
			if err != nil {
				return badInput(err)
			}
			m, err := merge.Merge(shards)
			if err != nil {
				return badInput(err)
			}
			if err := result.Write(out, m); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "merged %d shards: %d transactions, %.2f TPS, p99 %.2f ms: %s\n",
				len(shards), m.Transactions, m.TPS, m.LatencyMS.P99, out)
			if !m.Complete {
				fmt.Fprintf(cmd.ErrOrStderr(), "the merged result is marked incomplete: %s\n", m.Error)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "file for the merged result")
	return cmd
}

// readShards reads shard results from files and directories; in a directory only results of
// shards count, so a merged result written beside them is never merged again.
func readShards(paths []string) ([]merge.Shard, error) {
	var shards []merge.Shard
	for _, p := range paths {
		if !dirExists(p) {
			r, err := result.Read(p)
			if err != nil {
				return nil, err
			}
			shards = append(shards, merge.Shard{Name: p, Result: r})
			continue
		}
		rs, err := result.ReadPath(p)
		if err != nil {
			return nil, err
		}
		for i, r := range rs {
			if r.Shard != nil {
				shards = append(shards, merge.Shard{Name: fmt.Sprintf("%s (result %d, shard %d)", p, i+1, r.Shard.Index), Result: r})
			}
		}
	}
	return shards, nil
}

func dirExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
