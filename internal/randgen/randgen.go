// Package randgen reproduces sysbench 1.0.20's random numbers: the xoroshiro128+ generator and the
// uniform, gaussian, special, pareto and zipfian distributions with the same parameters and the
// same arithmetic, so a workload hits the same rows with the same skew as sysbench does.
package randgen

import (
	"fmt"
	"math"
	"strings"
)

// Names of the distributions accepted by --rand-type.
var Types = []string{"uniform", "gaussian", "special", "pareto", "zipfian"}

// Config holds a distribution and its sysbench parameters (--rand-spec-iter and friends), with the
// constants sysbench precomputes at start-up.
type Config struct {
	Type     string
	SpecIter int     // --rand-spec-iter, default 12
	SpecPct  int     // --rand-spec-pct, default 1
	SpecRes  int     // --rand-spec-res, default 75
	ParetoH  float64 // --rand-pareto-h, default 0.2
	ZipfExp  float64 // --rand-zipfian-exp, default 0.8

	dist        int
	iterMult    float64
	pctMult     float64
	pct2Mult    float64
	resMult     float64
	paretoPower float64
	zipfS       float64
	zipfHIntX1  float64
}

const (
	distUniform = iota
	distGaussian
	distSpecial
	distPareto
	distZipfian
)

// DefaultConfig is sysbench's defaults with the given distribution.
func DefaultConfig(typ string) Config {
	return Config{Type: typ, SpecIter: 12, SpecPct: 1, SpecRes: 75, ParetoH: 0.2, ZipfExp: 0.8}
}

// Init validates the parameters and precomputes constants; call it once before New.
func (c *Config) Init() error {
	switch c.Type {
	case "uniform":
		c.dist = distUniform
	case "gaussian":
		c.dist = distGaussian
	case "special":
		c.dist = distSpecial
	case "pareto":
		c.dist = distPareto
	case "zipfian":
		c.dist = distZipfian
	default:
		return fmt.Errorf("unknown --rand-type %q: use one of %s", c.Type, strings.Join(Types, ", "))
	}
	if c.SpecIter <= 0 {
		return fmt.Errorf("--rand-spec-iter must be at least 1, got %d", c.SpecIter)
	}
	if c.SpecPct < 0 || c.SpecPct > 100 || c.SpecRes < 0 || c.SpecRes >= 100 {
		return fmt.Errorf("--rand-spec-pct must be 0..100 and --rand-spec-res 0..99, got %d and %d", c.SpecPct, c.SpecRes)
	}
	if c.ParetoH <= 0 || c.ParetoH >= 1 {
		return fmt.Errorf("--rand-pareto-h must be between 0 and 1, got %g", c.ParetoH)
	}
	if c.ZipfExp < 0 {
		return fmt.Errorf("--rand-zipfian-exp must be >= 0, got %g", c.ZipfExp)
	}
	c.iterMult = 1.0 / float64(c.SpecIter)
	c.pctMult = float64(c.SpecPct) / 100.0
	c.pct2Mult = float64(c.SpecPct) / 200.0
	c.resMult = 100.0 / (100.0 - float64(c.SpecRes))
	c.paretoPower = math.Log(c.ParetoH) / math.Log(1.0-c.ParetoH)
	c.zipfS = 2 - hIntegralInverse(hIntegral(2.5, c.ZipfExp)-h(2, c.ZipfExp), c.ZipfExp)
	c.zipfHIntX1 = hIntegral(1.5, c.ZipfExp) - 1
	return nil
}

// Rand is one thread's generator; it is not safe for concurrent use, by design: each runner
// thread owns one, so drawing a number takes no lock.
type Rand struct {
	s0, s1 uint64
	cfg    *Config
}

// New seeds a generator. Distinct seeds give independent streams (they are spread by splitmix64).
func (c *Config) New(seed uint64) *Rand {
	r := &Rand{cfg: c}
	x := seed
	r.s0 = splitmix64(&x)
	r.s1 = splitmix64(&x)
	if r.s0 == 0 && r.s1 == 0 {
		r.s1 = 1
	}
	return r
}

