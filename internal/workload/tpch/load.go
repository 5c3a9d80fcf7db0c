package tpch

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fairbench/fairbench/internal/dialect"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/workload"
)

// VenvGenerator is where scripts/install-engines.sh installs tpchgen-cli when it has to use a
// virtual environment; the workload looks there when the command is not on PATH.
const VenvGenerator = "/opt/fairbench/venv/bin/tpchgen-cli"

// findGenerator locates tpchgen-cli, the Rust re-implementation of dbgen on PyPI that writes the
// same .tbl rows as dbgen.
func findGenerator() (string, error) {
	if p, err := exec.LookPath("tpchgen-cli"); err == nil {
		return p, nil
	}
	if st, err := os.Stat(VenvGenerator); err == nil && !st.IsDir() {
		return VenvGenerator, nil
	}
	return "", errors.New("tpchgen-cli (the TPC-H data generator) is not installed: run scripts/install-engines.sh " +
		"(or pip install tpchgen-cli), or pass --tbl-dir with dbgen's .tbl files")
}

// generate writes the .tbl files for sf into dir and says which generator made them.
func generate(ctx context.Context, sf float64, dir string) (string, error) {
	bin, err := findGenerator()
	if err != nil {
		return "", err
	}
	ver, _ := exec.CommandContext(ctx, bin, "--version").Output()
	cmd := exec.CommandContext(ctx, bin, "--scale-factor", formatSF(sf), "--output-dir", dir, "--quiet")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("tpchgen-cli --scale-factor %s: %v: %s", formatSF(sf), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(ver)), nil
}

func (w *tpch) Prepare(ctx context.Context, env *workload.Env) error {
	c, err := env.Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	if env.Force {
		if err := dropLeftoverViews(ctx, c); err != nil {
			return err
		}
	}
	if err := workload.ClaimTables(ctx, c, Name, tableNames(), env.Force); err != nil {
		return err
	}
	logf := func(format string, args ...any) {
		if env.Log != nil {
			fmt.Fprintf(env.Log, "tpch: "+format+"\n", args...)
		}
	}

	dir, source, removeDir, err := w.tblFiles(ctx, logf)
	if err != nil {
		return err
	}
	defer removeDir()
	if err := createTables(ctx, c); err != nil {
		return err
	}

	method, restore := startLoading(ctx, c, logf)
	defer restore()

	var total int64
	for _, t := range tables {
		total += t.expectedRows(w.cfg.sf)
	}
	var done atomic.Int64
	progress := func(n int64) {
		if env.Progress != nil {
			env.Progress(done.Add(n), total)
		}
	}

	t0 := time.Now()
	stats, err := loadAll(ctx, env, dir, progress)
	if err != nil {
		return err
	}
	elapsed := time.Since(t0).Seconds()
	if env.Progress != nil {
		env.Progress(done.Load(), done.Load())
	}

	meta := map[string]string{
		"scale_factor": formatSF(w.cfg.sf),
		"source":       source,
		"load_method":  method,
		"load_s.total": strconv.FormatFloat(elapsed, 'f', 3, 64),
	}
	for name, s := range stats {
		meta["rows."+name] = strconv.FormatInt(s.rows, 10)
		meta["load_s."+name] = strconv.FormatFloat(s.seconds, 'f', 3, 64)
		logf("%-8s %10d rows in %6.1fs", name, s.rows, s.seconds)
	}
	logf("loaded in %.1fs (%s), keys, indexes and statistics included", elapsed, method)
	return writeMeta(ctx, c, meta)
}

