package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fairbench/fairbench/internal/compare"
	"github.com/fairbench/fairbench/internal/engine/discovery"
	"github.com/fairbench/fairbench/internal/reproduce"
	"github.com/fairbench/fairbench/internal/runspec"
	"github.com/fairbench/fairbench/internal/suite"
)

func newReproduceCmd() *cobra.Command {
	var engines, scale, out, mysqlRoot, workDir, metricsAddr, instrument, budget string
	var list, force, again bool
	var repeat int
	var clients clientFlags
	cmd := &cobra.Command{
		Use:   "reproduce STUDY [--scale small|full] [--engines ...] [--out DIR] | --list",
		Short: "Rerun a published study, set its figures beside fairbench's and judge where they agree",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if list {
				for _, s := range reproduce.List() {
					fmt.Fprintf(cmd.OutOrStdout(), "%-10s %s (%s; %d rounds at --scale small)\n", s.Name, s.Title, strings.Join(s.Engines, ", "), s.Rounds(reproduce.Small))
				}
				return nil
			}
			if len(args) != 1 {
				return badInputf("name a study to reproduce (fairbench reproduce --list shows them)")
			}
			s, err := reproduce.Lookup(args[0])
			if err != nil {
				return badInput(err)
			}
			sc, err := reproduce.ParseScale(scale)
			if err != nil {
				return badInput(err)
			}
			rounds := s.Rounds(sc)
			if cmd.Flags().Changed("repeat") {
				if err := runspec.CheckRepeat("--repeat", repeat); err != nil {
					return err
				}
				rounds = repeat
			}
			kinds, err := studyEngines(s, engines, mysqlRoot)
			if err != nil {
				return err
			}
			if out == "" {
				out = filepath.Join("out", "reproduce-"+s.Name+"-"+time.Now().Format("20060102-150405"))
			}
			if again {
				if _, err := os.Stat(out); err != nil || !cmd.Flags().Changed("out") {
					return badInputf("--report-only renders an earlier reproduction again: give its directory with --out")
				}
			} else if err := checkReproduceOut(out, force); err != nil {
				return err
			}
			var hosts compare.Options // the simulated client hosts each comparison runs its clients on
			if err := clients.apply(&hosts); err != nil {
				return err
			}
			if err := checkStudyClientHosts(s, sc, hosts); err != nil {
				return err
			}
			waitEvery, err := instrumentEvery(instrument)
			if err != nil {
				return err
			}
			live, stopLive, err := startLive(metricsAddr, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer stopLive()
			exec := reproduce.ExecConfig{QuietWait: compare.DefaultQuietWait, WaitEvery: waitEvery, MySQLRoot: mysqlRoot, WorkDir: workDir, Live: live,
				Command: "fairbench " + strings.Join(os.Args[1:], " "), Log: cmd.ErrOrStderr(), Clients: hosts.Clients, Network: hosts.Network, Budget: reproduce.AutoBudget}
			o := reproduce.Options{Scale: sc, Repeat: rounds, Engines: kinds, OutDir: out, Log: cmd.ErrOrStderr(), Cores: runtime.NumCPU(),
				Execute: reproduce.CompareExecutor(exec)}
			if budget != "auto" && !again {
				if exec.Budget, err = runspec.ParseBudget("--budget", budget); err != nil {
					return err
				}
				o.Execute = reproduce.CompareExecutor(exec)
				if err := reproduce.CheckBudgets(cmd.Context(), s, o, exec); err != nil {
					return badInput(err)
				}
			}
			if again {
				o.Execute = func(context.Context, reproduce.Run, []string, string) error { return nil } // the results are there
			}
			rows, err := reproduce.Reproduce(cmd.Context(), s, o)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: %s\nreport: %s\n", s.Name, reproduce.Count(rows), filepath.Join(out, "report.md"))
			return nil
		},
	}
	f := cmd.Flags()
	addInstrumentFlag(f, &instrument)
	f.BoolVar(&list, "list", false, "list the studies fairbench reproduces")
	f.StringVar(&scale, "scale", "small", "small (data and time shrunk by the study's rule) or full (the study's own size)")
	f.StringVar(&engines, "engines", "", "only these of the study's engines, each optionally at a release (postgres@17; default: those of them installed here, newest each)")
	f.StringVar(&out, "out", "", "output directory (default out/reproduce-STUDY-TIME)")
	f.BoolVar(&force, "force", false, "replace the results of an earlier reproduction in --out")
	f.IntVar(&repeat, "repeat", 0, "rounds of every comparison, the engine order rotated each round, for the intervals the rows are judged by (default: the study's own, reproduce --list)")
	f.StringVar(&budget, "budget", "auto", "each comparison's time for rounds until decided: auto (twice its own rounds' time, where it runs two or more rounds and does not sweep core counts), off or 0 for its rounds alone, or a time (10m)")
	f.BoolVar(&again, "report-only", false, "run nothing: judge the results already in --out again and render its report")
	f.StringVar(&mysqlRoot, "mysql-root", "", "directory of a Debian root holding MySQL (default "+discovery.DefaultMySQLRoot()+")")
	f.StringVar(&workDir, "workdir", "", "where the servers' data directories go (default: the system temp dir)")
	addMetricsFlag(f, &metricsAddr)
	clients.register(f)
	return cmd
}