func splitmix64(x *uint64) uint64 {
	*x += 0x9e3779b97f4a7c15
	z := *x
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Uint64 is xoroshiro128+, sysbench's generator.
func (r *Rand) Uint64() uint64 {
	s0, s1 := r.s0, r.s1
	result := s0 + s1
	s1 ^= s0
	r.s0 = (s0<<24 | s0>>40) ^ s1 ^ (s1 << 16)
	r.s1 = s1<<37 | s1>>27
	return result
}

// Float64 is uniform in [0, 1), built as sysbench builds it from the top 53 bits.
func (r *Rand) Float64() float64 {
	return float64(r.Uint64()>>11) * (1.0 / (1 << 53))
}

// Uniform is sysbench.rand.uniform(a, b): inclusive on both ends.
func (r *Rand) Uniform(a, b uint32) uint32 {
	return a + uint32(r.Float64()*float64(b-a+1))
}

// Default is sysbench.rand.default(a, b): the distribution chosen by --rand-type.
func (r *Rand) Default(a, b uint32) uint32 {
	switch r.cfg.dist {
	case distGaussian:
		return r.gaussian(a, b)
	case distSpecial:
		return r.special(a, b)
	case distPareto:
		return a + uint32(float64(b-a+1)*math.Pow(r.Float64(), r.cfg.paretoPower))
	case distZipfian:
		return a + r.zipfian(b-a+1) - 1
	default:
		return r.Uniform(a, b)
	}
}

func (r *Rand) gaussian(a, b uint32) uint32 {
	t := float64(b - a + 1)
	sum := 0.0
	for i := 0; i < r.cfg.SpecIter; i++ {
		sum += r.Float64() * t
	}
	return a + uint32(sum*r.cfg.iterMult)
}

// special is sysbench's default distribution in 1.0.20: SpecRes percent of values fall uniformly
// in a hot band of SpecPct percent of the range around its centre; the rest are gaussian.
func (r *Rand) special(a, b uint32) uint32 {
	c := r.cfg
	t := float64(b - a)
	rangeSize := t * c.resMult
	rnd := r.Float64()
	res := rnd * rangeSize
	if res < t {
		sum := 0.0
		for i := 0; i < c.SpecIter; i++ {
			sum += r.Float64()
		}
		return a + uint32(sum*t*c.iterMult)
	}
	d := t * c.pctMult
	res = rnd * (d + 1)
	res += t/2 - t*c.pct2Mult
	return a + uint32(res)
}

// zipfian samples 1..n by rejection-inversion (Hörmann and Derflinger), as sysbench does.
func (r *Rand) zipfian(n uint32) uint32 {
	e := r.cfg.ZipfExp
	hIntN := hIntegral(float64(n)+0.5, e)
	for {
		u := hIntN + r.Float64()*(r.cfg.zipfHIntX1-hIntN)
		x := hIntegralInverse(u, e)
		k := uint32(x + 0.5)
		if k < 1 {
			k = 1
		} else if k > n {
			k = n
		}
		if float64(k)-x <= r.cfg.zipfS || u >= hIntegral(float64(k)+0.5, e)-h(float64(k), e) {
			return k
		}
	}
}

func hIntegral(x, e float64) float64 {
	logX := math.Log(x)
	return helper2((1-e)*logX) * logX
}

func h(x, e float64) float64 { return math.Exp(-e * math.Log(x)) }

func hIntegralInverse(x, e float64) float64 {
	t := x * (1 - e)
	if t < -1 {
		t = -1
	}
	return math.Exp(helper1(t) * x)
}

func helper1(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Log1p(x) / x
	}
	return 1 - x*(0.5-x*(1.0/3.0-0.25*x))
}

func helper2(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Expm1(x) / x
	}
	return 1 + x*0.5*(1+x*(1.0/3.0)*(1+0.25*x))
}

// FillString writes sysbench.rand.string(template) into dst (len(dst) == len(template)):
// '#' becomes a random digit, '@' a random lower-case letter, anything else is copied.
func (r *Rand) FillString(dst []byte, template string) {
	for i := 0; i < len(template); i++ {
		switch template[i] {
		case '#':
			dst[i] = byte(r.Uniform('0', '9'))
		case '@':
			dst[i] = byte(r.Uniform('a', 'z'))
		default:
			dst[i] = template[i]
		}
	}
}