// tblFiles finds the data to load: --tbl-dir's dbgen output, or tables generated now into a
// temporary directory that remove deletes. source says which, for the results.
func (w *tpch) tblFiles(ctx context.Context, logf func(string, ...any)) (dir, source string, remove func(), err error) {
	dir, remove = w.cfg.tblDir, func() {}
	if dir == "" {
		tmp, err := os.MkdirTemp("", "fairbench-tpch-")
		if err != nil {
			return "", "", nil, err
		}
		remove = func() { os.RemoveAll(tmp) }
		t0 := time.Now()
		if source, err = generate(ctx, w.cfg.sf, tmp); err != nil {
			remove()
			return "", "", nil, err
		}
		logf("generated SF %s with %s in %.1fs", formatSF(w.cfg.sf), source, time.Since(t0).Seconds())
		dir = tmp
	} else {
		source = "tbl files from " + dir
	}
	for _, t := range tables {
		if _, err := os.Stat(filepath.Join(dir, t.name+".tbl")); err != nil {
			remove()
			return "", "", nil, fmt.Errorf("no %s.tbl in %s: --%s must name a directory of dbgen's output", t.name, dir, OptTblDir)
		}
	}
	return dir, source, remove, nil
}

// createTables creates every table, marked as ours, before any is loaded: a failed load leaves
// nothing that cleanup would refuse to drop.
func createTables(ctx context.Context, c sqldb.Conn) error {
	for _, t := range tables {
		if err := workload.CreateOwned(ctx, c, t.name, t.createSQL(dialect.Of(c))); err != nil {
			return fmt.Errorf("creating %s: %w", t.name, err)
		}
	}
	if err := workload.CreateOwned(ctx, c, metaTable, metaCreateSQL); err != nil {
		return fmt.Errorf("creating %s: %w", metaTable, err)
	}
	return nil
}

type tableStats struct {
	rows    int64
	seconds float64
}

// loadAll loads the tables on env.LoadThreads connections, largest first so the longest load
// starts at once; each table's time covers its rows, keys, indexes and statistics.
func loadAll(ctx context.Context, env *workload.Env, dir string, progress func(int64)) (map[string]tableStats, error) {
	order := append([]table(nil), tables...)
	sort.SliceStable(order, func(i, j int) bool {
		return order[i].baseRows*10+order[i].fixedRows > order[j].baseRows*10+order[j].fixedRows
	})
	threads := min(max(env.LoadThreads, 1), len(order))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan table)
	var mu sync.Mutex
	stats := map[string]tableStats{}
	var firstErr error
	fail := func(err error) {
		mu.Lock()
		if firstErr == nil {
			firstErr = err
			cancel()
		}
		mu.Unlock()
	}
	var wg sync.WaitGroup
	for i := 0; i < threads; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := env.Connect(ctx)
			if err != nil {
				fail(err)
				for range next {
				}
				return
			}
			defer conn.Close()
			if err := workload.ExecAll(ctx, conn, dialect.Of(conn).LoadingSession()); err != nil {
				fail(err)
			}
			for t := range next {
				if ctx.Err() != nil {
					continue
				}
				t0 := time.Now()
				rows, err := loadTable(ctx, conn, t, filepath.Join(dir, t.name+".tbl"), progress)
				if err == nil {
					err = finishTable(ctx, conn, t)
				}
				if err != nil {
					fail(fmt.Errorf("loading %s: %w", t.name, err))
					continue
				}
				mu.Lock()
				stats[t.name] = tableStats{rows: rows, seconds: time.Since(t0).Seconds()}
				mu.Unlock()
			}
		}()
	}
	for _, t := range order {
		next <- t
	}
	close(next)
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	return stats, ctx.Err()
}

