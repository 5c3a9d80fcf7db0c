// Package workload defines what a benchmark workload is to fairbench: data plus a small interface
// (prepare, one transaction, cleanup, check). The runner owns everything else: threads, timing,
// rate, retries, progress and counting, so every workload is measured the same way.
package workload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fairbench/fairbench/internal/randgen"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/sqldb"
)

// Workload is one configured benchmark.
type Workload interface {
	// Prepare creates and loads the workload's tables. It must refuse to touch tables that already
	// exist unless env.Force is set, and then only tables this workload creates.
	Prepare(ctx context.Context, env *Env) error
	// Cleanup drops the tables Prepare created and nothing else.
	Cleanup(ctx context.Context, env *Env) error
	// Check verifies the data after a run (invariants, row counts); nil means it is consistent.
	Check(ctx context.Context, env *Env) error
	// NewWorker prepares one thread's statements on its own connection.
	NewWorker(ctx context.Context, conn sqldb.Conn, rng *randgen.Rand, thread, threads int) (Worker, error)
	// Traits is what the workload declares about itself, as data.
	Traits() Traits
}

// Traits are what a workload declares about itself, so that the runner and the job ask one
// value instead of probing for one-method interfaces. The zero value declares nothing: one
// kind of transaction, no statement timed apart, no size known before loading, transactions
// that may write, tables of its own, the data check only when asked for.
type Traits struct {
	// TransactionKinds: the workload's several transaction types (TPC-C's new_order, payment...);
	// the runner keeps counts and latency per type, Txn.Kind indexing this list.
	TransactionKinds []string
	// StatementLabels: the workload times each of its statements, as pgbench -r does; the runner
	// gives its workers a StatementTimes and reports each statement's executions, failures and
	// latency, a worker's index being into this list.
	StatementLabels []string
	// MinDataBytes: how many bytes the data set takes on a server at the least (the rows' values
	// and headers, not the engines' free space or every index), 0 when not known: prepare refuses
	// a data set that cannot fit in the free space of a data directory on this machine instead of
	// filling the disk.
	MinDataBytes int64
	// ReadOnly: the measured transactions never write, so compare --read-replicas may send them
	// to a cluster's replicas (a replica refuses writes and a mixed transaction cannot be split).
	ReadOnly bool
	// ExistingTables: the tables the workload runs on without having created them (a workload
	// file with existing_tables: true); the job then prepares and cleans up nothing, records no
	// data set and checks that the tables are there. nil for a workload that creates its own.
	ExistingTables []string
	// CheckAfterRun: the data check runs after every run (TPC-C's consistency conditions).
	CheckAfterRun bool
}

// Worker runs transactions for one runner thread. It is never used by two goroutines at once.
type Worker interface {
	// Transaction runs one transaction and says in q what it was (its kind, its pauses); the
	// connection counts the statements it sent, also on error. On error the runner rolls back and
	// decides whether to retry.
	Transaction(ctx context.Context, q *Txn) error
}

// Txn is what a worker says of the transaction it runs, beside the statements its connection
// counts (sqldb.Counters: reads, writes and other, as sysbench reports them), which no worker
// counts itself.
type Txn struct {
	// Kind is the index, in Traits.TransactionKinds, of the transaction type the worker ran; workloads
	// with one kind of transaction leave it 0.
	Kind int
	// Paused is time the worker waited on purpose (TPC-C's keying and think times): the runner
	// leaves it out of the transaction's latency, as the spec measures response time.
	Paused time.Duration
	// Times is where the worker of a workload with Traits.StatementLabels records each statement it sent, with
	// its latency as the client saw it; nil for other workloads (Add then does nothing).
	Times *StatementTimes
	// Retry is set by the runner when it calls Transaction again after a deadlock, serialization
	// failure or duplicate key: the worker runs the same kind of transaction again, so that a kind
	// that conflicts more is not drawn less often (the mix would then differ between engines).
	Retry bool
}