// checkStudyClientHosts refuses --clients/--network before anything runs when one of the study's
// runs cannot take its load from client hosts: the storage-bandwidth study runs its own clients
// on this machine (the option would be silently ignored), and a ramped step or a fixed list of queries (TPC-H) would
// fail its run and leave the study's rows empty.
func checkStudyClientHosts(s *reproduce.Study, sc reproduce.Scale, hosts compare.Options) error {
	if hosts.Clients == 0 && hosts.Network == nil {
		return nil
	}
	for _, run := range s.Runs(sc) {
		if run.Bandwidth != nil {
			return badInputf("--clients/--network: the %s study's run %s is the storage-bandwidth study, which cannot run its clients from client hosts: drop the option", s.Name, run.Name)
		}
		st, err := suite.Parse([]byte(run.Suite), "study "+run.Name)
		if err != nil {
			return err
		}
		o := hosts
		o.Suite = st
		if err := compare.CheckClientHosts(&o); err != nil {
			return badInputf("the %s study's run %s: %v", s.Name, run.Name, err)
		}
	}
	return nil
}

// studyEngines is the user's --engines, else the study's engines that are installed here.
func studyEngines(s *reproduce.Study, engines, mysqlRoot string) ([]string, error) {
	if engines != "" {
		insts, err := discovery.Select(engines, mysqlRoot)
		if err != nil {
			return nil, badInput(err)
		}
		// A study judges its rows by engine kind, so one release per kind: a bare kind is its
		// newest installed release, KIND@RELEASE that release (the one a study published, say).
		var kinds, names []string
		for _, in := range insts {
			if slices.Contains(kinds, in.Kind) {
				return nil, badInputf("--engines %s: a reproduction runs one release of each engine (%s twice)", engines, in.Kind)
			}
			kinds = append(kinds, in.Kind)
			name := in.Kind
			if newest, _ := discovery.Find(in.Kind, mysqlRoot); newest.Name() != in.Name() {
				name = in.Name()
			}
			names = append(names, name)
		}
		return names, nil
	}
	var kinds []string
	for _, k := range s.Engines {
		if _, err := discovery.Find(k, mysqlRoot); err == nil {
			kinds = append(kinds, k)
		}
	}
	if len(kinds) == 0 {
		return nil, badInputf("none of %s is installed: run scripts/install-engines.sh", strings.Join(s.Engines, ", "))
	}
	return kinds, nil
}

func checkReproduceOut(out string, force bool) error {
	old, _ := filepath.Glob(filepath.Join(out, "*", "results", "*.json"))
	if len(old) > 0 && !force {
		return badInputf("%s already holds an earlier reproduction: choose another --out, or pass --force to replace it", out)
	}
	for _, p := range old {
		if err := os.Remove(p); err != nil {
			return err
		}
	}
	return nil
}
