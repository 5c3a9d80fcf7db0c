package pgbenchscript

import (
	"errors"
	"math/bits"
)

// fnPermute is pgbench's permute(i, size [, seed]): a pseudorandom permutation of [0, size),
// so that random_zipfian's hot keys can be scattered over the table rather than packed at its
// start. It is pgbench's algorithm step for step (six rounds of multiply, xor and rotate on the
// low and high halves, then a random offset, from pgbench's own xoroshiro128** seeded by
// splitmix64), so a script permutes keys here as it does under pgbench.
func fnPermute(s *state, a []value) (value, error) {
	i, err := a[0].asInt()
	if err != nil {
		return value{}, err
	}
	size, err := a[1].asInt()
	if err != nil {
		return value{}, err
	}
	if size <= 0 {
		return value{}, errors.New("size must be greater than zero")
	}
	seed := s.defaultSeed
	if len(a) > 2 {
		si, err := a[2].asInt()
		if err != nil {
			return value{}, err
		}
		seed = uint64(si)
	}
	return intOf(permute(i, size, seed)), nil
}

func permute(val, isize int64, seed uint64) int64 {
	if isize < 2 {
		return 0
	}
	var p pgPRNG
	p.seed(seed)
	size := uint64(isize)
	// pgbench takes val modulo size on the unsigned value, negative values included.
	v := uint64(val) % size
	masklen := 63 - bits.LeadingZeros64(size)
	mask := uint64(1)<<masklen - 1
	for range 6 {
		m, r := p.next()&mask|1, p.next()&mask
		if v <= mask {
			v = (v*m ^ r) & mask
			v = (v<<1)&mask | v>>(masklen-1)
		}
		m, r = p.next()&mask|1, p.next()&mask
		if t := size - 1 - v; t <= mask {
			t = (t*m ^ r) & mask
			t = (t<<1)&mask | t>>(masklen-1)
			v = size - 1 - t
		}
		v = (v + p.rangeOf(size-1)) % size
	}
	return int64(v)
}

// pgPRNG is PostgreSQL's pg_prng: xoroshiro128**, seeded through splitmix64.
type pgPRNG struct{ s0, s1 uint64 }

func (p *pgPRNG) seed(seed uint64) {
	p.s0, p.s1 = splitmix64(&seed), splitmix64(&seed)
	if p.s0 == 0 && p.s1 == 0 { // pg_prng_seed_check
		p.s0 = 0x5851F42D4C957F2D
	}
}

func splitmix64(state *uint64) uint64 {
	*state += 0x9E3779B97F4A7C15
	v := *state
	v = (v ^ v>>30) * 0xBF58476D1CE4E5B9
	v = (v ^ v>>27) * 0x94D049BB133111EB
	return v ^ v>>31
}

func (p *pgPRNG) next() uint64 {
	s0 := p.s0
	sx := p.s1 ^ s0
	val := bits.RotateLeft64(s0*5, 7) * 9
	p.s0 = bits.RotateLeft64(s0, 24) ^ sx ^ sx<<16
	p.s1 = bits.RotateLeft64(sx, 37)
	return val
}

// rangeOf is pg_prng_uint64_range(0, max): bitmask rejection.
func (p *pgPRNG) rangeOf(max uint64) uint64 {
	if max == 0 {
		return 0
	}
	shift := bits.LeadingZeros64(max)
	for {
		if v := p.next() >> shift; v <= max {
			return v
		}
	}
}
