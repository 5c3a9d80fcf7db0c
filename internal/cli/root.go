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
	root := newRoot(stdout, stderr)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	fmt.Fprintln(stderr, "fairbench: "+oneLine(err.Error()))
	var ie inputError
	var np *workload.NotPreparedError
	if errors.As(err, &ie) || errors.As(err, &np) || isFlagError(err) {
		return exitInput
	}
	return exitFail
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}

// isFlagError recognises cobra/pflag's own parse errors, which it does not type.
func isFlagError(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown flag", "unknown shorthand", "invalid argument", "flag needs an argument", "unknown command", "accepts ", "requires at least", "required flag"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
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
		newStudyCmd(), newHistoryCmd(), newDiffCmd(), newExportCmd(), newMergeCmd(),
	)
	return root
}
