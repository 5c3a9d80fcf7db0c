// Package cli is fairbench's command line: flag parsing and output only. The work happens in the
// packages it calls (job, runner, compare, report), so every command is a thin shell over them.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/fairbench/fairbench/internal/engine"
	"github.com/fairbench/fairbench/internal/engine/discovery"
	"github.com/fairbench/fairbench/internal/runspec"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/version"
	"github.com/fairbench/fairbench/internal/workload"
	_ "github.com/fairbench/fairbench/internal/workload/all" // registers every workload
)

// Exit statuses: 2 means the user must change something (bad input, unreachable target,
// missing tables), 1 means a run failed or was interrupted after it started.
const (
	exitOK    = 0
	exitFail  = 1
	exitInput = 2
)

// inputError marks an error as the user's to fix.
type inputError struct{ err error }

func (e inputError) Error() string { return e.err.Error() }
func (e inputError) Unwrap() error { return e.err }

func badInput(err error) error {
	if err == nil {
		return nil
	}
	return inputError{err}
}

func badInputf(format string, args ...any) error { return inputError{fmt.Errorf(format, args...)} }

// Main runs the command line and returns the process exit status.
func Main(args []string, stdout, stderr io.Writer) int {
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	// Builds given as archives (--engines mysql@FILE.tar.xz) were unpacked for this run only.
	defer discovery.RemoveUnpacked()
	// The template data directories the servers were copied from (engine/template.go).
	defer func() {
		if err := engine.DropTemplates(); err != nil {
			fmt.Fprintln(stderr, "fairbench: "+oneLine(err.Error()))
		}
	}()
	root := newRoot(stdout, stderr)
	root.SetArgs(args)
	// Errors that come before a command's own code runs are cobra's: an unknown command or flag,
	// a flag value it cannot parse, a wrong number of arguments, a missing required flag.
	started := false
	markStarted(root, &started)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	fmt.Fprintln(stderr, "fairbench: "+oneLine(err.Error()))
	if !started || isInputError(err) {
		return exitInput
	}
	return exitFail
}

// isInputError says whether the user must change something: the error, or one it wraps, is
// typed as input.
func isInputError(err error) bool {
	var ie inputError
	var re *runspec.InputError
	var np *workload.NotPreparedError
	var de *workload.DataError
	return errors.As(err, &ie) || errors.As(err, &re) || errors.As(err, &np) || errors.As(err, &de) ||
		sqldb.IsTooManyConnections(err)
}

// markStarted wraps every command's RunE so that Main can tell cobra's own errors from the command's.
func markStarted(c *cobra.Command, started *bool) {
	if run := c.RunE; run != nil {
		c.RunE = func(cmd *cobra.Command, args []string) error {
			*started = true
			return run(cmd, args)
		}
	}
	for _, sub := range c.Commands() {
		markStarted(sub, started)
	}
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "fairbench",
		Short:         "The same database workload, the same way, on PostgreSQL, MySQL and MariaDB",
		Version:       version.Version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	// A hidden flag for finding where fairbench's own client CPU goes: that CPU is taken from the
	// server under test, so it is worth profiling.
	var cpuProfile string
	root.PersistentFlags().StringVar(&cpuProfile, "cpuprofile", "", "write a Go CPU profile of fairbench itself")
	_ = root.PersistentFlags().MarkHidden("cpuprofile")
	var profFile *os.File
	root.PersistentPreRunE = func(*cobra.Command, []string) error {
		if cpuProfile == "" {
			return nil
		}
		f, err := os.Create(cpuProfile)
		if err != nil {
			return err
		}
		profFile = f
		return pprof.StartCPUProfile(f)
	}
	root.PersistentPostRun = func(*cobra.Command, []string) {
		if profFile != nil {
			pprof.StopCPUProfile()
			profFile.Close()
		}
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(
		newPrepareCmd(), newRunCmd(), newCleanupCmd(), newCheckCmd(), newWorkloadsCmd(),
		newEnginesCmd(), newCompareCmd(), newReportCmd(), newServeCmd(),
		newStudyCmd(), newHistoryCmd(), newDiffCmd(), newExportCmd(), newMergeCmd(), newReproduceCmd(), newCaptureCmd(), newCapacityCmd(),
	)
	return root
}
