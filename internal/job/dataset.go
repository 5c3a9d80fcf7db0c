package job

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/version"
	"github.com/fairbench/fairbench/internal/workload"
)

// The data set's life on the target: Prepare records it (unfinished until the load ends),
// Run and Check refuse anything but a finished data set of fairbench's own with the
// parameters asked for, and take the parameters not asked for from the record; Cleanup
// forgets it. Every workload gets this from here, without code of its own.

// dataset names the data set the job's workload loads.
func (j *Job) dataset() string {
	if j.Spec.Dataset != "" {
		return j.Spec.Dataset
	}
	return j.Spec.Name
}

// dataParams are the values of the options that shape the data.
func (j *Job) dataParams() map[string]string {
	p := map[string]string{}
	for _, name := range j.Spec.DataOptions {
		p[name] = j.Options[name]
	}
	return p
}

// Prepare creates and loads the data set, recording it on the target first as unfinished (once
// the workload has claimed its tables, so a refused prepare leaves an earlier record alone) and
// as finished when the load has ended. With env.Force, the data set recorded earlier is
// cleaned up first with the parameters it was loaded with, so no table of it is left behind.
func (j *Job) Prepare(ctx context.Context, env *workload.Env) error {
	c, err := j.recordConnect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	if tables := j.Workload.Traits().ExistingTables; tables != nil {
		return existingTablesThere(ctx, c, j.Spec.Name, tables)
	}
	if env.Force {
		if err := j.cleanupRecorded(ctx, c, env); err != nil {
			return err
		}
	}
	if err := j.checkSpace(ctx, c); err != nil {
		return err
	}
	claimed := false
	onClaim := func(tables []string) error {
		claimed = true
		return workload.BeginDataset(ctx, c, &workload.DatasetRecord{Dataset: j.dataset(), Workload: j.Spec.Name,
			Params: j.dataParams(), Tables: tables, ToolVersion: version.Version})
	}
	if err := j.Workload.Prepare(workload.OnClaim(ctx, onClaim), env); err != nil {
		return err
	}
	if !claimed {
		return fmt.Errorf("%s: %w", j.Spec.Name, workload.ErrNotClaimed)
	}
	return workload.SetDatasetFinished(ctx, c, j.dataset(), true)
}

// cleanupRecorded drops the data set recorded on the target, as it was prepared.
func (j *Job) cleanupRecorded(ctx context.Context, c sqldb.Conn, env *workload.Env) error {
	rec, err := workload.ReadDataset(ctx, c, j.dataset())
	if err != nil || rec == nil {
		return err
	}
	set := explicit(j.Set)
	maps.Copy(set, rec.Params)
	wl, err := j.Spec.New(j.Spec.WithDefaults(set))
	if err != nil {
		return err
	}
	if err := workload.SetDatasetFinished(ctx, c, j.dataset(), false); err != nil {
		return err
	}
	if err := wl.Cleanup(ctx, env); err != nil {
		return err
	}
	return workload.ForgetDataset(ctx, c, j.dataset())
}

// Cleanup drops the data set's tables as prepare recorded them (parameters included: a
// `prepare --tables 8` is cleaned up whole by a plain `cleanup`), then its record.
func (j *Job) Cleanup(ctx context.Context, env *workload.Env) error {
	c, err := j.recordConnect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	if j.Workload.Traits().ExistingTables != nil {
		return nil // not fairbench's to drop
	}
	rec, err := j.adoptRecord(ctx, c, false)
	if err != nil {
		return err
	}
	if rec != nil {
		// Unfinished from here: a cleanup interrupted half-way leaves no "finished" data set.
		if err := workload.SetDatasetFinished(ctx, c, j.dataset(), false); err != nil {
			return err
		}
	}
	if err := j.Workload.Cleanup(ctx, env); err != nil {
		return err
	}
	return workload.ForgetDataset(ctx, c, j.dataset())
}

