package reproduce

import (
	"context"
	"io"
	"time"

	"github.com/fairbench/fairbench/internal/compare"
	"github.com/fairbench/fairbench/internal/engine"
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
}

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
		s, err := suite.Parse([]byte(run.Suite), "study "+run.Name)
		if err != nil {
			return err
		}
		if run.Repeat > 0 {
			s.Repeat = run.Repeat
		}
		return compare.Run(ctx, &compare.Options{QuietWait: c.QuietWait, WaitEvery: c.WaitEvery, Engines: engines, Suite: s, OutDir: dir, Profile: runProfile(run),
			Explain: run.Explain, ServerCPUs: run.ServerCPUs, MySQLRoot: c.MySQLRoot, WorkDir: c.WorkDir,
			Command: c.Command, Log: c.Log, Live: c.Live, Clients: c.Clients, Network: c.Network})
	}
}

// runProfile is the fairness profile with the run's own conditions: the study's buffer pool
// and connections, MySQL's binary log as published, or each package's defaults.
func runProfile(run Run) engine.Profile {
	prof := engine.DefaultProfile()
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
