package job

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/workload"
)

// The workload's data check, done one way for `fairbench check`, `run --check`, and the check
// after every run of workloads that ask for it, in the command line and in compare alike.

// Check verifies the data set (Guard first: a foreign, unfinished or mismatched data set is
// refused, not checked) and returns every verdict. A check that could run but found the data
// wrong is a DataCheck with Passed false, not an error; CheckError turns it into one.
func (j *Job) Check(ctx context.Context, log io.Writer) (*result.DataCheck, error) {
	if _, err := j.Guard(ctx); err != nil {
		return nil, err
	}
	return j.checkData(ctx, log)
}

// checkData runs the workload's check. A workload with named conditions (workload.Verdicter)
// gives a verdict for each; any other gives one verdict, its Check's.
func (j *Job) checkData(ctx context.Context, log io.Writer) (*result.DataCheck, error) {
	env := j.Env(1, false, nil, log)
	var vs []workload.Verdict
	if ex, ok := j.Workload.(workload.Verdicter); ok {
		var err error
		if vs, err = ex.Verdicts(ctx, env); err != nil {
			return nil, err
		}
	} else {
		v := workload.Verdict{Name: j.Spec.Name + " data", OK: true, Detail: "consistent"}
		if err := j.Workload.Check(ctx, env); err != nil {
			var np *workload.NotPreparedError
			var de *workload.DataError
			if errors.As(err, &np) || errors.As(err, &de) || ctx.Err() != nil {
				return nil, err // not a verdict on the data
			}
			v.OK, v.Detail = false, err.Error()
		}
		vs = []workload.Verdict{v}
	}
	dc := &result.DataCheck{Passed: true, Verdicts: vs}
	for _, v := range vs {
		dc.Passed = dc.Passed && v.OK
	}
	return dc, nil
}

// CheckError is nil for a check that passed, else an error naming each condition that failed.
func CheckError(dc *result.DataCheck) error {
	if dc == nil || dc.Passed {
		return nil
	}
	return fmt.Errorf("data check failed: %s", strings.Join(result.FailedVerdicts(dc.Verdicts), "; "))
}

func (j *Job) wantsCheck() bool {
	return j.CheckAfterRun || j.Workload.Traits().CheckAfterRun
}

// checkAfterRun checks the data a run has just used and records the verdicts in its result. A
// run that broke the data's invariants is not a clean result: it is marked incomplete.
func (j *Job) checkAfterRun(ctx context.Context, res *result.Result, log io.Writer) error {
	dc, err := j.checkData(ctx, log)
	if err != nil {
		err = fmt.Errorf("data check after the run: %w", err)
		res.Complete, res.Error = false, err.Error()
		return err
	}
	res.DataCheck = dc
	if err := CheckError(dc); err != nil {
		res.Complete, res.Error = false, err.Error()+" (after the run)"
		return err
	}
	return nil
}