// Guard is what Run and Check do first: the data set must be recorded by fairbench's prepare,
// finished, with the parameters given explicitly, and every table of it fairbench's own. The
// parameters not given are taken from the record. It returns the record for the result.
func (j *Job) Guard(ctx context.Context) (*result.Prepared, error) {
	c, err := j.recordConnect(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if tables := j.Workload.Traits().ExistingTables; tables != nil {
		if err := existingTablesThere(ctx, c, j.Spec.Name, tables); err != nil {
			return nil, err
		}
		return &result.Prepared{Name: j.dataset(), PreparedBy: "existing tables", Tables: tables}, nil
	}
	rec, err := j.adoptRecord(ctx, c, true)
	if err != nil {
		return nil, err
	}
	if err := workload.CheckTablesOurs(ctx, c, j.Spec.Name, rec.Tables); err != nil {
		return nil, err
	}
	return &result.Prepared{Name: rec.Dataset, PreparedBy: rec.Workload, Params: rec.Params, Tables: rec.Tables,
		StartedAt: rec.StartedAt, FinishedAt: rec.FinishedAt}, nil
}

// existingTablesThere checks that the tables a workload runs on without having created them are
// on the target, reading nothing from them.
func existingTablesThere(ctx context.Context, c sqldb.Conn, name string, tables []string) error {
	for _, t := range tables {
		_, err := c.Query(ctx, "SELECT 1 FROM "+t+" WHERE 1 = 0")
		if sqldb.IsUndefinedTable(err) {
			return workload.Refusef("table %s is not on this target, and %s says its tables exist (existing_tables: true): "+
				"give the database that holds it in --target", t, name)
		}
		if err != nil {
			return fmt.Errorf("reaching table %s: %w", t, err)
		}
	}
	return nil
}

// adoptRecord reads the data set's record and rebuilds the workload with the recorded data
// options in place of the defaults; an option given explicitly that contradicts the record is
// refused. With finished, a missing or unfinished record is refused too; otherwise it returns
// a nil record and leaves the job as it is.
func (j *Job) adoptRecord(ctx context.Context, c sqldb.Conn, finished bool) (*workload.DatasetRecord, error) {
	rec, err := workload.ReadDataset(ctx, c, j.dataset())
	if err != nil {
		return nil, err
	}
	if rec == nil {
		if !finished {
			return nil, nil
		}
		return nil, &workload.NotPreparedError{Workload: j.Spec.Name, Detail: fmt.Sprintf(
			"no %s data set prepared by fairbench is recorded on this target (in %s), and fairbench runs only on data it loaded",
			j.dataset(), workload.DatasetTable)}
	}
	if err := j.contradicts(rec); err != nil {
		return nil, err
	}
	if finished && !rec.Finished() {
		return nil, workload.Refusef("the %s data set on this target is unfinished: its prepare (%s, started %s) was interrupted or failed, "+
			"or a cleanup was: run 'fairbench prepare --workload %s --force%s' to load it again",
			rec.Dataset, rec.Workload, rec.StartedAt, j.Spec.Name, j.flagList(rec.Params))
	}
	return rec, j.rebuild(rec.Params)
}

// contradicts refuses explicit data options that differ from the recorded ones, naming both
// and the two ways out.
func (j *Job) contradicts(rec *workload.DatasetRecord) error {
	asked := map[string]string{}
	for _, name := range j.Spec.DataOptions {
		if v, ok := j.Set[name]; ok {
			asked[name] = v
		}
	}
	diff := workload.ParamsDiffer(asked, rec.Params)
	if len(diff) == 0 {
		return nil
	}
	var got, want []string
	for _, d := range diff {
		got = append(got, fmt.Sprintf("--%s %s", d.Name, d.Have))
		want = append(want, fmt.Sprintf("--%s %s", d.Name, d.Want))
	}
	return workload.Refusef("the %s data set on this target was prepared with %s, not %s: leave those options out to use it, "+
		"or run 'fairbench prepare --workload %s --force %s' to load what you asked for",
		rec.Dataset, strings.Join(got, " "), strings.Join(want, " "), j.Spec.Name, strings.Join(want, " "))
}

// rebuild makes the recorded data options the job's, keeping every option given explicitly.
func (j *Job) rebuild(recorded map[string]string) error {
	set := explicit(j.Set)
	for _, name := range j.Spec.DataOptions {
		if v, ok := recorded[name]; ok {
			if _, explicit := set[name]; !explicit {
				set[name] = v
			}
		}
	}
	opts := j.Spec.WithDefaults(set)
	if maps.Equal(opts, j.Options) {
		return nil // the same workload: keep its per-run state
	}
	wl, err := j.Spec.New(opts)
	if err != nil {
		return workload.Refusef("the recorded %s data set's parameters are not valid here (%v): run 'fairbench prepare --workload %s --force'", j.dataset(), err, j.Spec.Name)
	}
	j.Options, j.Workload = opts, wl
	return nil
}

// flagList writes the parameters that differ from the workload's defaults as command-line
// flags, sorted: what to add to prepare to load the same data again.
func (j *Job) flagList(params map[string]string) string {
	defaults := j.Spec.WithDefaults(nil)
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(params)) {
		if params[k] != "" && !workload.SameValue(params[k], defaults[k]) {
			fmt.Fprintf(&b, " --%s %s", k, params[k])
		}
	}
	return b.String()
}

// recordConnect opens the connection that reads and writes the data set's record. On a Galera
// host list it may land on another node than the prepare that wrote the record, and a node
// applies the cluster's commits a little after they are acknowledged: without waiting for them
// a run straight after prepare read the record as unfinished (seen in CI).
func (j *Job) recordConnect(ctx context.Context) (sqldb.Conn, error) {
	c, err := j.Connect(ctx)
	if err == nil {
		workload.WaitForCluster(ctx, c)
	}
	return c, err
}
