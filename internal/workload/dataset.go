package workload

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fairbench/fairbench/internal/sqldb"
)

// DatasetTable is where prepare records, on the target itself, which data sets fairbench loaded
// there, with which parameters, which tables they are, and whether the load finished. A table of
// its own rather than more words in the tables' comments: one row per data set is written and
// read atomically in one statement, it holds any number of tables and parameters (MySQL and
// MariaDB cap a table comment at 2,048 characters), it says "unfinished" from the moment a load
// starts until it ends, and the ownership marker keeps meaning exactly "created by fairbench".
const DatasetTable = "fairbench_dataset"

// Text columns throughout: the same DDL on every engine, and times as RFC 3339 text, free of
// each engine's time-zone handling. params is a JSON object of the data options.
const datasetDDL = `CREATE TABLE ` + DatasetTable + ` (
  dataset VARCHAR(64) NOT NULL PRIMARY KEY,
  workload VARCHAR(64) NOT NULL,
  params TEXT NOT NULL,
  tables TEXT NOT NULL,
  tool_version VARCHAR(64) NOT NULL,
  started_at VARCHAR(40) NOT NULL,
  finished_at VARCHAR(40)
)`

// DatasetRecord is one data set's row of DatasetTable.
type DatasetRecord struct {
	Dataset     string
	Workload    string            // the workload whose prepare loaded it
	Params      map[string]string // its data options, as prepare was given them
	Tables      []string          // the tables prepare claimed, parents first
	ToolVersion string
	StartedAt   string
	// FinishedAt is empty while prepare runs, after it failed or was interrupted, and while
	// cleanup drops the tables.
	FinishedAt string
}

// Finished says the load ran to its end.
func (r *DatasetRecord) Finished() bool { return r.FinishedAt != "" }

// DataError says the data on the target is not what the command needs (not fairbench's,
// unfinished, or prepared with other parameters). The user must fix it: exit status 2.
type DataError struct{ Msg string }

func (e *DataError) Error() string { return e.Msg }

// Refusef builds a DataError.
func Refusef(format string, args ...any) error { return &DataError{Msg: fmt.Sprintf(format, args...)} }

// ReadDataset returns the record of dataset, or nil when there is none (no DatasetTable, or no
// row for it). A DatasetTable that fairbench did not create is refused.
func ReadDataset(ctx context.Context, c sqldb.Conn, dataset string) (*DatasetRecord, error) {
	st, err := StateOf(ctx, c, DatasetTable)
	if err != nil || st == Absent {
		return nil, err
	}
	if st == Foreign {
		return nil, foreignDatasetTable()
	}
	rows, err := c.Query(ctx, "SELECT workload, params, tables, tool_version, started_at, finished_at FROM "+DatasetTable+
		" WHERE dataset = ?", dataset)
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	r := rows[0]
	rec := &DatasetRecord{Dataset: dataset, Workload: r[0], ToolVersion: r[3], StartedAt: r[4], FinishedAt: r[5]}
	if err := json.Unmarshal([]byte(r[1]), &rec.Params); err != nil {
		return nil, Refusef("%s's record of %s has unreadable parameters (%v): run 'fairbench prepare --workload %s --force'", DatasetTable, dataset, err, rec.Workload)
	}
	if r[2] != "" {
		rec.Tables = strings.Split(r[2], ",")
	}
	return rec, nil
}

func foreignDatasetTable() error {
	return Refusef("table %s exists and was not created by fairbench: fairbench keeps its record of prepared data there; use another database or drop it yourself", DatasetTable)
}

// BeginDataset records that prepare of rec.Dataset is under way (FinishedAt empty), replacing
// any earlier record of it, and creates DatasetTable when it is not there yet.
func BeginDataset(ctx context.Context, c sqldb.Conn, rec *DatasetRecord) error {
	switch st, err := StateOf(ctx, c, DatasetTable); {
	case err != nil:
		return err
	case st == Foreign:
		return foreignDatasetTable()
	case st == Absent:
		if err := CreateOwned(ctx, c, DatasetTable, datasetDDL); err != nil && !alreadyExists(err) {
			return fmt.Errorf("creating %s: %w", DatasetTable, err)
		}
	}
	params, err := json.Marshal(rec.Params) // sorted keys: the same record for the same options
	if err != nil {
		return err
	}
	if _, err := c.Query(ctx, "DELETE FROM "+DatasetTable+" WHERE dataset = ?", rec.Dataset); err != nil {
		return err
	}
	rec.StartedAt, rec.FinishedAt = now(), ""
	_, err = c.Query(ctx, "INSERT INTO "+DatasetTable+" (dataset, workload, params, tables, tool_version, started_at) VALUES (?, ?, ?, ?, ?, ?)",
		rec.Dataset, rec.Workload, string(params), strings.Join(rec.Tables, ","), rec.ToolVersion, rec.StartedAt)
	return err
}

