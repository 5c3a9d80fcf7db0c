package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fairbench/fairbench/internal/capture"
	"github.com/fairbench/fairbench/internal/job"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/sqldb"
)

func newCaptureCmd() *cobra.Command {
	var target, out, by string
	var top int
	var sampleValues, force bool
	var timeout, watch, watchEvery time.Duration
	cmd := &cobra.Command{
		Use:   "capture --target DSN --out FILE.yaml [--top N] [--by calls|time] [--watch 10s] [--sample-values]",
		Short: "Write a workload file from a running server's own statistics (reads only)",
		Long: "capture reads the database named in --target: its tables, keys and row counts, a sample of each\n" +
			"column's values (to fit a generator to; no value is copied unless --sample-values), and its most\n" +
			"frequent statements from pg_stat_statements or the performance schema's digests; while it watches\n" +
			"(--watch) it reads the open transactions, and statements seen in one transaction run together.\n" +
			"It writes a workload file that `compare --suite` runs on every engine (docs/workload-files.md, Capture).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opt, t, err := captureInput(target, out, by, top, sampleValues, force)
			if err != nil {
				return err
			}
			if timeout <= 0 {
				return badInputf("--timeout %v: give how long capture may take, e.g. --timeout 10m", timeout)
			}
			if watch < 0 {
				return badInputf("--watch %v: give how long to watch the source's transactions, e.g. --watch 10s, or 0 not to", watch)
			}
			if watchEvery < 100*time.Microsecond {
				return badInputf("--watch-every %v: give how often to read the source's transactions, 100µs or more, e.g. --watch-every 2ms", watchEvery)
			}
			opt.Watch, opt.WatchEvery = watch, watchEvery
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			err = captureTo(ctx, t, out, opt, cmd.ErrOrStderr())
			if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return fmt.Errorf("capture stopped after --timeout %v, nothing written: the source answered too slowly or not at all "+
					"(a frozen or overloaded server); give a longer --timeout", timeout)
			}
			return err
		},
	}
	cmd.Flags().StringVar(&target, "target", "", "the server and database to capture from (DSN)")
	cmd.Flags().StringVar(&out, "out", "", "the workload file to write (.yaml)")
	cmd.Flags().IntVar(&top, "top", 50, "statements to keep, the most frequent first (0: the tables alone)")
	cmd.Flags().StringVar(&by, "by", "calls", "rank statements by calls or by server time")
	cmd.Flags().BoolVar(&sampleValues, "sample-values", false, "draw compared values from a sample of the real ones (the file then holds user values)")
	cmd.Flags().BoolVar(&force, "force", false, "overwrite --out if it exists")
	cmd.Flags().DurationVar(&timeout, "timeout", 10*time.Minute, "the longest the whole capture may take (a frozen source ends it)")
	cmd.Flags().DurationVar(&watchEvery, "watch-every", capture.DefaultWatchEvery, "while watching, read the open transactions this often (each read costs the source a little CPU)")
	cmd.Flags().DurationVar(&watch, "watch", 10*time.Second, "watch the source's open transactions this long to group the statements that run together (0: each statement alone)")
	return cmd
}

// captureTo captures the target's workload into the file out.
func captureTo(ctx context.Context, t sqldb.Target, out string, opt capture.Options, log io.Writer) error {
	j := &job.Job{Target: t}
	ver, err := j.ServerVersion(ctx)
	if err != nil {
		return badInput(err)
	}
	opt.Source = fmt.Sprintf("%s at %s", ver, t.Redacted())
	conn, err := j.Connect(ctx)
	if err != nil {
		return badInput(err)
	}
	defer conn.Close()
	text, summary, err := capture.Capture(ctx, conn, opt)
	var noStats *capture.NoStatisticsError
	if errors.As(err, &noStats) {
		return badInput(err)
	}
	if text != nil { // also when the parser refused it: for reading, and a bug report
		if werr := result.WriteFileAtomic(out, text); werr != nil {
			return werr
		}
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(log, "captured %s into %s: %s\nrun it with `fairbench compare --suite` (a step `- workload: %s`)\n", t.Redacted(), out, summary, out)
	return nil
}

var workloadName = regexp.MustCompile(`[^a-z0-9_]+`)

// captureInput checks the flags before any server is touched.
func captureInput(target, out, by string, top int, sampleValues, force bool) (capture.Options, sqldb.Target, error) {
	opt := capture.Options{Top: top, ByTime: by == "time", SampleValues: sampleValues}
	if target == "" {
		return opt, sqldb.Target{}, badInputf("no --target: give the DSN of the server and database to capture from")
	}
	t, err := parseTarget(target)
	if err != nil {
		return opt, t, err
	}
	switch {
	case out == "" || !strings.HasSuffix(out, ".yaml"):
		return opt, t, badInputf("--out must name the workload file to write, ending in .yaml, e.g. --out my-workload.yaml")
	case by != "calls" && by != "time":
		return opt, t, badInputf("--by %q: write calls or time", by)
	case top < 0 || top > 200:
		return opt, t, badInputf("--top %d: give 0 to 200 statements", top)
	}
	if _, err := os.Stat(out); err == nil && !force {
		return opt, t, badInputf("%s exists: give another --out, or --force to overwrite it", out)
	}
	name := workloadName.ReplaceAllString(strings.ToLower(strings.TrimSuffix(filepath.Base(out), ".yaml")), "_")
	if name == "" || name[0] >= '0' && name[0] <= '9' {
		name = "captured_" + name
	}
	opt.Name = strings.Trim(name, "_")
	if opt.Name == "" {
		opt.Name = "captured"
	}
	return opt, t, nil
}
