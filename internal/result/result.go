// Package result defines fairbench's one results format: a JSON document per measured run,
// written atomically, from which every report is rendered. docs/results-schema.md describes
// each field; keep the two in step.
package result

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"time"
)

// SchemaVersion changes only when a field changes meaning or goes away; adding fields does not bump it.
// 2: a cluster's server figures (server.*, intervals[].server_*) are the sum over its nodes,
// where 1 had its first node's alone.
const SchemaVersion = 3

// Result is one run of one workload against one server.
type Result struct {
	Schema      int       `json:"schema"`
	ToolVersion string    `json:"tool_version"`
	ToolCommit  string    `json:"tool_commit,omitempty"` // git commit of the fairbench build, when stamped
	Complete    bool      `json:"complete"`
	Error       string    `json:"error,omitempty"` // why the run is incomplete
	StartedAt   time.Time `json:"started_at"`
	Engine      Engine    `json:"engine"`
	Workload    Workload  `json:"workload"`
	// Label tells apart runs of the same engine and workload (a step of a sweep, a repeat).
	Label string `json:"label,omitempty"`
	// Step names the suite step that ran, where a suite runs one workload in several steps
	// (tpcc's statements and routines): WorkloadID groups by it.
	Step string `json:"step,omitempty"`
	// Round is the comparison's round the run belongs to (from 1; 0 outside compare): engines'
	// figures are paired by it, so a round one engine lost is left out of the pair, not shifted.
	Round int `json:"round,omitempty"`

	// Meaningful is false when the run measured too little for its throughput to mean anything
	// (too few transactions, too short, stopped in its warm-up): TPS and QPS are then 0, and
	// NotMeaningful says why. Absent (nil) in results that predate it and for a fixed list
	// of queries per client (TPC-H), whose figures are the queries' own times, not a rate; such
	// results count as meaningful (IsMeaningful).
	Meaningful    *bool  `json:"meaningful,omitempty"`
	NotMeaningful string `json:"not_meaningful,omitempty"`

	Threads   int     `json:"threads"`
	Rate      float64 `json:"rate"` // target transactions/s, 0 = closed loop
	WarmupS   float64 `json:"warmup_s"`
	DurationS float64 `json:"duration_s"` // measured time, warm-up excluded

	Transactions int64   `json:"transactions"`
	TPS          float64 `json:"tps"`
	Queries      Queries `json:"queries"`
	QPS          float64 `json:"qps"`
	Errors       int64   `json:"errors"`              // transactions that failed after all tries
	Retries      int64   `json:"retries"`             // attempts repeated after a retryable error
	Rollbacks    int64   `json:"rollbacks,omitempty"` // transactions the workload rolled back on purpose (counted in transactions)
	// Metrics are the workload's own headline figures (TPC-C: nopm, tpmc).
	Metrics map[string]float64 `json:"metrics,omitempty"`
	// ByKind splits the figures by transaction type for workloads that have several (TPC-C).
	ByKind map[string]*KindStats `json:"by_kind,omitempty"`

	LatencyMS     Latency  `json:"latency_ms"`
	ScheduleLagMS *Latency `json:"schedule_lag_ms,omitempty"` // open loop only: how late transactions started
	ClientCPUS    float64  `json:"client_cpu_s"`
	// ClientScheduling is the client threads' Linux scheduling policy: "batch" or "normal".
	ClientScheduling string `json:"client_scheduling,omitempty"`

	Intervals []Interval `json:"intervals"`
	// Histogram is the latency histogram in microseconds, HdrHistogram V2 compressed and base64
	// encoded, so runs can be merged exactly later (histogram.Decode).
	Histogram string `json:"histogram"`

	Server *Server `json:"server,omitempty"`
	// Capacity is a capacity search's record, where this result is one (absent otherwise).
	Capacity *Capacity `json:"capacity,omitempty"`

	// Profile names the settings a server fairbench started ran with, "fair" or "defaults"
	// (absent for a server given by DSN); Flipped lists the knobs compare --explain flipped from
	// that profile for this run, which makes it a knob-effect run rather than a comparison run.
	Profile string   `json:"profile,omitempty"`
	Flipped []string `json:"flipped,omitempty"`
	// FlipExpect is the sign of the throughput change the flip's physics allows, from the
	// settings it led to (profile.FlipExpect): 1 when it only removes work (commit without a
	// log flush), -1 when it only adds work, 0 when either way is possible (and in older files).
	// A measured effect of the other sign is the machine moving, never claimed.
	FlipExpect int `json:"flip_expect,omitempty"`
	// Dataset is the loaded data as it was right after prepare, for the parity audit.
	Dataset *Dataset `json:"dataset,omitempty"`

	// Ramp is present when the run added clients step by step (--ramp) to find the saturation point.
	Ramp *Ramp `json:"ramp,omitempty"`

	// TPCH holds the analytical tests' figures (workload tpch).
	TPCH *TPCH `json:"tpch,omitempty"`

	// Measured is the measured window in wall-clock time (warm-up excluded).
	Measured *Window `json:"measured,omitempty"`
	// Shard is set on a shard of a multi-host run (run --shard I/N); Shards on their merge.
	Shard  *Shard         `json:"shard,omitempty"`
	Shards []ShardSummary `json:"shards,omitempty"`
	// Network is set when the clients ran on simulated hosts (compare --network, --clients).
	Network *Network `json:"network,omitempty"`
	// LagHistogram is the open loop's schedule-lag histogram (µs), encoded as Histogram is, so
	// shards' lags merge exactly too.
	LagHistogram string `json:"lag_histogram,omitempty"`

	// Wire counts what the clients sent over the measured window, for the parity audit.
	Wire *Wire `json:"wire,omitempty"`

	// Prepared is what prepare recorded on the target about the data this run used.
	Prepared *Prepared `json:"prepared,omitempty"`
	// StartState is the server's state when the measured step began, after fairbench flushed
	// its dirty pages, so that every engine and every step starts from the same state.
	StartState *StartState `json:"start_state,omitempty"`
	// DataCheck is the workload's data check after the run (TPC-C's consistency conditions,
	// payments' conservation of money, ...), when one ran.
	DataCheck *DataCheck `json:"data_check,omitempty"`
	// Availability is the faults injected, reconnections, downtime and the acknowledged-
	// transaction check (availability.go); absent when there is nothing to say.
	Availability *Availability `json:"availability,omitempty"`
	// Machine is what else the machine did meanwhile (machineload); absent in results that
	// predate it.
	Machine *MachineLoad `json:"machine,omitempty"`
	// Waits is where the clients' sessions spent the measured window, sampled on the server
	// (internal/waits); absent when sampling was off (--instrument off) or not possible.
	Waits *Waits `json:"waits,omitempty"`
	// Statements is the server's own account of each statement over the measured window
	// (internal/statements); absent with --instrument off and for clients on other hosts.
	Statements *Statements `json:"server_statements,omitempty"`
	// ClientStatements is each statement's latency as the clients saw it, over the measured
	// window (pgbench -r's per-statement report), for workloads that time their statements
	// (workload files, pgbench scripts); absent for others.
	ClientStatements []ClientStatement `json:"client_statements,omitempty"`
	// Routing is where a cluster's measured clients ran: "leader", or "replicas" (compare
	// --read-replicas with a read-only workload on postgres-ha); absent for other targets.
	Routing string `json:"routing,omitempty"`
}