// finishTable builds what the load left out and refreshes the planner's statistics. On
// PostgreSQL VACUUM (ANALYZE) also sets the hint bits and the visibility map, which the first
// query would otherwise do (and write out) on its own time; InnoDB has no such deferred work.
func finishTable(ctx context.Context, c sqldb.Conn, t table) error {
	d := dialect.Of(c)
	for _, q := range t.indexSQL(d) {
		if err := c.Exec(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return d.Maintain(ctx, c, t.name)
}

// startLoading readies the engine's bulk path (COPY, LOAD DATA LOCAL INFILE) and says how the
// tables will load: multi-row INSERTs where the server refuses the bulk path and this user may
// not allow it (dialect.Loader).
func startLoading(ctx context.Context, c sqldb.Conn, logf func(string, ...any)) (string, func()) {
	method, restore := dialect.LoaderFor(c.Kind()).StartLoading(ctx, c)
	if method == dialect.InsertMethod {
		logf("the server refuses LOAD DATA LOCAL INFILE and this user cannot turn local_infile on: loading with multi-row INSERTs")
	}
	return method, restore
}

// countingReader counts the lines (rows) it passes on and reports them as progress.
type countingReader struct {
	r        io.Reader
	lines    int64
	pending  int64
	progress func(int64)
}

func (cr *countingReader) Read(p []byte) (int, error) {
	n, err := cr.r.Read(p)
	k := int64(bytes.Count(p[:n], []byte{'\n'}))
	cr.lines += k
	cr.pending += k
	if cr.pending >= 10000 || err != nil {
		cr.progress(cr.pending)
		cr.pending = 0
	}
	return n, err
}

func loadTable(ctx context.Context, c sqldb.Conn, t table, path string, progress func(int64)) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	cr := &countingReader{r: bufio.NewReaderSize(f, 1<<20), progress: progress}
	if err := bulkRows(ctx, c, t, cr); err != nil {
		return 0, err
	}
	cr.progress(cr.pending)
	cr.pending = 0
	return cr.lines, nil
}

// bulkRows turns dbgen's "a|b|c|" lines into the bulk loaders' text format ("a\tb\tc"). dbgen
// writes no tabs or backslashes, but they are escaped anyway so no text could be read as
// something else.
func bulkRows(ctx context.Context, c sqldb.Conn, t table, r io.Reader) error {
	pr, pw := io.Pipe()
	go func() {
		br := bufio.NewReaderSize(r, 1<<20)
		bw := bufio.NewWriterSize(pw, 1<<20)
		var out []byte
		for {
			line, err := br.ReadSlice('\n')
			if err == bufio.ErrBufferFull {
				pw.CloseWithError(errors.New("a line longer than 1 MB: not a dbgen .tbl file"))
				return
			}
			if len(line) > 0 {
				out = appendCopyLine(out[:0], line)
				if _, werr := bw.Write(out); werr != nil {
					pw.CloseWithError(werr)
					return
				}
			}
			if err == io.EOF {
				pw.CloseWithError(bw.Flush())
				return
			}
			if err != nil {
				pw.CloseWithError(err)
				return
			}
		}
	}()
	err := dialect.LoaderFor(c.Kind()).Load(ctx, c, t.name, t.columnNames(), pr)
	pr.CloseWithError(err)
	return err
}

func appendCopyLine(out, line []byte) []byte {
	line = bytes.TrimRight(line, "\r\n")
	line = bytes.TrimSuffix(line, []byte{'|'})
	for _, b := range line {
		switch b {
		case '|':
			out = append(out, '\t')
		case '\\':
			out = append(out, '\\', '\\')
		case '\t':
			out = append(out, '\\', 't')
		default:
			out = append(out, b)
		}
	}
	return append(out, '\n')
}

func writeMeta(ctx context.Context, c sqldb.Conn, meta map[string]string) error {
	keys := make([]string, 0, len(meta))
	for k := range meta {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	vals := make([]string, len(keys))
	for i, k := range keys {
		vals[i] = fmt.Sprintf("('%s', '%s')", sqlQuote(k), sqlQuote(meta[k]))
	}
	return c.Exec(ctx, "INSERT INTO "+metaTable+" (k, v) VALUES "+strings.Join(vals, ", "))
}

// sqlQuote doubles quotes for a literal; the values are fairbench's own (numbers, a generator's
// version, a path), and a doubled quote is read the same way by every engine.
func sqlQuote(s string) string { return strings.ReplaceAll(s, "'", "''") }

// readMeta returns prepare's record, or a NotPreparedError when the tables are not there.
func readMeta(ctx context.Context, c sqldb.Conn) (map[string]string, error) {
	rows, err := c.Query(ctx, "SELECT k, v FROM "+metaTable)
	if err != nil {
		if sqldb.IsUndefinedTable(err) {
			return nil, &workload.NotPreparedError{Workload: Name, Detail: "the TPC-H tables are not there"}
		}
		return nil, err
	}
	meta := map[string]string{}
	for _, r := range rows {
		meta[r[0]] = r[1]
	}
	if meta["load_s.total"] == "" {
		return nil, &workload.NotPreparedError{Workload: Name + " --force", Detail: "the TPC-H load did not finish"}
	}
	return meta, nil
}

// checkScale refuses to run or check data of another scale factor than the options say.
func (w *tpch) checkScale(meta map[string]string) error {
	sf, err := strconv.ParseFloat(meta["scale_factor"], 64)
	if err != nil {
		return fmt.Errorf("%s has no valid scale factor (%q): prepare again with --force", metaTable, meta["scale_factor"])
	}
	if sf != w.cfg.sf {
		return fmt.Errorf("the loaded TPC-H data is scale factor %s, not %s: pass --%s %s or prepare again",
			formatSF(sf), formatSF(w.cfg.sf), OptScaleFactor, formatSF(sf))
	}
	return nil
}

// Traits: the size at the least, dbgen writing about 1 GB of text per unit of scale factor,
// which the engines store in more (1.3-2 GB with keys and indexes).
func (w *tpch) Traits() workload.Traits {
	return workload.Traits{MinDataBytes: int64(w.cfg.sf * (1 << 30)), TransactionKinds: queryKinds()}
}

func (w *tpch) Cleanup(ctx context.Context, env *workload.Env) error {
	c, err := env.Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := dropLeftoverViews(ctx, c); err != nil {
		return err
	}
	return workload.DropOwned(ctx, c, tableNames())
}

// dropLeftoverViews removes Q15 views (fb_revenueN) that a killed run could not drop: on
// PostgreSQL they would keep lineitem and supplier from being dropped.
func dropLeftoverViews(ctx context.Context, c sqldb.Conn) error {
	rows, err := c.Query(ctx, "SELECT table_name FROM information_schema.views WHERE table_schema = "+
		dialect.Of(c).CurrentSchema()+" AND table_name LIKE 'fb\\_revenue%'")
	if err != nil {
		return err
	}
	for _, r := range rows {
		if err := c.Exec(ctx, "DROP VIEW "+r[0]); err != nil {
			return err
		}
	}
	return nil
}

// Check verifies the eight tables hold dbgen's row counts for the scale factor: exact for the
// tables whose size is base × SF, and for lineitem, whose size is drawn, the count the
// generator produced at prepare (itself within 2% of 6,000,000 × SF).
func (w *tpch) Check(ctx context.Context, env *workload.Env) error {
	c, err := env.Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	meta, err := readMeta(ctx, c)
	if err != nil {
		return err
	}
	if err := w.checkScale(meta); err != nil {
		return err
	}
	var problems []string
	for _, t := range tables {
		rows, err := c.Query(ctx, "SELECT COUNT(*) FROM "+t.name)
		if err != nil {
			if sqldb.IsUndefinedTable(err) {
				return &workload.NotPreparedError{Workload: Name, Detail: "table " + t.name + " not found"}
			}
			return err
		}
		got, _ := strconv.ParseInt(rows[0][0], 10, 64)
		want := t.expectedRows(w.cfg.sf)
		if t.baseRows > 0 && t.name == "lineitem" {
			loaded, err := strconv.ParseInt(meta["rows.lineitem"], 10, 64)
			if err != nil {
				return fmt.Errorf("%s has no lineitem count: prepare again with --force", metaTable)
			}
			if d := float64(loaded-want) / float64(want); d > 0.02 || d < -0.02 {
				problems = append(problems, fmt.Sprintf("lineitem: the generator wrote %d rows, more than 2%% from 6,000,000 × SF = %d", loaded, want))
			}
			want = loaded
		}
		if got != want {
			problems = append(problems, fmt.Sprintf("%s: %d rows, expected %d", t.name, got, want))
		}
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}
