package pgbenchscript

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/fairbench/fairbench/internal/randgen"
)

// function is one of pgbench's built-in functions.
type function struct {
	minArgs, maxArgs int // maxArgs -1: any number
	eval             func(s *state, args []value) (value, error)
}

func (f function) arity() string {
	switch {
	case f.maxArgs < 0:
		return fmt.Sprintf("at least %d arguments", f.minArgs)
	case f.minArgs == f.maxArgs:
		return fmt.Sprintf("%d arguments", f.minArgs)
	}
	return fmt.Sprintf("%d to %d arguments", f.minArgs, f.maxArgs)
}

// functions are pgbench's (PostgreSQL 17 documentation, "Built-in Functions"), computed as
// pgbench computes them, so a script draws the same distributions here as there.
var functions = map[string]function{
	"abs":                {1, 1, fnAbs},
	"debug":              {1, 1, func(_ *state, a []value) (value, error) { return a[0], nil }},
	"double":             {1, 1, func(_ *state, a []value) (value, error) { f, err := a[0].asDouble(); return doubleOf(f), err }},
	"exp":                {1, 1, math1(math.Exp)},
	"greatest":           {1, -1, func(_ *state, a []value) (value, error) { return extreme(a, 1) }},
	"hash":               {1, 2, hashWith(murmur2)},
	"hash_fnv1a":         {1, 2, hashWith(fnv1a)},
	"hash_murmur2":       {1, 2, hashWith(murmur2)},
	"int":                {1, 1, func(_ *state, a []value) (value, error) { i, err := a[0].asInt(); return intOf(i), err }},
	"least":              {1, -1, func(_ *state, a []value) (value, error) { return extreme(a, -1) }},
	"ln":                 {1, 1, math1(math.Log)},
	"mod":                {2, 2, func(_ *state, a []value) (value, error) { return ints("%", a[0], a[1]) }},
	"permute":            {2, 3, fnPermute},
	"pi":                 {0, 0, func(*state, []value) (value, error) { return doubleOf(math.Pi), nil }},
	"pow":                {2, 2, fnPow},
	"power":              {2, 2, fnPow},
	"random":             {2, 2, fnRandom},
	"random_exponential": {3, 3, randomWith(exponential, "parameter must be greater than 0", func(p float64) bool { return p > 0 })},
	"random_gaussian":    {3, 3, randomWith(gaussian, "parameter must be at least 2.0", func(p float64) bool { return p >= 2 })},
	"random_zipfian":     {3, 3, randomWith(zipfian, "parameter must be in [1.001, 1000]", func(p float64) bool { return p >= 1.001 && p <= 1000 })},
	"sqrt":               {1, 1, math1(math.Sqrt)},
}

func fnAbs(_ *state, a []value) (value, error) {
	if a[0].kind == doubleValue {
		return doubleOf(math.Abs(a[0].f)), nil
	}
	i, err := a[0].asInt()
	if err != nil {
		return value{}, err
	}
	if i == math.MinInt64 {
		return value{}, errOverflow
	}
	return intOf(max(i, -i)), nil
}

func math1(f func(float64) float64) func(*state, []value) (value, error) {
	return func(_ *state, a []value) (value, error) {
		x, err := a[0].asDouble()
		return doubleOf(f(x)), err
	}
}

func fnPow(_ *state, a []value) (value, error) {
	x, err := a[0].asDouble()
	if err != nil {
		return value{}, err
	}
	y, err := a[1].asDouble()
	return doubleOf(math.Pow(x, y)), err
}

// extreme is greatest (sign 1) or least (-1): a double when any argument is one.
func extreme(a []value, sign float64) (value, error) {
	anyDouble := false
	for _, v := range a {
		if err := numeric(v); err != nil {
			return value{}, err
		}
		anyDouble = anyDouble || v.kind == doubleValue
	}
	best := a[0]
	for _, v := range a[1:] {
		x, _ := v.asDouble()
		b, _ := best.asDouble()
		if (x-b)*sign > 0 {
			best = v
		}
	}
	if anyDouble {
		f, _ := best.asDouble()
		return doubleOf(f), nil
	}
	return best, nil
}