// ClientStatement is one statement of a workload, timed by the clients from sending it to its
// last row or its error. Statements are in the workload's own order; Label names the statement
// alike on every engine ("transfer #2: UPDATE accounts SET ...").
type ClientStatement struct {
	Label string `json:"label"`
	// Executions counts every time a client sent it in the measured window, retried attempts
	// and failures included; Failed, those that ended in an error.
	Executions int64 `json:"executions"`
	Failed     int64 `json:"failed"`
	// TotalMS is the time all executions took; MeanMS is TotalMS / Executions; MaxMS the longest.
	TotalMS float64 `json:"total_ms"`
	MeanMS  float64 `json:"mean_ms"`
	MaxMS   float64 `json:"max_ms"`
}

// PoolClientStatements adds lists of per-statement figures by label (shards of one run, rounds
// of one step), in the order the labels first appear, with each mean computed again.
func PoolClientStatements(lists ...[]ClientStatement) []ClientStatement {
	var out []ClientStatement
	at := map[string]int{}
	for _, list := range lists {
		for _, st := range list {
			i, ok := at[st.Label]
			if !ok {
				at[st.Label], i = len(out), len(out)
				out = append(out, ClientStatement{Label: st.Label})
			}
			o := &out[i]
			o.Executions += st.Executions
			o.Failed += st.Failed
			o.TotalMS += st.TotalMS
			o.MaxMS = max(o.MaxMS, st.MaxMS)
		}
	}
	for i := range out {
		if out[i].Executions > 0 {
			out[i].MeanMS = out[i].TotalMS / float64(out[i].Executions)
		}
	}
	return out
}

// Wire is the client side of the parity audit: statements and round trips counted on the wire by
// sqldb over the measured window, in total and per transaction (retried attempts included).
type Wire struct {
	Statements       int64   `json:"statements"`
	RoundTrips       int64   `json:"round_trips"`
	StatementsPerTxn float64 `json:"statements_per_txn"`
	RoundTripsPerTxn float64 `json:"round_trips_per_txn"`
}

// WorkloadID is what a report groups a result by: the workload's name (a workload file's own
// name:, not its path), and its suite step's name where it has one ("payments
// (transfer=routine)").
func (r *Result) WorkloadID() string {
	name := cmp.Or(r.Workload.Title, r.Workload.Name)
	if r.Step == "" {
		return name
	}
	return name + " (" + r.Step + ")"
}

// IsMeaningful says whether r's throughput may be shown and ranked.
func (r *Result) IsMeaningful() bool { return r.Meaningful == nil || *r.Meaningful }

// Prepared is prepare's record of the loaded data (the target's fairbench_dataset row).
type Prepared struct {
	Name       string            `json:"name"`        // the data set: sbtest, tpcc, ...
	PreparedBy string            `json:"prepared_by"` // the workload whose prepare loaded it
	Params     map[string]string `json:"params"`      // its data options
	Tables     []string          `json:"tables"`
	StartedAt  string            `json:"started_at"`
	FinishedAt string            `json:"finished_at"`
}

// StartState is the server at the start of a measured step. Pointers are nil where the engine
// does not expose the figure to this connection.
type StartState struct {
	// Flush says what fairbench did first: "checkpoint" (PostgreSQL), "dirty pages flushed"
	// (InnoDB), "off" (asked not to), or why it could not ("not permitted: ...").
	Flush  string  `json:"flush"`
	FlushS float64 `json:"flush_s"` // seconds the flush took
	// DirtyPages is the buffer pool's dirty pages when the step began (InnoDB's
	// Innodb_buffer_pool_pages_dirty; PostgreSQL's from pg_buffercache when that extension is there).
	DirtyPages *int64 `json:"dirty_pages,omitempty"`
	// RedoBacklogBytes is WAL/redo written since the last checkpoint's redo point: what crash
	// recovery would replay, and what the engine still owes its data files.
	RedoBacklogBytes *int64 `json:"redo_backlog_bytes,omitempty"`
}

// DataCheck is one run of a workload's data check.
type DataCheck struct {
	Passed   bool      `json:"passed"`
	Verdicts []Verdict `json:"verdicts"`
}

// Verdict is one named condition of a data check.
type Verdict struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail,omitempty"`
}

// FailedVerdicts names each verdict that does not hold, with its detail: "name: detail".
func FailedVerdicts(vs []Verdict) []string {
	var failed []string
	for _, v := range vs {
		if !v.OK {
			failed = append(failed, v.Name+": "+v.Detail)
		}
	}
	return failed
}