// alreadyExists tells a CREATE TABLE that lost a race with another fairbench from other failures.
func alreadyExists(err error) bool {
	code := sqldb.ErrorCode(err)
	return code == "42P07" || code == "1050"
}

// SetDatasetFinished marks the record finished (done) or not (a cleanup is dropping its tables).
func SetDatasetFinished(ctx context.Context, c sqldb.Conn, dataset string, done bool) error {
	if done {
		_, err := c.Query(ctx, "UPDATE "+DatasetTable+" SET finished_at = ? WHERE dataset = ?", now(), dataset)
		return err
	}
	_, err := c.Query(ctx, "UPDATE "+DatasetTable+" SET finished_at = NULL WHERE dataset = ?", dataset)
	return err
}

// ForgetDataset deletes the record of dataset, and DatasetTable itself once it records nothing,
// so that a cleanup leaves the database as prepare found it.
func ForgetDataset(ctx context.Context, c sqldb.Conn, dataset string) error {
	if st, err := StateOf(ctx, c, DatasetTable); err != nil || st != Ours {
		return err
	}
	if _, err := c.Query(ctx, "DELETE FROM "+DatasetTable+" WHERE dataset = ?", dataset); err != nil {
		return err
	}
	rows, err := c.Query(ctx, "SELECT COUNT(*) FROM "+DatasetTable)
	if err != nil {
		return err
	}
	if rows[0][0] == "0" {
		return c.Exec(ctx, "DROP TABLE "+DatasetTable)
	}
	return nil
}

func now() string { return time.Now().UTC().Format(time.RFC3339) }

// CheckTablesOurs refuses when one of the tables is missing or is not fairbench's: a run must
// never write into a table fairbench did not create, even one of the same name and columns.
func CheckTablesOurs(ctx context.Context, c sqldb.Conn, workloadName string, tables []string) error {
	for _, n := range tables {
		st, err := StateOf(ctx, c, n)
		switch {
		case err != nil:
			return err
		case st == Absent:
			return &NotPreparedError{Workload: workloadName + " --force", Detail: "table " + n + " of the prepared data set is missing"}
		case st == Foreign:
			return Refusef("table %s was not created by fairbench: fairbench will not run on it; use another database, or drop it and run 'fairbench prepare --workload %s'", n, workloadName)
		}
	}
	return nil
}

// claimKey carries, in a prepare's context, what to do once the workload has claimed its tables.
type claimKey struct{}

// OnClaim returns a context in which ClaimTables calls claimed with the tables it has just
// claimed (checked, and fairbench's own dropped with --force) before anything is created: job
// records the data set as being prepared from that moment, and learns its tables, whatever the
// workload.
func OnClaim(ctx context.Context, claimed func(tables []string) error) context.Context {
	return context.WithValue(ctx, claimKey{}, claimed)
}

func notifyClaim(ctx context.Context, tables []string) error {
	if f, ok := ctx.Value(claimKey{}).(func([]string) error); ok {
		return f(tables)
	}
	return nil
}

// ErrNotClaimed is job's way to catch a workload whose Prepare forgot ClaimTables.
var ErrNotClaimed = errors.New("the workload's Prepare did not call workload.ClaimTables: its tables are unknown")

// ParamDiff is a data option asked for (Want) that differs from what prepare recorded (Have).
type ParamDiff struct{ Name, Want, Have string }

// ParamsDiffer lists the options in want whose values differ from those in have, by name.
func ParamsDiffer(want, have map[string]string) []ParamDiff {
	var out []ParamDiff
	for name, w := range want {
		if h, ok := have[name]; ok && !SameValue(w, h) {
			out = append(out, ParamDiff{Name: name, Want: w, Have: h})
		}
	}
	sort.Slice(out, func(i, k int) bool { return out[i].Name < out[k].Name })
	return out
}

// SameValue compares option values as the workloads read them: 10000 and 1e4 are one number,
// on and true one switch.
func SameValue(a, b string) bool {
	a, b = strings.TrimSpace(a), strings.TrimSpace(b)
	if a == b {
		return true
	}
	if x, err := strconv.ParseFloat(a, 64); err == nil {
		if y, err := strconv.ParseFloat(b, 64); err == nil {
			return x == y
		}
	}
	o := Options{"a": a, "b": b}
	ba, errA := o.Bool("a")
	bb, errB := o.Bool("b")
	return errA == nil && errB == nil && ba == bb
}
