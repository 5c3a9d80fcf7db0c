package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fairbench/fairbench/internal/engine/discovery"
	"github.com/fairbench/fairbench/internal/runspec"
	"github.com/fairbench/fairbench/internal/study"
	"github.com/fairbench/fairbench/internal/throttle"
)

func newStudyCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "study mvcc|bandwidth",
		Short: "Run a built-in study that explains a difference between engines",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return badInputf("name a study: 'fairbench study mvcc' or 'fairbench study bandwidth'")
		},
	}
	cmd.AddCommand(newStudyMVCCCmd(), newStudyBandwidthCmd())
	return cmd
}

// studyFlags are the settings both studies take.
type studyFlags struct {
	engines, duration, bufferPool, out, workDir, mysqlRoot, instrument string
	threads, tables, tableSize                                         int
	seed                                                               uint64
}

func (s *studyFlags) register(f *pflag.FlagSet, name string) {
	f.StringVar(&s.engines, "engines", "postgres,mariadb", "engines to study, e.g. postgres,mariadb,mysql or postgres@17,mariadb@11.8")
	f.StringVar(&s.duration, "time", study.DefaultTime.String(), "measured time of each "+name)
	f.IntVar(&s.threads, "threads", study.DefaultThreads, "client threads")
	f.IntVar(&s.tables, "tables", study.DefaultTables, "number of sbtest tables")
	f.IntVar(&s.tableSize, "table-size", 0, fmt.Sprintf("rows per table (default: the data is about %d× the buffer pool)", study.DataFactor))
	f.StringVar(&s.bufferPool, "buffer-pool", runspec.FormatSize(study.DefaultBufferPool), "buffer pool of every engine; small, so the data does not fit")
	f.StringVar(&s.out, "out", "", "output directory (default out/study-NAME-TIMESTAMP)")
	f.StringVar(&s.mysqlRoot, "mysql-root", "", "directory of a Debian root holding MySQL (default "+discovery.DefaultMySQLRoot()+")")
	f.Uint64Var(&s.seed, "rand-seed", 0, "random seed; 0 = from the clock")
	addInstrumentFlag(f, &s.instrument)
}

func (s *studyFlags) common(cmd *cobra.Command, name string) (study.Common, error) {
	var c study.Common
	insts, err := discovery.Select(s.engines, s.mysqlRoot)
	if err != nil {
		return c, badInput(err)
	}
	var kinds []string
	installs := map[string]discovery.Installation{}
	for _, in := range insts {
		if _, dup := installs[in.Kind]; dup {
			return c, badInputf("--engines %s: a study takes one version of each engine; run it once per version", s.engines)
		}
		installs[in.Kind] = in
		kinds = append(kinds, in.Kind)
	}
	d, err := runspec.ParseDuration("--time", s.duration)
	if err != nil {
		return c, err
	}
	if d < time.Second {
		return c, badInputf("--time must be at least 1s, got %s", s.duration)
	}
	if err := runspec.CheckThreads("--threads", []int{s.threads}); err != nil {
		return c, err
	}
	if s.tables < 1 {
		return c, badInputf("--tables must be at least 1")
	}
	if s.tableSize < 0 || (s.tableSize > 0 && s.tableSize < 100) {
		return c, badInputf("--table-size must be at least 100 rows")
	}
	bp, err := runspec.ParseSize("--buffer-pool", s.bufferPool)
	if err != nil {
		return c, err
	}
	if bp < 32<<20 || bp%(1<<20) != 0 {
		return c, badInputf("--buffer-pool %q: use whole MiB, at least 32M, e.g. 64M", s.bufferPool)
	}
	waitEvery, err := instrumentEvery(s.instrument)
	if err != nil {
		return c, err
	}
	out := s.out
	if out == "" {
		out = filepath.Join("out", "study-"+name+"-"+time.Now().Format("20060102-150405"))
	}
	doc := filepath.Join(out, name+".json")
	if _, err := os.Stat(doc); err == nil {
		return c, badInputf("%s already holds a study (%s): choose another --out", out, doc)
	}
	return study.Common{Engines: kinds, Installs: installs, MySQLRoot: s.mysqlRoot, WorkDir: s.workDir, Time: d, Threads: s.threads,
		Tables: s.tables, TableSize: s.tableSize, BufferPoolBytes: bp, OutDir: out, Seed: s.seed, WaitEvery: waitEvery,
		Command: "fairbench " + strings.Join(os.Args[1:], " "), Log: cmd.ErrOrStderr()}, nil
}

func reportStudy(cmd *cobra.Command, out string, runErr error) error {
	if _, err := os.Stat(filepath.Join(out, "report.md")); err == nil {
		fmt.Fprintf(cmd.OutOrStdout(), "report: %s and %s\n", filepath.Join(out, "report.md"), filepath.Join(out, "report.html"))
	}
	if runErr != nil {
		return fmt.Errorf("study did not finish (what was measured is in %s, marked incomplete): %w", out, runErr)
	}
	return nil
}

