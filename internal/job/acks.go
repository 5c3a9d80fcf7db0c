package job

import (
	"context"
	"fmt"
	"io"

	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/workload"
)

// CheckAcks looks up, on the server target names (nil: the job's own target, whose host list
// reaches a surviving node), every transaction the run's clients saw committed, and returns the
// counts for the result. Workloads that cannot (not workload.AckChecker) return nil.
func (j *Job) CheckAcks(ctx context.Context, acks []*workload.Acks, target *sqldb.Target, log io.Writer) (*result.AckCheck, error) {
	ac, ok := j.Workload.(workload.AckChecker)
	if !ok {
		return nil, nil
	}
	t := j.Target
	if target != nil {
		t = *target
	}
	env := j.Env(1, false, nil, log)
	env.Connect = func(ctx context.Context) (sqldb.Conn, error) { return sqldb.Open(ctx, t) }
	v, err := ac.CheckAcks(ctx, env, acks)
	out := &result.AckCheck{Acknowledged: v.Acknowledged, Lost: v.Lost, InDoubt: v.InDoubt, InDoubtFound: v.InDoubtFound,
		LostExamples: v.Examples, CheckedOn: t.Redacted(), NotChecked: v.NotChecked}
	if err != nil {
		out.NotChecked = "the lookup failed: " + err.Error()
		return out, fmt.Errorf("checking the acknowledged transactions: %w", err)
	}
	return out, nil
}

// recordAcks checks the run's acknowledged transactions into res.Availability. A lost one does
// not make the run incomplete (asynchronous replication may lose them by design): it is counted
// and shown, never hidden. A failed lookup does.
func (j *Job) recordAcks(ctx context.Context, res *result.Result, acks []*workload.Acks, log io.Writer) error {
	if acks == nil || ctx.Err() != nil {
		return nil
	}
	check, err := j.CheckAcks(ctx, acks, nil, log)
	if check == nil {
		return err
	}
	if res.Availability == nil {
		res.Availability = &result.Availability{}
	}
	res.Availability.Acks = check
	// What allowed a loss, where the cluster says (postgres-ha in asynchronous mode).
	if ls, ok := j.Cluster.(interface{ LossSetting() string }); ok && check.Lost > 0 {
		check.Setting = ls.LossSetting()
	}
	if err != nil {
		res.Complete, res.Error = false, err.Error()
		return err
	}
	if log != nil && check.NotChecked == "" {
		fmt.Fprintf(log, "acknowledged transactions: %d, lost: %d; in doubt: %d (%d of them committed)\n",
			check.Acknowledged, check.Lost, check.InDoubt, check.InDoubtFound)
	}
	return nil
}
