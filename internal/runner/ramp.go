package runner

import (
	"time"

	"github.com/fairbench/fairbench/internal/histogram"
	"github.com/fairbench/fairbench/internal/result"
)

// Ramp adds clients step by step to find where an engine saturates, as in the published
// "add a client every N seconds" studies.
type Ramp struct {
	Add   int           // clients added per step (and the number the ramp starts with)
	Every time.Duration // length of a step
	Max   int           // most clients
	SLO   time.Duration // stop when a step's p99 exceeds it; 0 = no SLO
}

// plateauSteps is how many steps in a row may fail to raise throughput by plateauGain before the
// ramp stops: one flat step can be noise, two are a plateau.
const (
	plateauSteps = 2
	plateauGain  = 1.02
)

type rampState struct {
	cfg       Ramp
	level     int
	stepStart time.Time
	txns      int64
	errors    int64
	hist      *histogram.Histogram
	best      float64
	flat      int
	rec       result.Ramp
}

func newRampState(cfg Ramp, start time.Time) *rampState {
	r := &rampState{cfg: cfg, level: min(cfg.Add, cfg.Max), stepStart: start, hist: histogram.New()}
	r.rec = result.Ramp{Add: cfg.Add, EveryS: cfg.Every.Seconds(), Max: cfg.Max, SLOMS: float64(cfg.SLO.Microseconds()) / 1000}
	return r
}

// observe takes one interval's figures. At the end of a step it records the step and returns the
// next client count, or a reason to stop.
func (r *rampState) observe(iv *histogram.Histogram, txns, errors int64, now time.Time) (level int, stop string) {
	r.txns += txns
	r.errors += errors
	r.hist.Merge(iv)
	// A small tolerance so interval ticks that land a hair early still close the step.
	if now.Sub(r.stepStart) < r.cfg.Every-r.cfg.Every/20 {
		return r.level, ""
	}
	r.closeStep(now)
	last := r.rec.Steps[len(r.rec.Steps)-1]
	switch {
	case r.cfg.SLO > 0 && last.P99MS > r.rec.SLOMS:
		return r.level, "p99 above SLO"
	case r.level >= r.cfg.Max:
		return r.level, "max threads"
	}
	if last.TPS > r.best*plateauGain {
		r.flat = 0
	} else {
		r.flat++
	}
	r.best = max(r.best, last.TPS)
	if r.flat >= plateauSteps {
		return r.level, "throughput stopped rising"
	}
	r.level = min(r.level+r.cfg.Add, r.cfg.Max)
	return r.level, ""
}

func (r *rampState) closeStep(now time.Time) {
	secs := now.Sub(r.stepStart).Seconds()
	step := result.RampStep{Threads: r.level, P95MS: r.hist.PercentileMS(95), P99MS: r.hist.PercentileMS(99), Errors: r.errors}
	if secs > 0 {
		step.TPS = float64(r.txns) / secs
	}
	r.rec.Steps = append(r.rec.Steps, step)
	r.txns, r.errors, r.stepStart = 0, 0, now
	r.hist.Reset()
}

// finish names the saturation point: the highest throughput among the steps that kept p99 within
// the SLO (all steps when there is none). A run cut short before its first step closed records
// the partial step, so there is always one.
func (r *rampState) finish(now time.Time, why string) *result.Ramp {
	if len(r.rec.Steps) == 0 && r.txns > 0 {
		r.closeStep(now)
	}
	r.rec.StoppedBecause = why
	for _, s := range r.rec.Steps {
		if r.cfg.SLO > 0 && s.P99MS > r.rec.SLOMS {
			continue
		}
		if s.TPS > r.rec.SaturationTPS {
			r.rec.SaturationTPS, r.rec.SaturationThreads = s.TPS, s.Threads
		}
	}
	if r.rec.SaturationThreads == 0 && len(r.rec.Steps) > 0 {
		r.rec.SaturationThreads, r.rec.SaturationTPS = r.rec.Steps[0].Threads, r.rec.Steps[0].TPS
	}
	return &r.rec
}