// hashWith gives hash(x [, seed]); the seed defaults to :default_seed, as in pgbench.
func hashWith(h func(v int64, seed uint64) int64) func(*state, []value) (value, error) {
	return func(s *state, a []value) (value, error) {
		x, err := a[0].asInt()
		if err != nil {
			return value{}, err
		}
		seed := s.defaultSeed
		if len(a) > 1 {
			si, err := a[1].asInt()
			if err != nil {
				return value{}, err
			}
			seed = uint64(si)
		}
		return intOf(h(x, seed)), nil
	}
}

func fnv1a(v int64, seed uint64) int64 {
	const prime, offset = 0x100000001b3, 0xcbf29ce484222325
	result := uint64(offset) ^ seed
	for range 8 {
		result ^= uint64(v & 0xff)
		result *= prime
		v >>= 8
	}
	return int64(result)
}

func murmur2(v int64, seed uint64) int64 {
	const mul, mulTimes8, rot = 0xc6a4a7935bd1e995, 0x35253c9ade8f4ca8, 47
	result := seed ^ mulTimes8
	k := uint64(v)
	k *= mul
	k ^= k >> rot
	k *= mul
	result ^= k
	result *= mul
	result ^= result >> rot
	result *= mul
	result ^= result >> rot
	return int64(result)
}

// bounds reads random()'s lower and upper bounds as pgbench checks them.
func bounds(a []value) (lo, hi int64, err error) {
	if lo, err = a[0].asInt(); err != nil {
		return 0, 0, err
	}
	if hi, err = a[1].asInt(); err != nil {
		return 0, 0, err
	}
	if hi < lo {
		return 0, 0, fmt.Errorf("empty range given to random: %d > %d", lo, hi)
	}
	if uint64(hi)-uint64(lo) == math.MaxUint64 {
		return 0, 0, errors.New("random range is too large")
	}
	return lo, hi, nil
}

func fnRandom(s *state, a []value) (value, error) {
	lo, hi, err := bounds(a)
	if err != nil {
		return value{}, err
	}
	return intOf(uniform(s.rng, lo, hi)), nil
}

// uniform draws from [lo, hi] without bias (a rejection step for the remainder).
func uniform(r *randgen.Rand, lo, hi int64) int64 {
	n := uint64(hi) - uint64(lo) + 1
	limit := math.MaxUint64 - math.MaxUint64%n
	for {
		if x := r.Uint64(); x < limit {
			return lo + int64(x%n)
		}
	}
}

func randomWith(draw func(r *randgen.Rand, lo, hi int64, p float64) int64, need string, ok func(float64) bool) func(*state, []value) (value, error) {
	return func(s *state, a []value) (value, error) {
		lo, hi, err := bounds(a)
		if err != nil {
			return value{}, err
		}
		p, err := a[2].asDouble()
		if err != nil {
			return value{}, err
		}
		if !ok(p) {
			return value{}, errors.New(need + ", got " + strconv.FormatFloat(p, 'g', -1, 64))
		}
		return intOf(draw(s.rng, lo, hi, p)), nil
	}
}

// exponential is pgbench's getExponentialRand.
func exponential(r *randgen.Rand, lo, hi int64, p float64) int64 {
	cut := math.Exp(-p)
	u := 1 - r.Float64() // (0, 1]
	x := -math.Log(cut+(1-cut)*u) / p
	return lo + int64(float64(hi-lo+1)*x)
}

// gaussian is pgbench's getGaussianRand: Box-Muller, redrawn outside [-p, p).
func gaussian(r *randgen.Rand, lo, hi int64, p float64) int64 {
	var sd float64
	for {
		u1, u2 := 1-r.Float64(), r.Float64()
		sd = math.Sqrt(-2*math.Log(u1)) * math.Sin(2*math.Pi*u2)
		if sd >= -p && sd < p {
			break
		}
	}
	return lo + int64(float64(hi-lo+1)*(sd+p)/(2*p))
}

// zipfian is pgbench's computeIterativeZipfian (Devroye's rejection method), offset to lo.
func zipfian(r *randgen.Rand, lo, hi int64, s float64) int64 {
	n := float64(hi - lo + 1)
	if n <= 1 {
		return lo
	}
	b := math.Pow(2, s-1)
	for {
		u, v := r.Float64(), r.Float64()
		x := math.Floor(math.Pow(u, -1/(s-1)))
		t := math.Pow(1+1/x, s-1)
		if v*x*(t-1)/(b-1) <= t/b && x <= n {
			return lo + int64(x) - 1
		}
	}
}
