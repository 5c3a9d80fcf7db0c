// Package runspec is the one place where run settings are read and defaulted: client threads
// (a count or a sweep), measured time, warm-up, open-loop rate, ramp, tries per transaction,
// report interval, repeats and sizes. The command line, suite files, compare and the studies all
// parse through it, so `--time 60` and `time: 60` mean the same, and a default changes in one line.
//
// Every parser returns *InputError for a value the user must fix; the command line maps it to
// exit status 2 with errors.As. The package imports nothing of fairbench's, so any package may use it.
package runspec

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Defaults, written once. A setting nobody gives takes these.
const (
	DefaultThreads = 8
	DefaultTime    = 30 * time.Second
	// MinTime is the shortest measured time: --time 1ns ran, measured no transaction and exited 0.
	MinTime               = 100 * time.Millisecond
	DefaultWarmup         = time.Duration(0)
	DefaultReportInterval = time.Second
	DefaultMaxTries       = 10 // attempts per transaction on deadlocks and serialization failures
	DefaultRepeat         = 1
	DefaultRampAdd        = 1
	DefaultRampEvery      = 10 * time.Second
	DefaultRampMax        = 64
	// A stage ramp's defaults are the published ingest/join study's: 0-40 ms before each
	// request, 80 pooled connections.
	DefaultStageDelayMax = 40 * time.Millisecond
	DefaultStagePool     = 80
	// A study's runs are shorter and have fewer clients than a comparison's, because each
	// study runs many phases or steps per engine (fairbench study mvcc|bandwidth).
	DefaultStudyTime    = 20 * time.Second
	DefaultStudyThreads = 4
)

// Bounds. Each is far beyond any sensible run and exists so a typo fails in one line instead of
// exhausting memory (threads) or overflowing a clock (durations).
const (
	// MaxThreads is the most client threads: each is an OS thread with its own connection, and
	// no engine here accepts more than a few thousand connections.
	MaxThreads = 10000
	// MaxDuration bounds every duration setting (a year).
	MaxDuration = 365 * 24 * time.Hour
	// MaxRate is the most arrivals per second an open-loop run may ask for.
	MaxRate = 10_000_000
	// MaxTriesLimit is the most attempts per transaction.
	MaxTriesLimit = 1000
	// MaxRepeat is the most repeats of a suite.
	MaxRepeat = 1000
)

// InputError is a run setting the user must fix: which setting, what was given, what is wrong with
// it and how to write it instead. Its message is one line.
type InputError struct {
	Setting string // as the user wrote it: "--threads", "suite my.yaml: step 2 time"
	Value   string // what was given; "" when the problem is a missing or conflicting setting
	Problem string
	Fix     string
}

func (e *InputError) Error() string {
	var b strings.Builder
	b.WriteString(e.Setting)
	if e.Value != "" {
		fmt.Fprintf(&b, " %q", e.Value)
	}
	b.WriteString(": " + e.Problem)
	if e.Fix != "" {
		b.WriteString("; " + e.Fix)
	}
	return b.String()
}

func inputErr(setting, value, problem, fix string) *InputError {
	return &InputError{Setting: setting, Value: value, Problem: problem, Fix: fix}
}

// Ramp adds clients step by step to the saturation point: it starts with Add clients, adds Add
// more every Every, up to Max, and stops early when a step's p99 exceeds SLO (0 = no SLO).
type Ramp struct {
	Add   int
	Every time.Duration
	Max   int
	SLO   time.Duration
	// Stages (--stages) goes on to Max whatever the throughput, each request after a random
	// DelayMin-DelayMax wait, the clients sharing Pool connections (the ingest/join study's load).
	Stages             bool
	DelayMin, DelayMax time.Duration
	Pool               int
}

// Length is how long a ramp runs when nothing stops it early: every step up to Max, plus one.
func (r Ramp) Length() time.Duration {
	return time.Duration(r.Max/r.Add+1) * r.Every
}