// TPCH is one TPC-H power or throughput test. A query whose answer is wrong or that timed out
// never shows as a time: its status says so and Seconds is 0.
type TPCH struct {
	Mode        string      `json:"mode"` // power | throughput
	ScaleFactor float64     `json:"scale_factor"`
	Streams     int         `json:"streams,omitempty"`
	Queries     []TPCHQuery `json:"queries"`
	// GeoMeanS is the geometric mean of the ok queries' seconds (power test).
	GeoMeanS float64 `json:"geomean_s,omitempty"`
	// QueriesPerHour is the throughput test's rate (queries completed ok per hour, all streams).
	QueriesPerHour float64 `json:"queries_per_hour,omitempty"`
	// AnswersChecked says against what: "official SF1 answers" or "cross-engine" or "none".
	AnswersChecked string `json:"answers_checked"`
	// Load figures of the prepare that made this data set, when known.
	LoadSeconds map[string]float64 `json:"load_seconds,omitempty"` // per table and "total"
}

type TPCHQuery struct {
	Query   int     `json:"query"`
	Stream  int     `json:"stream,omitempty"`
	Seconds float64 `json:"seconds"`
	Rows    int64   `json:"rows"`
	Status  string  `json:"status"` // ok | wrong | timeout | error
	Detail  string  `json:"detail,omitempty"`
	// Server-side figures of this query alone, when sampled.
	BufferReads   int64   `json:"buffer_reads,omitempty"`
	BufferHits    int64   `json:"buffer_hits,omitempty"`
	DiskReadBytes int64   `json:"disk_read_bytes,omitempty"`
	ServerCPUS    float64 `json:"server_cpu_s,omitempty"`
	// Plan is the engine's plan for the query with the same parameters, taken after the timed
	// run: each table's access path in join order (dialect.PlanSummary); absent where EXPLAIN
	// failed or in a throughput stream other than the first.
	Plan string `json:"plan,omitempty"`
}

// Ramp records a run that started with few clients and added more every interval.
type Ramp struct {
	Add    int     `json:"add"`     // clients added per step
	EveryS float64 `json:"every_s"` // seconds per step
	Max    int     `json:"max"`     // most clients
	SLOMS  float64 `json:"slo_ms,omitempty"`
	// Stages marks a stage ramp (--stages): clients added up to Max whatever the throughput, each
	// request after a random delay of DelayMinMS-DelayMaxMS (not counted in its latency), the
	// clients sharing Pool connections (the wait for one is counted).
	Stages     bool       `json:"stages,omitempty"`
	DelayMinMS float64    `json:"delay_min_ms,omitempty"`
	DelayMaxMS float64    `json:"delay_max_ms,omitempty"`
	Pool       int        `json:"pool,omitempty"`
	Steps      []RampStep `json:"steps"`
	// Saturation is the step with the highest throughput before the latency knee: the most the
	// engine delivered within the SLO (or at all, without one).
	SaturationThreads int     `json:"saturation_threads"`
	SaturationTPS     float64 `json:"saturation_tps"`
	StoppedBecause    string  `json:"stopped_because"` // "max threads", "p99 above SLO", "throughput stopped rising", "time"
}

type RampStep struct {
	Threads int     `json:"threads"`
	TPS     float64 `json:"tps"`
	P95MS   float64 `json:"p95_ms"`
	P99MS   float64 `json:"p99_ms"`
	Errors  int64   `json:"errors"`
}

// Engine identifies the server: Kind is what fairbench was told (postgres, mysql, mariadb),
// Version what the server itself answered to SELECT version().
type Engine struct {
	Kind    string `json:"kind"`
	Version string `json:"version"`
	Target  string `json:"target"` // DSN with the password removed
	// Transport is what the server says the connection is: "plaintext" or the TLS version.
	Transport string `json:"transport,omitempty"`
	// Alias is the user's name for a server of theirs (compare --targets NAME=DSN) or for a
	// build (--engines KIND@DIR): reports name the engine by it. Absent for the engines
	// fairbench installs, named by kind and release.
	Alias string `json:"name,omitempty"`
	// Build is the directory or archive a build given with --engines KIND@DIR was started from.
	Build string `json:"build,omitempty"`
	// AsConfigured says the server ran as its owner configured it (compare --targets): fairbench
	// applied no fairness profile to it.
	AsConfigured bool `json:"as_configured,omitempty"`
}

type Workload struct {
	Name string `json:"name"`
	// Title is the name a workload file gives itself (name:), where Name is the file's path.
	Title   string            `json:"title,omitempty"`
	Options map[string]string `json:"options"`
}

// Queries are the statements the clients sent in sysbench's three classes: a statement that only
// returns rows is a read; INSERT, UPDATE, DELETE (and a data-modifying WITH) are writes; BEGIN,
// COMMIT and the rest are other (sqldb.ClassOf, counted by the connections).
type Queries struct {
	Read  int64 `json:"read"`
	Write int64 `json:"write"`
	Other int64 `json:"other"`
	Total int64 `json:"total"`
}

// KindStats are one transaction type's figures.
type KindStats struct {
	Transactions int64   `json:"transactions"`
	TPS          float64 `json:"tps"`
	Errors       int64   `json:"errors"`
	Retries      int64   `json:"retries"`
	Rollbacks    int64   `json:"rollbacks,omitempty"`
	LatencyMS    Latency `json:"latency_ms"`
	// Histogram is this type's latency histogram, encoded as Result.Histogram is, so a merge of
	// shards takes each type's percentiles exactly too (absent in files written before it).
	Histogram string `json:"histogram,omitempty"`
}

