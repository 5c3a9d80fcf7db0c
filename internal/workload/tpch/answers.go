package tpch

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/fairbench/fairbench/internal/result"
)

// Answer is one query's result set as text: column names and rows, in order.
type Answer struct {
	Columns []string
	Rows    [][]string
}

// answerDecimals is how many decimals a normalized answer keeps: more than the official answers'
// two, so that two engines whose exact values straddle a rounding boundary still compare within
// the tolerances, and few enough that the engines' different division scales (PostgreSQL's
// numeric keeps 16 digits or more, MySQL's div_precision_increment 4 more than the operands)
// do not show.
const answerDecimals = 4

var numberRE = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?$`)

// normalizeValue trims the padding engines and the answer files add (CHAR columns, aligned
// output) and writes decimals with answerDecimals places; integers, dates and strings are kept.
// sqldb reads NULL as "", and TPC-H has no empty strings, so "" is NULL (Q17's sum over no rows
// at small scale factors), written out so that the row is not a blank line.
func normalizeValue(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return "NULL"
	}
	if !numberRE.MatchString(s) || !strings.Contains(s, ".") {
		return s
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return s
	}
	return r.FloatString(answerDecimals)
}

// Normalize returns the answer with every value normalized (see normalizeValue).
func Normalize(a Answer) Answer {
	out := Answer{Columns: make([]string, len(a.Columns)), Rows: make([][]string, len(a.Rows))}
	for i, c := range a.Columns {
		out.Columns[i] = strings.TrimSpace(c)
	}
	for i, row := range a.Rows {
		out.Rows[i] = make([]string, len(row))
		for j, v := range row {
			out.Rows[i][j] = normalizeValue(v)
		}
	}
	return out
}

// ratioColumns are the result columns that are averages or ratios, compared within 1% (TPC-H
// clause 2.1.3.5); every other decimal column is money or a sum of quantities, compared to the
// cent. Indexes are 0-based.
//
// Q17's avg_yearly is sum/7.0, the yearly average the query is named for, and is compared as an
// average: the TPC-H tools' answers/q17.out says 348406.02 where exact decimal arithmetic (every
// engine here) gives 348406.0543, a difference the reference implementation's rounding made and
// that the specification's own rule for it (an average, within 1%) accepts.
var ratioColumns = map[int][]int{
	1:  {6, 7, 8}, // avg_qty, avg_price, avg_disc
	8:  {1},       // mkt_share
	14: {0},       // promo_revenue, a percentage
	17: {0},       // avg_yearly
}

func isRatio(q, col int) bool {
	for _, c := range ratioColumns[q] {
		if c == col {
			return true
		}
	}
	return false
}

// CompareAnswers checks got against want with the TPC-H precision rules: the same number of rows
// in the same order; integers (counts, keys, years) exact; averages and ratios within 1% after
// rounding got to want's decimals; other decimals (money, sums of quantities) within one cent;
// strings exact after trimming. want is the reference (official answer or the engine that
// answered first); detail names the first difference.
func CompareAnswers(q int, got, want Answer) (ok bool, detail string) {
	if len(got.Rows) != len(want.Rows) {
		return false, fmt.Sprintf("%d rows, expected %d", len(got.Rows), len(want.Rows))
	}
	for i := range want.Rows {
		g, w := got.Rows[i], want.Rows[i]
		if len(g) != len(w) {
			return false, fmt.Sprintf("row %d: %d columns, expected %d", i+1, len(g), len(w))
		}
		for j := range w {
			if same, why := compareValue(q, j, g[j], w[j]); !same {
				name := ""
				if j < len(want.Columns) && want.Columns[j] != "" {
					name = " (" + want.Columns[j] + ")"
				}
				return false, fmt.Sprintf("row %d column %d%s: got %s, expected %s%s",
					i+1, j+1, name, strings.TrimSpace(g[j]), strings.TrimSpace(w[j]), why)
			}
		}
	}
	return true, ""
}

// compareValue reports whether got matches want and, when not, why beyond the values themselves.
func compareValue(q, col int, got, want string) (bool, string) {
	got, want = strings.TrimSpace(got), strings.TrimSpace(want)
	if got == want {
		return true, ""
	}
	if !numberRE.MatchString(want) || !numberRE.MatchString(got) {
		return false, ""
	}
	w, _ := new(big.Rat).SetString(want)
	g, _ := new(big.Rat).SetString(got)
	decimals := 0
	if i := strings.IndexByte(want, '.'); i >= 0 {
		decimals = len(want) - i - 1
	}
	if decimals == 0 {
		return g.Cmp(w) == 0, ""
	}
	// The reference was rounded to its decimals; round got the same way before comparing.
	// Exact rational arithmetic: a float64 cannot tell 0.01 from 0.0100001 at 1e10 dollars.
	gr, _ := new(big.Rat).SetString(g.FloatString(decimals))
	diff := new(big.Rat).Abs(new(big.Rat).Sub(gr, w))
	cent := big.NewRat(1, 100)
	if isRatio(q, col) {
		return diff.Cmp(new(big.Rat).Mul(new(big.Rat).Abs(w), cent)) <= 0, " (more than 1% off)"
	}
	return diff.Cmp(cent) <= 0, " (more than a cent off)"
}

// ReadAnswer reads an answer file: '|'-separated, the first line the column names, as the TPC-H
// tools' answers/qN.out and fairbench's own answer files are.
func ReadAnswer(path string) (Answer, error) {
	f, err := os.Open(path)
	if err != nil {
		return Answer{}, err
	}
	defer f.Close()
	var a Answer
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	first := true
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if first {
			a.Columns = strings.Split(line, "|")
			for i := range a.Columns {
				a.Columns[i] = strings.TrimSpace(a.Columns[i])
			}
			first = false
			continue
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		a.Rows = append(a.Rows, strings.Split(line, "|"))
	}
	if err := sc.Err(); err != nil {
		return Answer{}, err
	}
	if first {
		return Answer{}, fmt.Errorf("%s is empty: an answer file starts with the column names", path)
	}
	return a, nil
}

// WriteAnswer writes a normalized answer in the same layout, atomically, so a reader never sees
// half a file.
func WriteAnswer(path string, a Answer) error {
	var b strings.Builder
	b.WriteString(strings.Join(a.Columns, "|"))
	b.WriteByte('\n')
	for _, row := range a.Rows {
		b.WriteString(strings.Join(row, "|"))
		b.WriteByte('\n')
	}
	return result.WriteFileAtomic(path, []byte(b.String()))
}

// CompareAnswerDirs compares, query by query, the answer files two runs wrote (with the
// answers-out option, or the answers cache) and returns a detail for each query whose answers
// differ; queries missing from either directory are skipped. It is what a comparison of several
// engines calls to show that they all returned the same answers.
func CompareAnswerDirs(dirA, dirB string) (map[int]string, error) {
	diffs := map[int]string{}
	for q := 1; q <= numQueries; q++ {
		name := fmt.Sprintf("q%d.out", q)
		a, errA := ReadAnswer(filepath.Join(dirA, name))
		b, errB := ReadAnswer(filepath.Join(dirB, name))
		if errors.Is(errA, fs.ErrNotExist) || errors.Is(errB, fs.ErrNotExist) {
			continue
		}
		if errA != nil {
			return nil, errA
		}
		if errB != nil {
			return nil, errB
		}
		if ok, d := CompareAnswers(q, a, b); !ok {
			diffs[q] = d
		}
	}
	return diffs, nil
}

// officialAnswersDir finds the TPC-H tools' SF 1 answers: the --answers option when given, else
// ../shared/tpch/answers-sf1 or shared/tpch/answers-sf1 beside the repository root (found
// upward from the working directory and from the executable). "" means none was found.
func officialAnswersDir(opt string) string {
	if opt != "" {
		return opt
	}
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if exe, err := os.Executable(); err == nil {
		starts = append(starts, filepath.Dir(exe))
	}
	for _, start := range starts {
		for dir := start; ; dir = filepath.Dir(dir) {
			if isFile(filepath.Join(dir, "go.mod")) || isDir(filepath.Join(dir, ".git")) {
				for _, c := range []string{filepath.Join(dir, "..", "shared", "tpch", "answers-sf1"), filepath.Join(dir, "shared", "tpch", "answers-sf1")} {
					if isFile(filepath.Join(c, "q1.out")) {
						return filepath.Clean(c)
					}
				}
				break
			}
			if filepath.Dir(dir) == dir {
				break
			}
		}
	}
	return ""
}

func isFile(p string) bool { st, err := os.Stat(p); return err == nil && st.Mode().IsRegular() }
func isDir(p string) bool  { st, err := os.Stat(p); return err == nil && st.IsDir() }

// answersCacheDir is where the first engine's answers wait for the next engines': under
// base (the answers-cache option) or $XDG_CACHE_HOME/fairbench/tpch-answers (~/.cache when
// unset), one directory per scale factor and seed.
func answersCacheDir(base string, sf float64, seed uint64) (string, error) {
	if base == "" {
		root := os.Getenv("XDG_CACHE_HOME")
		if root == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return "", fmt.Errorf("no cache directory for cross-engine answers: %w", err)
			}
			root = filepath.Join(home, ".cache")
		}
		base = filepath.Join(root, "fairbench", "tpch-answers")
	}
	return filepath.Join(base, fmt.Sprintf("sf%s-seed%d", formatSF(sf), seed)), nil
}

// answerFile names a query's answer in a cache: streams share one when they run the same
// parameters (seed 0), and have their own otherwise.
func answerFile(q int, seed uint64, stream int) string {
	if seed == 0 || stream == 0 {
		return fmt.Sprintf("q%d.out", q)
	}
	return fmt.Sprintf("q%d-s%d.out", q, stream)
}

// checkCached compares a with the cached answer, or stores a as the reference when there is none
// yet, with a note of who answered first. It returns ok and a detail for a mismatch.
func checkCached(dir, file string, q int, a Answer, who string) (bool, string, error) {
	path := filepath.Join(dir, file)
	ref, err := ReadAnswer(path)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return false, "", err
		}
		if err := WriteAnswer(path, a); err != nil {
			return false, "", err
		}
		note := fmt.Sprintf("%s at %s\n", who, time.Now().UTC().Format(time.RFC3339))
		return true, "", result.WriteFileAtomic(strings.TrimSuffix(path, ".out")+".src", []byte(note))
	}
	if err != nil {
		return false, "", err
	}
	if ok, d := CompareAnswers(q, a, ref); !ok {
		src, _ := os.ReadFile(strings.TrimSuffix(path, ".out") + ".src")
		from := strings.TrimSpace(string(src))
		if from == "" {
			from = "an earlier run"
		}
		return false, d + " (reference: " + from + ", " + path + ")", nil
	}
	return true, "", nil
}

// checker compares answers with the reference of the run: the official SF 1 answers, or the
// answers the first engine gave on the same data and parameters.
type checker struct {
	mode     string
	official string // directory
	cache    string // directory
	out      string // directory for --answers-out, or ""
	seed     uint64
	who      string
	mu       sync.Mutex
	refs     map[int]Answer
}

func (w *tpch) newChecker(who string, log io.Writer) *checker {
	ck := &checker{mode: CheckedNone, out: w.cfg.answersOut, seed: w.cfg.seed, who: who, refs: map[int]Answer{}}
	if w.cfg.sf == 1 && w.cfg.seed == 0 {
		if dir := officialAnswersDir(w.cfg.answers); dir != "" {
			ck.mode, ck.official = CheckedOfficial, dir
			return ck
		}
		if log != nil {
			fmt.Fprintf(log, "tpch: the official SF 1 answers are not there (--%s): checking answers across engines instead\n", OptAnswers)
		}
	}
	dir, err := answersCacheDir(w.cfg.answersCache, w.cfg.sf, w.cfg.seed)
	if err != nil {
		if log != nil {
			fmt.Fprintf(log, "tpch: answers are not checked: %v\n", err)
		}
		return ck
	}
	ck.mode, ck.cache = CheckedCrossEngine, dir
	return ck
}

// check normalizes a and compares it; ok with an empty detail when it matches or when it is the
// first answer seen for that query.
func (ck *checker) check(q, stream int, a Answer) (bool, string, error) {
	a = Normalize(a)
	ck.mu.Lock()
	defer ck.mu.Unlock()
	if ck.out != "" {
		if err := WriteAnswer(filepath.Join(ck.out, answerFile(q, ck.seed, stream)), a); err != nil {
			return false, "", err
		}
	}
	switch ck.mode {
	case CheckedOfficial:
		ref, ok := ck.refs[q]
		if !ok {
			var err error
			if ref, err = ReadAnswer(filepath.Join(ck.official, fmt.Sprintf("q%d.out", q))); err != nil {
				return false, "", fmt.Errorf("reading the official answer of Q%d: %w", q, err)
			}
			ck.refs[q] = ref
		}
		ok, d := CompareAnswers(q, a, ref)
		if !ok {
			d += " (official answer " + filepath.Join(ck.official, fmt.Sprintf("q%d.out", q)) + ")"
		}
		return ok, d, nil
	case CheckedCrossEngine:
		return checkCached(ck.cache, answerFile(q, ck.seed, stream), q, a, ck.who)
	}
	return true, "", nil
}