// ShortSQL is a statement on one line, at most 60 characters: how a statement is named in
// messages and in the per-statement latency.
func ShortSQL(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 60 {
		return s[:57] + "..."
	}
	return s
}

// StatementTime is one execution of statement Index (into StatementLabels).
type StatementTime struct {
	Index   int
	Elapsed time.Duration
	Failed  bool
}

// StatementTimes are one transaction's timed statements. The runner owns it and empties it
// before each transaction; it keeps its room, so recording allocates nothing once warm.
type StatementTimes struct{ list []StatementTime }

// Add records that statement index took elapsed, and whether it failed.
func (s *StatementTimes) Add(index int, elapsed time.Duration, failed bool) {
	if s != nil {
		s.list = append(s.list, StatementTime{Index: index, Elapsed: elapsed, Failed: failed})
	}
}

// Reset empties it for the next transaction.
func (s *StatementTimes) Reset() {
	if s != nil {
		s.list = s.list[:0]
	}
}

// All are the statements recorded since the last Reset.
func (s *StatementTimes) All() []StatementTime {
	if s == nil {
		return nil
	}
	return s.list
}

// Answerer is implemented by workloads whose read statements can be run once with fixed
// parameters to compare their answers across engines (workload files): compare records the
// answers beside the data set's fingerprint, right after prepare.
type Answerer interface {
	Answers(ctx context.Context, c sqldb.Conn) []result.Answer
}

// SourceMixer is a workload captured from a server (fairbench capture): each transaction's share
// of the source's calls and time, which compare records beside the answers.
type SourceMixer interface {
	SourceMix() []result.SourceShare
}

// ErrRolledBack is returned by a transaction that rolled back on purpose, as TPC-C's 1% of
// NewOrders with an unused item do: the runner counts it as done, and as a rollback.
var ErrRolledBack = errors.New("rolled back on purpose by the workload")

// FixedList is implemented by a workload whose clients each run a fixed list of transactions
// instead of running until the time is up (TPC-H's power and throughput tests run each query
// once, in order). The runner times it as it times every workload; what differs is the end: the
// measured window opens as the clients start (no warm-up by time; such a workload has its own
// untimed pass) and closes when every worker has said ErrWorkDone, whatever the duration. A lost
// connection fails the run instead of being reopened, since a new worker would start
// its list again.
type FixedList interface {
	// Begin is called once before the runner connects its clients, with what the workers need
	// beyond their own connection; it returns how many clients the list needs (TPC-H's streams).
	Begin(ctx context.Context, run RunSettings) (threads int, err error)
	// End is called with the runner's result, also a failed run's, to add the workload's own
	// figures from its workers' records; an error fails the run (a wrong answer).
	End(ctx context.Context, res *result.Result) error
}

// LatencyRecorder is implemented by the workers of a FixedList workload that keep a record of
// each transaction (TPC-H's time per query): after each transaction of the measured window the
// runner tells the worker the latency it measured, pauses left out.
type LatencyRecorder interface {
	RecordLatency(latency time.Duration)
}

// ErrWorkDone is what a FixedList worker's Transaction returns, before sending anything, when its
// list is done: the client stops.
var ErrWorkDone = errors.New("the worker's list of transactions is done")

// ErrRecordedFailure is wrapped by a transaction that failed in a way the workload records itself
// and that does not stop the run (a TPC-H query past its timeout, a wrong answer): the runner
// rolls back, counts an error and goes on, as sysbench does with an ignored error.
var ErrRecordedFailure = errors.New("failed (recorded by the workload)")

// RunSettings are what a FixedList workload's workers need beyond their own connection.
type RunSettings struct {
	// Env connects sessions that are not clients (a query cancelled from another session, a
	// plan taken after the window) and holds the run's options and log.
	Env      *Env
	Progress io.Writer
	// PIDs of the server's processes when fairbench started it locally (nil otherwise), for
	// per-query server metrics.
	PIDs func() []int
}

// Summarizer is implemented by workloads with headline figures of their own (TPC-C's NOPM and
// tpmC); they are stored in the result's metrics.
type Summarizer interface {
	Summarize(r *result.Result) map[string]float64
}

