package study

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strconv"

	"github.com/fairbench/fairbench/internal/job"
	"github.com/fairbench/fairbench/internal/randgen"
	"github.com/fairbench/fairbench/internal/runner"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/workload/tpch"
)

// DefaultTPCHScale keeps the TPC-H data a few times the study's 64 MB buffer pool, so that Q18's
// scans of lineitem and orders go to the capped device, while loading stays within seconds.
const DefaultTPCHScale = 0.1

// tpchQ18 is the published analysis's second measure: one big join-and-aggregate query whose
// time depends on how fast the engine can read its tables.
type tpchQ18 struct {
	scale      float64
	answersDir string // the first engine's answers check the next engines'
	log        io.Writer
}

// q18Name keys Q18's figures in each step's Extra.
const q18Name = "tpch_q18"

func (q *tpchQ18) Name() string { return q18Name }

func (q *tpchQ18) job(tg sqldb.Target) (*job.Job, error) {
	opts := map[string]string{
		tpch.OptScaleFactor:  strconv.FormatFloat(q.scale, 'f', -1, 64),
		tpch.OptQueries:      "18",
		tpch.OptAnswersCache: q.answersDir,
	}
	return job.New(tg, tpch.Name, opts, randgen.DefaultConfig("uniform"), 0)
}

func (q *tpchQ18) Prepare(ctx context.Context, tg sqldb.Target) error {
	j, err := q.job(tg)
	if err != nil {
		return err
	}
	// The study's server is its own throwaway one, so replacing its tables is safe.
	return j.Prepare(ctx, j.Env(2, true, nil, q.log))
}

func (q *tpchQ18) Run(ctx context.Context, tg sqldb.Target) (float64, error) {
	j, err := q.job(tg)
	if err != nil {
		return 0, err
	}
	res, err := j.Run(ctx, runner.Config{Threads: 1})
	if err != nil {
		return 0, err
	}
	for _, r := range res.TPCH.Queries {
		if r.Query != 18 {
			continue
		}
		if r.Status != tpch.StatusOK {
			return r.Seconds, fmt.Errorf("Q18 %s: %s", r.Status, r.Detail)
		}
		return r.Seconds, nil
	}
	return 0, fmt.Errorf("Q18 was not run")
}

// stepWorkloads are what is timed at every step besides OLTP read-write.
func (o *BandwidthOptions) stepWorkloads() []StepWorkload {
	if o.TPCHScale <= 0 {
		return nil
	}
	return []StepWorkload{&tpchQ18{scale: o.TPCHScale, answersDir: filepath.Join(o.OutDir, "tpch-answers"), log: o.Log}}
}
