package runspec

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// RampInput is a ramp as the user wrote it, in a suite file or in --ramp: a missing field
// (nil, "") takes its default, a given one must be valid (add: 0 is an error, not "1").
type RampInput struct {
	Add, Max   *int
	Every, SLO string
	// A stage ramp's (Stages): Delay "MIN-MAX" (durations; one duration is a fixed delay), Pool.
	Stages bool
	Delay  string
	Pool   *int
}

const rampFix = "write it like add=2,every=10s,max=64 (suite: {add: 2, every: 10s, max: 64, slo: 100ms})"

// Ramp checks the input and fills its defaults.
func (in RampInput) Ramp(setting string) (*Ramp, error) {
	r := &Ramp{Add: DefaultRampAdd, Every: DefaultRampEvery, Max: DefaultRampMax}
	if in.Add != nil {
		r.Add = *in.Add
		if r.Add < 1 {
			return nil, inputErr(setting+" add", strconv.Itoa(r.Add), "must be at least 1", rampFix)
		}
	}
	if in.Max != nil {
		r.Max = *in.Max
	}
	if r.Max < r.Add || r.Max > MaxThreads {
		return nil, inputErr(setting+" max", strconv.Itoa(r.Max),
			fmt.Sprintf("must be from add (%d) to %d", r.Add, MaxThreads), rampFix)
	}
	var err error
	if in.Every != "" {
		if r.Every, err = ParsePositiveDuration(setting+" every", in.Every); err != nil {
			return nil, err
		}
	}
	if in.SLO != "" {
		if r.SLO, err = ParsePositiveDuration(setting+" slo", in.SLO); err != nil {
			return nil, err
		}
	}
	if in.Stages {
		return r, in.stages(setting, r)
	}
	return r, nil
}

const stagesFix = "write it like add=1,every=30s,max=64,delay=0-40ms with --pool 80 (suite: stages: {add: 1, every: 30s, max: 64, delay: 0-40ms, pool: 80})"

// stages fills a stage ramp's own settings.
func (in RampInput) stages(setting string, r *Ramp) error {
	r.Stages, r.DelayMax, r.Pool = true, DefaultStageDelayMax, DefaultStagePool
	if in.Pool != nil {
		if r.Pool = *in.Pool; r.Pool < 1 || r.Pool > MaxThreads {
			return inputErr(setting+" pool", strconv.Itoa(r.Pool), fmt.Sprintf("must be from 1 to %d connections", MaxThreads), stagesFix)
		}
	}
	if in.Delay == "" {
		return nil
	}
	lo, hi, ranged := strings.Cut(in.Delay, "-")
	if !ranged {
		hi = lo
	}
	var err error
	if r.DelayMin, err = ParseDuration(setting+" delay", withUnit(lo, hi)); err != nil {
		return err
	}
	if r.DelayMax, err = ParseDuration(setting+" delay", hi); err != nil {
		return err
	}
	if r.DelayMax < r.DelayMin || r.DelayMax > time.Minute {
		return inputErr(setting+" delay", in.Delay, "must be MIN-MAX with MIN <= MAX <= 1m", stagesFix)
	}
	return nil
}

// withUnit gives the low end of a range such as 0-40ms the high end's unit when it has none.
func withUnit(lo, hi string) string {
	if _, err := strconv.ParseFloat(lo, 64); err != nil || lo == hi {
		return lo
	}
	return lo + strings.TrimLeft(hi, "0123456789.")
}

// ParseRamp reads --ramp add=N,every=DURATION,max=N and --slo DURATION (slo may be "").
func ParseRamp(v, slo string) (*Ramp, error) {
	return parseRampFlag("--ramp", v, RampInput{SLO: slo}, rampFix)
}

// ParseStages reads --stages add=N,every=DURATION,max=N[,delay=MIN-MAX] and --pool N (nil: the
// default).
func ParseStages(v string, pool *int) (*Ramp, error) {
	return parseRampFlag("--stages", v, RampInput{Stages: true, Pool: pool}, stagesFix)
}

func parseRampFlag(flag, v string, in RampInput, fix string) (*Ramp, error) {
	for _, part := range strings.Split(v, ",") {
		k, val, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return nil, inputErr(flag, v, fmt.Sprintf("%q is not key=value", part), fix)
		}
		switch k {
		case "add", "max":
			n, err := strconv.Atoi(val)
			if err != nil {
				return nil, inputErr(flag+" "+k, val, "not a whole number", fix)
			}
			if k == "add" {
				in.Add = &n
			} else {
				in.Max = &n
			}
		case "every", "delay":
			if val == "" {
				return nil, inputErr(flag+" "+k, val, "empty", fix)
			}
			if k == "every" {
				in.Every = val
			} else if in.Stages {
				in.Delay = val
			} else {
				return nil, inputErr(flag, v, "delay goes with --stages, not --ramp", stagesFix)
			}
		default:
			return nil, inputErr(flag, v, fmt.Sprintf("unknown key %q", k), fix)
		}
	}
	return in.Ramp(flag)
}
