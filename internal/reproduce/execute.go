package reproduce

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/fairbench/fairbench/internal/compare"
	"github.com/fairbench/fairbench/internal/engine/profile"
	"github.com/fairbench/fairbench/internal/livemetrics"
	"github.com/fairbench/fairbench/internal/netsim"
	"github.com/fairbench/fairbench/internal/study"
	"github.com/fairbench/fairbench/internal/suite"
)

// ExecConfig is what every run of a reproduction shares: where the engines and their data
// directories are, what to record as the command, where progress goes.
type ExecConfig struct {
	MySQLRoot, WorkDir, Command string
	Log                         io.Writer
	Live                        *livemetrics.Exporter
	// Clients and Network put the load on simulated client hosts at a distance (compare's own).
	Clients int
	Network *netsim.Spec
	// QuietWait is compare's wait for a quiet machine before each step (compare.Options).
	QuietWait time.Duration
	// WaitEvery is compare's wait sampling period (compare.Options); 0 is off.
	WaitEvery time.Duration
	// Budget is each comparison's time for rounds until decided: AutoBudget (compare's default,
	// where the comparison can add rounds), 0 for its rounds alone, or a time.
	Budget time.Duration
}

// AutoBudget asks each comparison for compare's own default budget: twice its rounds' time,
// where it runs two or more rounds and does not sweep core counts; its rounds alone otherwise.
const AutoBudget time.Duration = -1

// CompareExecutor runs each of a study's comparisons with compare (or the bandwidth study), on
// fresh throwaway servers: the command line's executor, and the real-server tests'.
func CompareExecutor(c ExecConfig) Executor {
	return func(ctx context.Context, run Run, engines []string, dir string) error {
		if b := run.Bandwidth; b != nil {
			_, err := study.RunBandwidth(ctx, study.BandwidthOptions{Common: study.Common{Engines: engines, MySQLRoot: c.MySQLRoot,
				WorkDir: c.WorkDir, Time: b.Time, Threads: b.Threads, Tables: b.Tables, TableSize: b.TableSize, OutDir: dir,
				Command: c.Command, Log: c.Log, WaitEvery: c.WaitEvery}, Limits: b.Limits, TPCHScale: b.TPCHScale, DeviceBytes: b.DeviceBytes})
			return err
		}
		o, err := compareOptions(c, run, engines, dir)
		if err != nil {
			return err
		}
		if err := setBudget(ctx, o, c.Budget); err != nil {
			return err
		}
		return compare.Run(ctx, o)
	}
}

// compareOptions is the comparison a study's run is.
func compareOptions(c ExecConfig, run Run, engines []string, dir string) (*compare.Options, error) {
	s, err := suite.Parse([]byte(run.Suite), "study "+run.Name)
	if err != nil {
		return nil, err
	}
	if run.Repeat > 0 {
		s.Repeat = run.Repeat
	}
	return &compare.Options{QuietWait: c.QuietWait, WaitEvery: c.WaitEvery, Engines: engines, Suite: s, OutDir: dir, Profile: runProfile(run),
		Explain: run.Explain, ServerCPUs: run.ServerCPUs, MySQLRoot: c.MySQLRoot, WorkDir: c.WorkDir,
		Command: c.Command, Log: c.Log, Live: c.Live, Clients: c.Clients, Network: c.Network}, nil
}

// setBudget gives o its rounds until decided: the agree / disagree rows are the comparison's
// picks and knob effects, so the rounds that decide those decide the rows. AutoBudget asks only
// where rounds can be added; a budget given outright is held to compare's rules (CheckBudgets
// refuses it before anything runs).
func setBudget(ctx context.Context, o *compare.Options, budget time.Duration) error {
	auto := budget == AutoBudget
	if budget == 0 || (auto && (o.Suite.Repeat < 2 || len(o.ServerCPUs) > 1)) {
		return nil
	}
	insts, err := compare.Plan(ctx, o)
	if err != nil {
		return err
	}
	if auto {
		budget = compare.DefaultBudget(o, insts)
	}
	o.Budget = budget
	return compare.CheckBudget(o, insts)
}

// CheckBudgets refuses, before anything runs, a budget that one of the study's comparisons
// cannot use (too short for its own rounds, or a comparison of one round or a core sweep).
func CheckBudgets(ctx context.Context, s *Study, o Options, c ExecConfig) error {
	if c.Budget <= 0 {
		return nil
	}
	for _, run := range s.Runs(o.Scale) {
		engines := pick(run.Engines, s.Engines, o.Engines)
		if len(engines) == 0 || run.Bandwidth != nil {
			continue
		}
		run.Repeat = o.Repeat
		co, err := compareOptions(c, run, engines, "")
		if err != nil {
			return err
		}
		if err := setBudget(ctx, co, c.Budget); err != nil {
			return fmt.Errorf("the %s study's run %s: %w", s.Name, run.Name, err)
		}
	}
	return nil
}

// runProfile is the fairness profile with the run's own conditions: the study's buffer pool
// and connections, MySQL's binary log as published, or each package's defaults.
func runProfile(run Run) profile.Profile {
	prof := profile.Default()
	prof.Binlog = run.Binlog
	prof.Mode = run.Profile
	if run.BufferPoolBytes > 0 {
		prof.BufferPoolBytes = run.BufferPoolBytes
	}
	if run.MaxConnections > 0 {
		prof.MaxConnections = run.MaxConnections
	}
	return prof
}
