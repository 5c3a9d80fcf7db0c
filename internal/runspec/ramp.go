package runspec

import (
	"fmt"
	"strconv"
	"strings"
)

// RampInput is a ramp as the user wrote it, in a suite file or in --ramp: a missing field
// (nil, "") takes its default, a given one must be valid (add: 0 is an error, not "1").
type RampInput struct {
	Add, Max   *int
	Every, SLO string
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
	return r, nil
}

// ParseRamp reads --ramp add=N,every=DURATION,max=N and --slo DURATION (slo may be "").
func ParseRamp(v, slo string) (*Ramp, error) {
	in := RampInput{SLO: slo}
	for _, part := range strings.Split(v, ",") {
		k, val, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return nil, inputErr("--ramp", v, fmt.Sprintf("%q is not key=value", part), rampFix)
		}
		switch k {
		case "add", "max":
			n, err := strconv.Atoi(val)
			if err != nil {
				return nil, inputErr("--ramp "+k, val, "not a whole number", rampFix)
			}
			if k == "add" {
				in.Add = &n
			} else {
				in.Max = &n
			}
		case "every":
			if val == "" {
				return nil, inputErr("--ramp every", val, "empty", rampFix)
			}
			in.Every = val
		default:
			return nil, inputErr("--ramp", v, fmt.Sprintf("unknown key %q", k), rampFix)
		}
	}
	return in.Ramp("--ramp")
}