type Latency struct {
	Avg  float64 `json:"avg"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
}

// Capacity is a search for the highest arrival rate that meets a latency objective (fairbench
// capacity, compare --slo): every rate it measured, and what it found. The result it belongs to
// holds the measured window of the last probe at the capacity's passing rate.
type Capacity struct {
	// SLO is the objective as written (p99<=10ms); Percentile, Kind and LimitMS its parts.
	SLO        string  `json:"slo"`
	Percentile float64 `json:"percentile"`
	Kind       string  `json:"kind,omitempty"`
	LimitMS    float64 `json:"limit_ms"`
	// Connections is the open loop's clients, each with its connection (--max-connections): the
	// same for every engine, and part of the answer.
	Connections int            `json:"connections"`
	WindowS     float64        `json:"window_s"`
	WarmupS     float64        `json:"warmup_s"`
	Resolution  float64        `json:"resolution"`
	Rounds      int            `json:"rounds"`
	BudgetS     float64        `json:"budget_s"`
	SpentS      float64        `json:"spent_s"`
	Steps       []CapacityStep `json:"steps"`
	// PerS is the capacity, with its 95% interval [LowPerS, HighPerS].
	PerS     float64 `json:"per_s"`
	LowPerS  float64 `json:"low_per_s"`
	HighPerS float64 `json:"high_per_s"`
	// Reached is how far the search got: "confirm" (rounds done), "bisect", "climb" (every rate
	// passed: PerS is a lower bound) or "no rate" (the lowest rate failed).
	Reached string `json:"reached"`
	AtLeast bool   `json:"at_least,omitempty"`
	// GaveWay is what limited the lowest failing rate (server, connections, client), Advice what
	// to raise where it was not the server.
	GaveWay string `json:"gave_way,omitempty"`
	Advice  string `json:"advice,omitempty"`
	// Stopped says why the search ended before it finished: "budget", "interrupted", or the
	// failure of the server.
	Stopped string `json:"stopped,omitempty"`
	// Contradicted counts the confirmation rounds whose lower rate failed: where it is above
	// zero, one rate's windows vary more than the resolution.
	Contradicted int `json:"contradicted,omitempty"`
	// Refuted counts the brackets whose bottom failed in most of their confirmation rounds (at
	// least two): each sent the search below it, and the capacity is that of the bracket
	// confirmed after.
	Refuted int `json:"refuted,omitempty"`
	// Floor is the objective's percentile at the search's start rate, over the limit: how near
	// the workload's own latency, nearly unloaded, is to the objective (0.5: half of it); absent
	// where the start was not measured (a search from an earlier round's bracket).
	Floor float64 `json:"floor,omitempty"`
}

// RefutedNote says, for a reader, that the search's confirmation refuted brackets and went below
// them; "" when none was.
func (c *Capacity) RefutedNote() string {
	switch c.Refuted {
	case 0:
		return ""
	case 1:
		return "a bracket's lower rate failed in most of its confirmation rounds and the search went below it"
	}
	return fmt.Sprintf("%d brackets' lower rates failed in most of their confirmation rounds and the search went below each", c.Refuted)
}

// SoftFloor is the Floor from which a capacity is said to be soft: the objective within twice
// the latency the workload has nearly unloaded.
const SoftFloor = 0.5

// FloorNote says, for a reader, that the objective lies within twice the latency the workload
// has nearly unloaded, where a capacity moves with the machine's speed more than with load; ""
// otherwise.
func (c *Capacity) FloorNote() string {
	if c.Floor < SoftFloor || c.Floor >= 1 || c.Reached == "no rate" {
		return ""
	}
	return fmt.Sprintf("at the lowest rate the objective's percentile was already %.0f%% of its limit: the capacity moves with the machine's speed more than with load (for a queue, %.1f× as much as the speed), and searches at other times may disagree by more than their intervals", 100*c.Floor, 1/(1-c.Floor))
}

// CapacityStep is one rate measured by a capacity search.
type CapacityStep struct {
	Phase         string   `json:"phase"`
	Round         int      `json:"round,omitempty"`
	OfferedPerS   float64  `json:"offered_per_s"`
	CompletedPerS float64  `json:"completed_per_s"`
	LatencyMS     float64  `json:"latency_ms"` // the objective's percentile, from the scheduled arrival
	P50MS         float64  `json:"p50_ms"`
	P99MS         float64  `json:"p99_ms"`
	P999MS        float64  `json:"p999_ms"`
	LagStartMS    float64  `json:"lag_start_ms"`
	LagEndMS      float64  `json:"lag_end_ms"`
	ServiceMS     float64  `json:"service_ms"`
	Busy          float64  `json:"busy"`
	Pass          bool     `json:"pass"`
	Failed        []string `json:"failed,omitempty"`
	GaveWay       string   `json:"gave_way,omitempty"`
	// ServerCPUPct and Waits are the server's figures over the window, where measured: what was
	// busy as the rate rose ("61% log_flush, 20% cpu").
	ServerCPUPct float64 `json:"server_cpu_pct,omitempty"`
	Waits        string  `json:"waits,omitempty"`
	// StealPct is what the hypervisor stole over the window, and SetAside the windows of this
	// rate measured before it and set aside for steal (machineload.Unstolen).
	StealPct float64          `json:"steal_pct,omitempty"`
	SetAside []SetAsideWindow `json:"set_aside,omitempty"`
	// MemoryNS is the machine's memory speed just before the window (MachineLoad.MemoryNSBefore):
	// two searches of one engine that disagree may have run on a machine of two speeds.
	MemoryNS float64 `json:"memory_ns,omitempty"`
}

// Interval is one --report-interval of the measured run; T is seconds since measurement began,
// at the interval's end.
type Interval struct {
	T       float64 `json:"t"`
	Threads int     `json:"threads"`
	TPS     float64 `json:"tps"`
	QPS     float64 `json:"qps"`
	P95MS   float64 `json:"p95_ms"`
	P99MS   float64 `json:"p99_ms"`
	// LagMeanMS is, in an open loop (--rate), how late the interval's transactions started
	// after their scheduled arrival, on average: the backlog of arrivals waiting for a client. The
	// mean, not a tail: a backlog delays every arrival after it, a hiccup only a few.
	LagMeanMS float64 `json:"lag_mean_ms,omitempty"`
	Errors    int64   `json:"errors"`
	Retries   int64   `json:"retries"`
	// ConnsInUse is, in a stage ramp, how many of the pool's connections clients held at the
	// interval's end (0 elsewhere: each client then holds its own connection all the time).
	ConnsInUse int `json:"conns_in_use,omitempty"`
	// Reconnects are connections reopened in the interval; DowntimeS the part of it in which no
	// client committed (Availability's outages).
	Reconnects int64   `json:"reconnects,omitempty"`
	DowntimeS  float64 `json:"downtime_s,omitempty"`
	// Server-side figures for the same interval, when sampled.
	ServerCPUPct float64 `json:"server_cpu_pct,omitempty"`
	ServerRSSMB  float64 `json:"server_rss_mb,omitempty"`
	// From the server's cgroup (or node_exporter): memory charged at the interval's end, and
	// block I/O in the interval on the data directory's disk.
	ServerMemMB          float64 `json:"server_mem_mb,omitempty"`
	ServerDiskReadBytes  int64   `json:"server_disk_read_bytes,omitempty"`
	ServerDiskWriteBytes int64   `json:"server_disk_write_bytes,omitempty"`
	ServerDiskReadOps    int64   `json:"server_disk_read_ops,omitempty"`
	ServerDiskWriteOps   int64   `json:"server_disk_write_ops,omitempty"`
	// Nodes are a cluster's per-node figures for the interval, replication included; the
	// server_* fields above are then their sum.
	Nodes []NodeInterval `json:"nodes,omitempty"`
	// OthersCPUPct is the machine's CPU that processes other than fairbench and the server used
	// in the interval, StealPct what the hypervisor took, both in percent of the whole machine
	// (machineload).
	OthersCPUPct float64 `json:"others_cpu_pct,omitempty"`
	StealPct     float64 `json:"steal_pct,omitempty"`
}

// MachineLoad is what else the machine did over the measured window: others' CPU and steal, mean
// and peak of the intervals, in percent of the whole machine. Busy when others used more than
// BusyPct on average: the result then shared the machine and its figures are weak evidence.
type MachineLoad struct {
	OthersCPUPctMean float64 `json:"others_cpu_pct_mean"`
	OthersCPUPctMax  float64 `json:"others_cpu_pct_max"`
	StealPctMean     float64 `json:"steal_pct_mean"`
	StealPctMax      float64 `json:"steal_pct_max"`
	Busy             bool    `json:"busy"`
	BusyPct          float64 `json:"busy_pct"`
	// MemoryNSBefore and MemoryNSAfter are the machine's memory speed just before the window
	// (after the server settled) and just after it: nanoseconds per dependent load from main
	// memory, all CPUs at once (machineload.MemoryNS). On a shared host the other tenants set
	// it, steal does not show it, and the engines' throughput follows it; 0 where not probed.
	MemoryNSBefore float64 `json:"memory_ns_before,omitempty"`
	MemoryNSAfter  float64 `json:"memory_ns_after,omitempty"`
	// OtherFairbench names the servers of another fairbench seen on the machine as the step
	// began or ended ("a mysql server of fairbench pid 4242 (port 40123)"); Busy is then set.
	OtherFairbench []string `json:"other_fairbench,omitempty"`
	// SetAside are the windows compare measured before this one on the same server and set
	// aside because the hypervisor stole more than StealLimitPct of the machine over them
	// (machineload.Stolen), oldest first; this window's figures are the step's.
	SetAside      []SetAsideWindow `json:"set_aside,omitempty"`
	StealLimitPct float64          `json:"steal_limit_pct,omitempty"`
}

// SetAsideWindow is a measured window compare ran again: what the hypervisor stole over it,
// and the throughput it measured then.
type SetAsideWindow struct {
	StealPctMean float64 `json:"steal_pct_mean"`
	StealPctMax  float64 `json:"steal_pct_max"`
	TPS          float64 `json:"tps"`
}

// Statements is the server's per-statement account of a measured window: the difference of its
// counters (pg_stat_statements; the performance schema's statement digests) between the window's
// start and end, in the benchmark's database.
type Statements struct {
	// Source is where the figures come from: "pg_stat_statements" or
	// "performance_schema.events_statements_summary_by_digest".
	Source string `json:"source"`
	// Calls and TotalMS are over every statement of the window; Top keeps the 20 that took the
	// most server time, most first.
	Calls   int64              `json:"calls"`
	TotalMS float64            `json:"total_ms"`
	Top     []StatementAccount `json:"top"`
	// LateMS is how long after the measured window opened the first read was answered: the
	// accounts may miss the transactions the clients ended in that time (milliseconds when the
	// machine is quiet; on a busy one, a share of a short window).
	LateMS float64 `json:"late_ms"`
	// Error is why there are no figures (the extension not loaded, the performance schema off).
	Error string `json:"error,omitempty"`
}

// StatementAccount is one statement's window: its text as the engine normalizes it, calls, rows
// returned or changed, server time in all and per call, and (PostgreSQL) shared blocks found in
// the buffer pool and read from outside it.
type StatementAccount struct {
	Text       string  `json:"text"`
	Calls      int64   `json:"calls"`
	Rows       int64   `json:"rows"`
	TotalMS    float64 `json:"total_ms"`
	MeanMS     float64 `json:"mean_ms"`
	BlocksHit  *int64  `json:"blocks_hit,omitempty"`
	BlocksRead *int64  `json:"blocks_read,omitempty"`
}

// Waits is the wait sampling of a measured window: every EveryMS, each client session's activity
// on the server, folded into a category that means the same on every engine (WaitCategories)
// with the engine's own event name kept underneath. Counts are session samples: a share of all
// of them is the share of the clients' time spent so, as HammerDB's active session history reads.
type Waits struct {
	EveryMS float64 `json:"every_ms"`
	// Rounds is how many times the sessions were read; Sessions the session samples over all
	// rounds (the shares' denominator).
	Rounds   int `json:"rounds"`
	Sessions int `json:"sessions"`
	// Categories counts session samples per category, in WaitCategories' order, zeros left out.
	Categories []WaitCount `json:"categories"`
	// Events counts them per engine event or state, most first.
	Events []WaitEvent `json:"events"`
	// SamplerMS is how long the sampler's own queries took in all: its cost on the server.
	SamplerMS float64 `json:"sampler_ms"`
	// Error is why sampling stopped before the window ended; absent when it did not.
	Error string `json:"error,omitempty"`
}

// WaitCount is one category's session samples.
type WaitCount struct {
	Category string `json:"category"`
	Count    int    `json:"count"`
}

// WaitEvent is one engine event's or state's session samples and the category it folds into.
type WaitEvent struct {
	Category string `json:"category"`
	Event    string `json:"event"`
	Count    int    `json:"count"`
}

// Add pools o's samples into w (a step's rounds, a run's shards): rounds, session samples and
// the sampler's time summed, counts summed per category and per event; the first error kept.
func (w *Waits) Add(o *Waits) {
	if o == nil {
		return
	}
	if w.EveryMS == 0 {
		w.EveryMS = o.EveryMS
	}
	w.Rounds += o.Rounds
	w.Sessions += o.Sessions
	w.SamplerMS += o.SamplerMS
	if w.Error == "" {
		w.Error = o.Error
	}
	for _, c := range o.Categories {
		if i := slices.IndexFunc(w.Categories, func(x WaitCount) bool { return x.Category == c.Category }); i >= 0 {
			w.Categories[i].Count += c.Count
		} else {
			w.Categories = append(w.Categories, c)
		}
	}
	for _, e := range o.Events {
		if i := slices.IndexFunc(w.Events, func(x WaitEvent) bool { return x.Category == e.Category && x.Event == e.Event }); i >= 0 {
			w.Events[i].Count += e.Count
		} else {
			w.Events = append(w.Events, e)
		}
	}
	SortWaitEvents(w.Events)
}

// SortStatements orders accounts by server time, most first, then by text.
func SortStatements(all []StatementAccount) {
	sort.Slice(all, func(i, j int) bool {
		if all[i].TotalMS != all[j].TotalMS {
			return all[i].TotalMS > all[j].TotalMS
		}
		return all[i].Text < all[j].Text
	})
}

// SortWaitEvents orders events most first, then by name, so the same counts always list alike.
func SortWaitEvents(evs []WaitEvent) {
	sort.Slice(evs, func(i, j int) bool {
		if evs[i].Count != evs[j].Count {
			return evs[i].Count > evs[j].Count
		}
		return evs[i].Event < evs[j].Event
	})
}

// PoolWaits adds up the wait samples of runs (a step's rounds), so that shares are of all the
// sessions sampled; nil where no run was sampled.
func PoolWaits(runs []*Result) *Waits {
	var out *Waits
	for _, r := range runs {
		if r == nil || r.Waits == nil || r.Waits.Sessions == 0 {
			continue
		}
		if out == nil {
			out = &Waits{}
		}
		out.Add(r.Waits)
	}
	return out
}

// Ranked is the categories most sampled first (ties in WaitCategories' order, the order
// they are kept in).
func (w *Waits) Ranked() []WaitCount {
	if w == nil {
		return nil
	}
	out := slices.Clone(w.Categories)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Count > out[j].Count })
	return out
}

// Share is the category's share of all session samples (0 when none were taken).
func (w *Waits) Share(category string) float64 {
	if w == nil || w.Sessions == 0 {
		return 0
	}
	for _, c := range w.Categories {
		if c.Category == category {
			return float64(c.Count) / float64(w.Sessions)
		}
	}
	return 0
}

// Server holds what fairbench saw of the server side.
type Server struct {
	// Local is true when fairbench started the server itself (process metrics are then available).
	Local bool `json:"local"`
	// CPUs, when above 0, is how many CPUs the server was confined to (compare --server-cpus),
	// CPUList which ones, and ClientCPUList where fairbench's client ran meanwhile.
	CPUs          int    `json:"cpus,omitempty"`
	CPUList       string `json:"cpu_list,omitempty"`
	ClientCPUList string `json:"client_cpu_list,omitempty"`
	// Profile is the fairness profile applied by fairbench; Settings what the server reports for the
	// keys that matter (SHOW VARIABLES / pg_settings).
	Profile  map[string]string `json:"profile,omitempty"`
	Settings map[string]string `json:"settings,omitempty"`
	// Facets are the settings that decide a fair fight under names every engine shares (see
	// Facet), formed by the engine layer from Settings; SettingsFamily names whose setting names
	// Settings are in ("postgres", "innodb"): a difference between families may be by design.
	Facets         map[string]Facet `json:"facets,omitempty"`
	SettingsFamily string           `json:"settings_family,omitempty"`
	// Translations are the profile settings this server's version took under another name or in
	// another form (a renamed variable, an initdb flag), so that a parity check can follow them.
	Translations []Translation `json:"translations,omitempty"`

	CPUUserS       float64 `json:"cpu_user_s,omitempty"`
	CPUSystemS     float64 `json:"cpu_system_s,omitempty"`
	CPUPct         float64 `json:"cpu_pct,omitempty"` // of the whole machine, over the measured run
	RSSIdleMB      float64 `json:"rss_idle_mb,omitempty"`
	RSSPeakMB      float64 `json:"rss_peak_mb,omitempty"`
	PSSPeakMB      float64 `json:"pss_peak_mb,omitempty"`
	DiskReadBytes  int64   `json:"disk_read_bytes,omitempty"`
	DiskWriteBytes int64   `json:"disk_write_bytes,omitempty"`
	DiskSource     string  `json:"disk_source,omitempty"` // where disk figures come from (cgroup, /proc/PID/io, node_exporter)

	// Where the CPU and memory figures come from: "cgroup v1 DIR", "cgroup v2 DIR", "/proc",
	// "node_exporter URL (whole host)" or "not measured (remote)".
	CPUSource    string `json:"cpu_source,omitempty"`
	MemorySource string `json:"memory_source,omitempty"`
	// Memory the kernel charges the server (cgroup) or the host uses (node_exporter), in MiB:
	// idle (before the run), under load (the most seen at an interval's end), and the kernel's
	// own peak; anonymous memory and page cache (shared memory included) apart.
	MemIdleMB      float64 `json:"mem_idle_mb,omitempty"`
	MemLoadMB      float64 `json:"mem_load_mb,omitempty"`
	MemPeakMB      float64 `json:"mem_peak_mb,omitempty"`
	MemAnonIdleMB  float64 `json:"mem_anon_idle_mb,omitempty"`
	MemAnonLoadMB  float64 `json:"mem_anon_load_mb,omitempty"`
	MemCacheIdleMB float64 `json:"mem_cache_idle_mb,omitempty"`
	MemCacheLoadMB float64 `json:"mem_cache_load_mb,omitempty"`
	// Block I/O operations at the device, and which device ("254:0 vda"); bytes are above.
	DiskReadOps  int64  `json:"disk_read_ops,omitempty"`
	DiskWriteOps int64  `json:"disk_write_ops,omitempty"`
	DiskDevice   string `json:"disk_device,omitempty"`
	// DiskUndercounted: the disk figures hold fewer bytes written than the engine's own WAL/redo
	// counter, so part of the server's writes was made by the kernel for no cgroup (background
	// writeback, a memory-mapped redo log written back by the kernel); they are kept but not
	// compared.
	DiskUndercounted bool `json:"disk_undercounted,omitempty"`
	// DiskCgroup is what the server's cgroup counted over the same window when the disk figures
	// above come from a block device of the server's own: the secondary source, kept beside the
	// device's so a reader sees what the cgroup leaves out.
	DiskCgroup *DiskIO `json:"disk_cgroup,omitempty"`
	// HostPerTxn divides the host figures by transactions: cpu_ms, disk_read_bytes,
	// disk_write_bytes, disk_read_ops, disk_write_ops.
	HostPerTxn map[string]float64 `json:"host_per_txn,omitempty"`

	DataSizeBytes int64 `json:"data_size_bytes,omitempty"` // tables + indexes of the workload, from the engine
	DataDirBytes  int64 `json:"data_dir_bytes,omitempty"`  // the whole data directory on disk (logs, WAL/redo, undo included), local servers

	// Engine counters over the measured run, as deltas, and per transaction.
	Counters map[string]int64   `json:"counters,omitempty"`
	PerTxn   map[string]float64 `json:"per_txn,omitempty"`

	// A cluster's: Aggregate says how the figures above were formed from its Nodes ("sum of 3
	// nodes": CPU, memory, disk, data directory and counters summed, gauges and the data size
	// the largest node's); Replication sums up its replication over the run.
	Aggregate   string       `json:"aggregate,omitempty"`
	Nodes       []Node       `json:"nodes,omitempty"`
	Replication *Replication `json:"replication,omitempty"`
	// NotAvailable lists what a server fairbench did not start could not give (a view another
	// product of the protocol lacks), each with its reason: absent figures, not a failed run.
	NotAvailable []string `json:"not_available,omitempty"`
}

// DiskIO is block I/O over the measured run as one source counts it: bytes, and operations (bios).
type DiskIO struct {
	ReadBytes  int64  `json:"read_bytes"`
	WriteBytes int64  `json:"write_bytes"`
	ReadOps    int64  `json:"read_ops"`
	WriteOps   int64  `json:"write_ops"`
	Source     string `json:"source"`
}

// Dataset fingerprints the data a run's workload loaded, the same way on every engine.
type Dataset struct {
	Tables []DatasetTable `json:"tables"`
	// Indexes are "table(col,col)" with " primary" or " unique" where so, sorted.
	Indexes []string `json:"indexes"`
	// Checksummed is false when the data set was too large to checksum: counts only.
	Checksummed bool    `json:"checksummed"`
	Note        string  `json:"note,omitempty"` // what the checksums leave out, or why there are none
	Seconds     float64 `json:"seconds"`        // what taking the fingerprint cost
	// Answers are the workload's read statements run once each with fixed parameters right
	// after prepare (workload files): equal answers on every engine, or the statement whose
	// answers differ.
	Answers []Answer `json:"answers,omitempty"`
	// SourceMix is, for a workload captured from a server, each transaction's share of the
	// source's calls and server time in percent, from the workload file.
	SourceMix []SourceShare `json:"source_mix,omitempty"`
}

// SourceShare is one captured transaction's share of its source server's workload.
type SourceShare struct {
	Transaction string  `json:"transaction"`
	CallsPct    float64 `json:"calls_pct"`
	TimePct     float64 `json:"time_pct"`
}

// Answer is one read statement's answer on one engine: its rows counted and checksummed over a
// canonical text (the same on every engine), in order where the statement orders them.
type Answer struct {
	Transaction string `json:"transaction"`
	Statement   int    `json:"statement"` // 1-based, in its transaction
	SQL         string `json:"sql"`
	Rows        int64  `json:"rows"`
	Checksum    string `json:"checksum,omitempty"`
	Error       string `json:"error,omitempty"` // the engine's error, where the statement failed
	// Plan is the engine's plan for the statement with the same parameters, as the access path
	// to each table ("item: index lookup (item_pkey)"; dialect.Explain); absent where EXPLAIN failed.
	Plan string `json:"plan,omitempty"`
}

// Plans is each read statement's plan as the run recorded it, by name: "search #1" for a
// workload file's statement (Dataset.Answers), "Q18" for a TPC-H query; names in the run's order.
func (r *Result) Plans() (names []string, plans map[string]string) {
	plans = map[string]string{}
	add := func(name, plan string) {
		if _, seen := plans[name]; plan != "" && !seen {
			names = append(names, name)
			plans[name] = plan
		}
	}
	if r.Dataset != nil {
		for _, a := range r.Dataset.Answers {
			add(fmt.Sprintf("%s #%d", a.Transaction, a.Statement), a.Plan)
		}
	}
	if r.TPCH != nil {
		for _, q := range r.TPCH.Queries {
			add(fmt.Sprintf("Q%d", q.Query), q.Plan)
		}
	}
	return names, plans
}

// PlansChanged names the statements both runs recorded a plan for whose plans differ, in a's order.
func PlansChanged(a, b *Result) []string {
	names, pa := a.Plans()
	_, pb := b.Plans()
	var out []string
	for _, n := range names {
		if q, ok := pb[n]; ok && q != pa[n] {
			out = append(out, n)
		}
	}
	return out
}

type DatasetTable struct {
	Name     string `json:"name"`
	Rows     int64  `json:"rows"`
	Checksum string `json:"checksum,omitempty"` // sum of each row's 60-bit SHA-256 prefix, decimal
}

// Write stores r at path atomically: a reader never sees a half-written file.
func Write(path string, r *Result) error {
	if r.Schema == 0 {
		r.Schema = SchemaVersion
	}
	FillFacets(r)
	return WriteJSON(path, r)
}

// WriteJSON stores any document (environment.json too) atomically, indented for people to read.
func WriteJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return WriteFileAtomic(path, append(data, '\n'))
}

// WriteFileAtomic writes to a temporary file in the same directory and renames it into place.
func WriteFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// Read loads one results file.
func Read(path string) (*Result, error) {
	data, err := readLimited(path)
	if err != nil {
		return nil, err
	}
	return Decode(data, path)
}

// Decode reads one results document; source names it in errors.
func Decode(data []byte, source string) (*Result, error) {
	var r Result
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%s is not a fairbench results file: %v", source, err)
	}
	if r.Schema > SchemaVersion {
		return nil, fmt.Errorf("%s has results schema %d, newer than this fairbench understands (%d): upgrade fairbench", source, r.Schema, SchemaVersion)
	}
	if err := r.validate(source); err != nil {
		return nil, err
	}
	FillFacets(&r)
	return &r, nil
}

// ReadDir loads every *.json results file below dir (sorted by name), skipping environment.json.
func ReadDir(dir string) ([]*Result, error) {
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && filepath.Ext(p) == ".json" && filepath.Base(p) != "environment.json" {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out []*Result
	for _, p := range paths {
		r, err := Read(p)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// ReadPath reads what a user points at: one results file, a compare directory (its results/
// folder), or any directory of results files. An empty directory is an error that says what to give.
func ReadPath(p string) ([]*Result, error) {
	st, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("%s: %v: give a results file or a compare directory", p, unwrapPath(err))
	}
	if !st.IsDir() {
		r, err := Read(p)
		if err != nil {
			return nil, err
		}
		return []*Result{r}, nil
	}
	dir := p
	if sub := filepath.Join(p, "results"); isDir(sub) {
		dir = sub
	}
	rs, err := ReadDir(dir)
	if err == nil && len(rs) == 0 {
		err = fmt.Errorf("%s holds no results files: give a results file or a compare directory", p)
	}
	return rs, err
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// unwrapPath drops the path that os errors repeat, so the message names it once.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// PairByRound pairs each run of flipped with the run of plain of the same round, in round
// order: compare runs an engine's --explain profile beside its own run in every round, first in
// one round and second in the next, so a flipped run's pair is the plain run of its round,
// whichever ran first and whatever rounds the plain runs had on their own. Results written
// before runs carried their round pair by time (PairFollowing), as compare then ran them.
func PairByRound(flipped, plain []*Result) (f, p []*Result) {
	noRound := func(r *Result) bool { return r.Round == 0 }
	if slices.ContainsFunc(flipped, noRound) || slices.ContainsFunc(plain, noRound) {
		return PairFollowing(flipped, plain)
	}
	byRound := slices.Clone(flipped)
	slices.SortStableFunc(byRound, func(x, y *Result) int { return x.Round - y.Round })
	plain = ByStart(plain)
	for _, m := range MatchRounds(RoundsOf(byRound), RoundsOf(plain)) {
		f, p = append(f, byRound[m[0]]), append(p, plain[m[1]])
	}
	return f, p
}

// RoundsOf gives each run's round, in the order given.
func RoundsOf(rs []*Result) []int {
	out := make([]int, len(rs))
	for i, r := range rs {
		out[i] = r.Round
	}
	return out
}

// MatchRounds pairs the positions of a and b that hold the same round, in a's order: the one rule
// by which two series of rounds (two engines', or a flipped run's and its engine's own) are set
// side by side. Where b holds a round twice its later position counts.
func MatchRounds(a, b []int) [][2]int {
	at := make(map[int]int, len(b))
	for j, r := range b {
		at[r] = j
	}
	var out [][2]int
	for i, r := range a {
		if j, ok := at[r]; ok {
			out = append(out, [2]int{i, j})
		}
	}
	return out
}

// PairFollowing pairs each run of later with the latest run of earlier that started before it
// and is not paired yet, in the order later's runs started: how compare's --explain runs paired
// when a flipped run always followed the engine's own and results did not say their round.
func PairFollowing(later, earlier []*Result) (l, e []*Result) {
	es, taken := ByStart(earlier), map[*Result]bool{}
	for _, r := range ByStart(later) {
		var pair *Result
		for _, c := range es {
			if c.StartedAt.Before(r.StartedAt) && !taken[c] {
				pair = c
			}
		}
		if pair != nil {
			taken[pair] = true
			l, e = append(l, r), append(e, pair)
		}
	}
	return l, e
}

// Figures gives f of each run, in the order given.
func Figures(rs []*Result, f func(*Result) float64) []float64 {
	out := make([]float64, len(rs))
	for i, r := range rs {
		out[i] = f(r)
	}
	return out
}

// ByStart gives the runs in the order they started (a copy; equal starts keep their order).
func ByStart(rs []*Result) []*Result {
	out := slices.Clone(rs)
	slices.SortStableFunc(out, func(x, y *Result) int { return x.StartedAt.Compare(y.StartedAt) })
	return out
}