// Spec is a complete set of run settings, every field filled.
type Spec struct {
	Threads        []int // one run per entry: a list is a thread sweep; with a ramp, [Ramp.Max]
	Time           time.Duration
	Warmup         time.Duration
	Rate           float64 // open loop: arrivals per second in total; 0 = closed loop
	Ramp           *Ramp
	MaxTries       int
	ReportInterval time.Duration
	// SLO is a latency objective (p99<=10ms, internal/slo): the step searches for the highest
	// arrival rate that meets it (internal/capacity) instead of running one load; "" for none.
	SLO string
}

// Layer is run settings as one source gives them (a suite, one of its steps, the command line);
// a nil or empty field is "not given here".
type Layer struct {
	Threads        []int
	Time           *time.Duration
	Warmup         *time.Duration
	Rate           *float64
	Ramp           *Ramp
	MaxTries       *int
	ReportInterval *time.Duration
	SLO            *string
}

// Resolve lays the layers over the defaults, later layers winning, and checks the settings
// against each other. A ramp's step runs for the whole ramp unless its own layer or a later one
// gives a time, and a ramp reports at least once per step.
func Resolve(layers ...Layer) (Spec, error) {
	s := Spec{Threads: []int{DefaultThreads}, Time: DefaultTime, Warmup: DefaultWarmup,
		MaxTries: DefaultMaxTries, ReportInterval: DefaultReportInterval}
	timeSinceRamp := false
	for _, l := range layers {
		if l.Ramp != nil {
			r := *l.Ramp
			s.Ramp, timeSinceRamp = &r, false
		}
		if len(l.Threads) > 0 {
			s.Threads = slices.Clone(l.Threads)
		}
		if l.Time != nil {
			s.Time, timeSinceRamp = *l.Time, true
		}
		setIf(&s.Warmup, l.Warmup)
		setIf(&s.Rate, l.Rate)
		setIf(&s.MaxTries, l.MaxTries)
		setIf(&s.ReportInterval, l.ReportInterval)
		setIf(&s.SLO, l.SLO)
	}
	if s.Ramp != nil {
		if !timeSinceRamp {
			s.Time = s.Ramp.Length()
		}
		s.Threads = []int{s.Ramp.Max}
		s.ReportInterval = min(s.ReportInterval, s.Ramp.Every)
	}
	if s.SLO != "" && (s.Rate > 0 || s.Ramp != nil) {
		return s, inputErr("slo", s.SLO, "a capacity search chooses its own arrival rates", "drop rate, ramp or stages from a step with an slo")
	}
	if s.Time < MinTime {
		return s, inputErr("--time", s.Time.String(), fmt.Sprintf("shorter than %s, too short for a transaction to be measured", MinTime),
			"use e.g. 10s or 30s")
	}
	if s.Rate > 0 && s.Rate*s.Time.Seconds() < 1 {
		return s, inputErr("--rate", strconv.FormatFloat(s.Rate, 'g', -1, 64),
			fmt.Sprintf("less than one arrival is expected in %s", s.Time),
			"give at least 1/time arrivals per second, or 0 for a closed loop")
	}
	return s, nil
}

func setIf[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

// Ptr is a helper for building layers: Ptr(5*time.Second).
func Ptr[T any](v T) *T { return &v }

// ParseThreads reads a thread count or a comma-separated sweep such as 1,2,4,8.
func ParseThreads(setting, v string) ([]int, error) {
	const fix = "use a number from 1 to 10000, or a list like 1,2,4,8"
	if strings.TrimSpace(v) == "" {
		return nil, inputErr(setting, v, "no thread count given", fix)
	}
	var out []int
	for _, p := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil {
			return nil, inputErr(setting, v, fmt.Sprintf("%q is not a whole number", strings.TrimSpace(p)), fix)
		}
		out = append(out, n)
	}
	return out, CheckThreads(setting, out)
}

// CheckThreads checks thread counts however they were written (a flag, a YAML number or list).
func CheckThreads(setting string, threads []int) error {
	const fix = "use a number from 1 to 10000, or a list like 1,2,4,8"
	value := joinInts(threads)
	if len(threads) == 0 {
		return inputErr(setting, value, "no thread count given", fix)
	}
	for i, n := range threads {
		switch {
		case n < 1:
			return inputErr(setting, value, "threads must be at least 1", fix)
		case n > MaxThreads:
			return inputErr(setting, value, fmt.Sprintf("%d threads is more than the most fairbench runs (%d)", n, MaxThreads), fix)
		case slices.Contains(threads[:i], n):
			return inputErr(setting, value, fmt.Sprintf("%d is listed twice", n), "list each thread count once")
		}
	}
	return nil
}