func newStudyMVCCCmd() *cobra.Command {
	var s studyFlags
	cmd := &cobra.Command{
		Use:   "mvcc [--engines postgres,mariadb] [--time 20s] [--out DIR]",
		Short: "Pages per SELECT and per UPDATE under each engine's MVCC design, with vacuum on and off",
		Long: "mvcc starts each engine with a small buffer pool, loads sbtest data about three times its size and\n" +
			"measures, per phase, the pages requested and read per point SELECT and per non-index UPDATE:\n" +
			"on fresh data, after updates and (PostgreSQL) after a VACUUM, with PostgreSQL's autovacuum off and on.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := s.common(cmd, "mvcc")
			if err != nil {
				return err
			}
			_, runErr := study.RunMVCC(cmd.Context(), c)
			return reportStudy(cmd, c.OutDir, runErr)
		},
	}
	s.register(cmd.Flags(), "phase")
	cmd.Flags().StringVar(&s.workDir, "workdir", "", "where the servers' throwaway data directories go (default the system temp dir)")
	return cmd
}

func newStudyBandwidthCmd() *cobra.Command {
	var s studyFlags
	var limits, deviceSize, serverMemory string
	var tpchScale float64
	cmd := &cobra.Command{
		Use:   "bandwidth [--engines postgres,mariadb] [--limits 50M,125M,250M,500M,max] [--out DIR]",
		Short: "OLTP throughput with the data directory on a device capped from a trickle to its maximum",
		Long: "bandwidth puts each engine's data directory on a loop device of its own and caps its read and write\n" +
			"bandwidth with cgroups (v2 io.max or v1 blkio throttling), proving each cap with direct I/O before\n" +
			"measuring OLTP read-write and timing TPC-H Q18 at it. It needs root.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// Checked first: nothing else matters on a machine where the study cannot run.
			if _, err := study.CheckBandwidth(); err != nil {
				if errors.Is(err, throttle.ErrNotRoot) {
					return badInputf("study bandwidth %v", err)
				}
				return badInputf("study bandwidth cannot cap a device here: %v", err)
			}
			var ls []string
			for _, l := range strings.Split(limits, ",") {
				if l = strings.TrimSpace(l); l == "" {
					continue
				}
				if _, err := throttle.ParseRate(l); err != nil {
					return badInputf("--limits: %v", err)
				}
				ls = append(ls, l)
			}
			if len(ls) == 0 {
				return badInputf("--limits is empty: give caps like 50M,125M,max")
			}
			var dev int64
			if deviceSize != "" {
				n, err := runspec.ParseSize("--device-size", deviceSize)
				if err != nil {
					return err
				}
				if n < 256<<20 {
					return badInputf("--device-size %q: use a size like 8G, at least 256M", deviceSize)
				}
				dev = n
			}
			if tpchScale < 0 || tpchScale > 100 {
				return badInputf("--tpch-scale %v: use a TPC-H scale factor like 0.1, or 0 to skip Q18", tpchScale)
			}
			var mem int64
			if serverMemory != "" {
				n, err := runspec.ParseSize("--server-memory", serverMemory)
				if err != nil {
					return err
				}
				if n < 64<<20 {
					return badInputf("--server-memory %q: use a size like 512M, at least 64M and more than the buffer pool", serverMemory)
				}
				mem = n
			}
			c, err := s.common(cmd, "bandwidth")
			if err != nil {
				return err
			}
			if mem > 0 && mem <= c.BufferPoolBytes {
				return badInputf("--server-memory %s is not more than the %d MiB buffer pool: give the server room for its pool, connections and some page cache (e.g. %dM)", serverMemory, c.BufferPoolBytes>>20, 3*c.BufferPoolBytes>>20)
			}
			_, runErr := study.RunBandwidth(cmd.Context(), study.BandwidthOptions{Common: c, Limits: ls, DeviceBytes: dev, TPCHScale: tpchScale, ServerMemory: mem})
			return reportStudy(cmd, c.OutDir, runErr)
		},
	}
	s.register(cmd.Flags(), "step")
	f := cmd.Flags()
	f.StringVar(&limits, "limits", strings.Join(study.DefaultLimits, ","), "bandwidth caps, read and write each (M = MiB/s; max = uncapped)")
	f.StringVar(&deviceSize, "device-size", "", fmt.Sprintf("size of the sparse loop device (default %dG)", throttle.DefaultDeviceSize>>30))
	f.StringVar(&serverMemory, "server-memory", "", "cap each server's memory, its page cache included (e.g. 256M): data larger than memory, as in the study (default: no cap)")
	f.Float64Var(&tpchScale, "tpch-scale", study.DefaultTPCHScale, "TPC-H scale factor of the data Q18 is timed on at every step (0 skips Q18)")
	f.StringVar(&s.workDir, "workdir", "", "where the loop device's backing file goes; its disk is the uncapped maximum (default the system temp dir)")
	return cmd
}
