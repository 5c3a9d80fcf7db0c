package runner

import (
	"time"

	"github.com/fairbench/fairbench/internal/histogram"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/runspec"
)

// Ramp adds clients step by step to find where an engine saturates, as in the published
// "add a client every N seconds" studies.
type Ramp struct {
	Add   int           // clients added per step (and the number the ramp starts with)
	Every time.Duration // length of a step
	Max   int           // most clients
	SLO   time.Duration // stop when a step's p99 exceeds it; 0 = no SLO
	// Stages makes it the published ingest/join study's load: clients are added up to Max
	// whatever the throughput does (the saturation point is found afterwards, not stopped at),
	// each request waits a random DelayMin-DelayMax first (not counted as latency), and the
	// clients share Pool connections (a client takes a free one per transaction; its wait for
	// one is counted, as the study's client pool wait was). See stages.go.
	Stages             bool
	DelayMin, DelayMax time.Duration
	Pool               int
}

// RampFrom is the runner's ramp for the run settings' (nil for none).
func RampFrom(r *runspec.Ramp) *Ramp {
	if r == nil {
		return nil
	}
	return &Ramp{Add: r.Add, Every: r.Every, Max: r.Max, SLO: r.SLO,
		Stages: r.Stages, DelayMin: r.DelayMin, DelayMax: r.DelayMax, Pool: r.Pool}
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
	// knee is the step (index) where throughput first stopped following the clients; -1 until then.
	knee int
	rec  result.Ramp
}

func newRampState(cfg Ramp, start time.Time) *rampState {
	r := &rampState{cfg: cfg, level: min(cfg.Add, cfg.Max), stepStart: start, hist: histogram.New(), knee: -1}
	r.rec = result.Ramp{Add: cfg.Add, EveryS: cfg.Every.Seconds(), Max: cfg.Max, SLOMS: ms(cfg.SLO)}
	if cfg.Stages {
		r.rec.Stages, r.rec.Pool = true, stageConnections(&cfg)
		r.rec.DelayMinMS, r.rec.DelayMaxMS = ms(cfg.DelayMin), ms(cfg.DelayMax)
	}
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
		if !r.cfg.Stages {
			return r.level, "throughput stopped rising"
		}
		// A stage ramp goes on to Max, as the study's did: what comes after the knee (p99
		// bending, throughput falling) is part of what it shows.
		if r.knee < 0 {
			r.knee = len(r.rec.Steps) - 1 - plateauSteps
		}
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
	if r.knee >= 0 {
		// A stage ramp's saturation point: the step before throughput stopped following the
		// clients, the last one whose added clients still added throughput.
		s := r.rec.Steps[r.knee]
		r.rec.SaturationThreads, r.rec.SaturationTPS = s.Threads, s.TPS
		return &r.rec
	}
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

// ms is d in milliseconds, with fractions.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