func joinInts(ns []int) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, ",")
}

// ParseDuration reads a Go duration (30s, 2m, 1h30m) or, as sysbench does, a bare number of
// seconds (60, 0.5). It accepts zero; callers that need more use ParseTime.
func ParseDuration(setting, v string) (time.Duration, error) {
	const fix = "use e.g. 30s, 5m or 60 (seconds)"
	v = strings.TrimSpace(v)
	var d time.Duration
	if n, err := strconv.ParseFloat(v, 64); err == nil {
		if math.IsNaN(n) || math.IsInf(n, 0) {
			return 0, inputErr(setting, v, "not a duration", fix)
		}
		if n < 0 {
			return 0, inputErr(setting, v, "must not be negative", fix)
		}
		if n > MaxDuration.Seconds() {
			return 0, inputErr(setting, v, "longer than a year", fix)
		}
		d = time.Duration(n * float64(time.Second))
	} else {
		var perr error
		d, perr = time.ParseDuration(v)
		switch {
		case perr != nil:
			return 0, inputErr(setting, v, "not a duration", fix)
		case d < 0:
			return 0, inputErr(setting, v, "must not be negative", fix)
		case d > MaxDuration:
			return 0, inputErr(setting, v, "longer than a year", fix)
		}
	}
	return d, nil
}

// ParsePositiveDuration is ParseDuration for settings where zero means nothing useful (the measured
// time, a report interval, a ramp's step, an SLO).
func ParsePositiveDuration(setting, v string) (time.Duration, error) {
	d, err := ParseDuration(setting, v)
	if err != nil {
		return 0, err
	}
	if d <= 0 {
		return 0, inputErr(setting, v, "must be more than zero", "use e.g. 30s, 5m or 60 (seconds)")
	}
	return d, nil
}

// CheckRate checks an open-loop rate: 0 (closed loop) or a finite positive number of arrivals
// per second up to MaxRate.
func CheckRate(setting string, rate float64) error {
	v := strconv.FormatFloat(rate, 'g', -1, 64)
	const fix = "give arrivals per second, e.g. 500, or 0 for a closed loop"
	switch {
	case math.IsNaN(rate) || math.IsInf(rate, 0):
		return inputErr(setting, v, "not a number of arrivals per second", fix)
	case rate < 0:
		return inputErr(setting, v, "must not be negative", fix)
	case rate > MaxRate:
		return inputErr(setting, v, fmt.Sprintf("more than %d arrivals per second", MaxRate), fix)
	}
	return nil
}

// ParseRate reads an open-loop rate written as text (see CheckRate).
func ParseRate(setting, v string) (float64, error) {
	rate, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil {
		return 0, inputErr(setting, v, "not a number", "give arrivals per second, e.g. 500, or 0 for a closed loop")
	}
	return rate, CheckRate(setting, rate)
}

// CheckMaxTries checks the attempts per transaction.
func CheckMaxTries(setting string, n int) error {
	if n < 1 || n > MaxTriesLimit {
		return inputErr(setting, strconv.Itoa(n), fmt.Sprintf("must be from 1 to %d", MaxTriesLimit), "e.g. 10 (1 = no retries)")
	}
	return nil
}

// ParseBudget reads the time for compare's rounds until decided: a duration such as 10m, or 0
// (or "off") for the repeat count only.
func ParseBudget(setting, v string) (time.Duration, error) {
	if v == "off" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, inputErr(setting, v, "must be a duration from 0 (or off: the repeat count only) up", "e.g. 10m")
	}
	return d, nil
}

// CheckRepeat checks how many times a suite runs.
func CheckRepeat(setting string, n int) error {
	if n < 1 || n > MaxRepeat {
		return inputErr(setting, strconv.Itoa(n), fmt.Sprintf("must be from 1 to %d", MaxRepeat), "e.g. 3")
	}
	return nil
}