// Verdict is one named condition of a workload's data check; results store the same type.
type Verdict = result.Verdict

// Verdicter is implemented by workloads whose check has several named conditions (TPC-C's
// consistency conditions 1-12): check prints every verdict, not only the first failure. Such a
// workload's Check is CheckFromVerdicts of them.
type Verdicter interface {
	Verdicts(ctx context.Context, env *Env) ([]Verdict, error)
}

// CheckFromVerdicts is the Check of a workload with named conditions: the error of reading them,
// or one naming each condition of what ("TPC-C consistency conditions") that does not hold.
func CheckFromVerdicts(what string, vs []Verdict, err error) error {
	if err != nil {
		return err
	}
	if failed := result.FailedVerdicts(vs); len(failed) > 0 {
		return fmt.Errorf("%s failed:\n  %s", what, strings.Join(failed, "\n  "))
	}
	return nil
}

// Env is what Prepare, Cleanup and Check get: a way to open connections and where to report.
type Env struct {
	Connect     func(ctx context.Context) (sqldb.Conn, error)
	Kind        sqldb.Kind
	LoadThreads int
	Force       bool
	// Progress, when set, is told how many rows are loaded of the total (for a progress bar).
	Progress func(done, total int64)
	Log      io.Writer
	Rand     *randgen.Config
	Seed     uint64
}

// Option is a workload setting with its default, settable as --name on the command line or in a suite.
type Option struct {
	Name    string
	Default string
	Help    string
	// Max, when set, is the largest whole number the workload's schema can hold for this option
	// (an id column's type): a larger value is refused before anything is loaded, instead of
	// failing mid-load.
	Max int64
}

// MaxInt is the largest value of an SQL INTEGER, the type of the id columns most workloads use.
const MaxInt = 1<<31 - 1

// CheckLimits refuses option values the schema cannot hold (Option.Max).
func (s Spec) CheckLimits(o Options) error {
	for _, opt := range s.Options {
		if opt.Max <= 0 {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(o[opt.Name]), 10, 64)
		if err != nil {
			if _, ferr := strconv.ParseFloat(strings.TrimSpace(o[opt.Name]), 64); ferr == nil {
				return fmt.Errorf("--%s must be a whole number, got %q", opt.Name, o[opt.Name])
			}
			continue // not a number: the workload's own parser names the problem
		}
		if n > opt.Max {
			return fmt.Errorf("--%s %d is more than %s's schema can hold (at most %d): use a smaller --%s", opt.Name, n, s.Name, opt.Max, opt.Name)
		}
	}
	return nil
}

// Spec registers a workload family member.
type Spec struct {
	Name string
	// Title is what a workload file calls itself (its name:), where Name is its path: reports
	// name the workload by it.
	Title       string
	Description string
	Options     []Option
	// Dataset names the tables Prepare makes, and DataOptions the options that change them:
	// workloads with equal datasets and data options share one prepare in a suite.
	Dataset     string
	DataOptions []string
	// New builds the workload from its option values (every option is present, defaults filled).
	New func(opts Options) (Workload, error)
}

var registry = map[string]Spec{}

// Register adds a workload; it is called from the workload packages' init functions.
func Register(s Spec) {
	if _, dup := registry[s.Name]; dup {
		panic("workload registered twice: " + s.Name)
	}
	registry[s.Name] = s
}

// FileLoader makes the Spec of a workload file (FILE.yaml); internal/workloadfile sets it, and
// FileOptions to every option a workload file may take, which become flags as the registered
// workloads' options do.
var (
	FileLoader  func(path string) (Spec, error)
	FileOptions []Option
)

// OptionOwners are the registered workloads and, where files are loaded, workload files as one:
// whatever may take an option.
func OptionOwners() []Spec {
	out := All()
	if FileOptions != nil {
		out = append(out, Spec{Name: "FILE.yaml", Options: FileOptions})
	}
	return out
}

// IsFile says whether a workload name is a workload file's path.
func IsFile(name string) bool {
	return strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml")
}

// Lookup finds a workload by name, or reads a workload file (a name ending in .yaml), with an
// error that lists the names that exist.
func Lookup(name string) (Spec, error) {
	s, ok := registry[name]
	if !ok && IsFile(name) && FileLoader != nil {
		return FileLoader(name)
	}
	if !ok {
		return s, fmt.Errorf("unknown workload %q: run 'fairbench workloads' to list them (e.g. oltp_read_write)", name)
	}
	return s, nil
}

// DatasetKey identifies the data a workload with these options needs.
func (s Spec) DatasetKey(o Options) string {
	key := s.Dataset
	if key == "" {
		key = s.Name
	}
	for _, name := range s.DataOptions {
		key += " " + name + "=" + o[name]
	}
	return key
}

// All lists the registered workloads by name.
func All() []Spec {
	out := make([]Spec, 0, len(registry))
	for _, s := range registry {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Options are a workload's settings by name, as text, with typed accessors that name the option
// in their errors.
type Options map[string]string

// WithDefaults returns the options of spec with values from set where given.
func (s Spec) WithDefaults(set map[string]string) Options {
	o := Options{}
	for _, opt := range s.Options {
		o[opt.Name] = opt.Default
		if v, ok := set[opt.Name]; ok {
			o[opt.Name] = v
		}
	}
	return o
}

func (o Options) Int(name string, min int) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(o[name]))
	if err != nil {
		return 0, fmt.Errorf("--%s must be a whole number, got %q", name, o[name])
	}
	if n < min {
		return 0, fmt.Errorf("--%s must be at least %d, got %d", name, min, n)
	}
	return n, nil
}

func (o Options) Bool(name string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(o[name])) {
	case "on", "true", "1", "yes":
		return true, nil
	case "off", "false", "0", "no", "":
		return false, nil
	}
	return false, fmt.Errorf("--%s must be on or off, got %q", name, o[name])
}

// NotPreparedError says the workload's tables are missing: the user must run prepare first.
type NotPreparedError struct {
	Workload string
	Detail   string
}

func (e *NotPreparedError) Error() string {
	return fmt.Sprintf("%s: run 'fairbench prepare --workload %s' on this target first", e.Detail, e.Workload)
}

// DescribeOption gives an option's help and its defaults across the workloads that have it, for
// the command line, where one flag serves every workload: "10" when all agree, else the most
// common default with the others by workload, "10; oltp_90_10: 9".
func DescribeOption(name string) (help, defaults string) {
	byValue := map[string][]string{}
	for _, s := range OptionOwners() {
		for _, o := range s.Options {
			if o.Name == name {
				if help == "" {
					help = o.Help
				}
				byValue[o.Default] = append(byValue[o.Default], s.Name)
			}
		}
	}
	values := make([]string, 0, len(byValue))
	for v := range byValue {
		values = append(values, v)
	}
	// The most common default first, then the others by value, so the text is stable.
	sort.Slice(values, func(i, j int) bool {
		if a, b := len(byValue[values[i]]), len(byValue[values[j]]); a != b {
			return a > b
		}
		return values[i] < values[j]
	})
	parts := make([]string, 0, len(values))
	for i, v := range values {
		shown := v
		if shown == "" {
			shown = `""`
		}
		if i == 0 {
			parts = append(parts, shown)
			continue
		}
		parts = append(parts, strings.Join(byValue[v], ", ")+": "+shown)
	}
	return help, strings.Join(parts, "; ")
}

// OptionsHelp lists one workload's options with its own defaults, one per line.
func (s Spec) OptionsHelp() string {
	var b strings.Builder
	width := 0
	for _, o := range s.Options {
		width = max(width, len(o.Name))
	}
	for _, o := range s.Options {
		def := o.Default
		if def == "" {
			def = `""`
		}
		fmt.Fprintf(&b, "      --%-*s  %s (default %s)\n", width, o.Name, o.Help, def)
	}
	return b.String()
}
