package tpcc

import (
	"math"

	"github.com/fairbench/fairbench/internal/randgen"
)

// gen draws TPC-C's random values (clause 4.3.2) from one thread's generator. Every draw is a
// multiply-shift of 32 random bits, not a float conversion: the load draws over a hundred million
// values and the client shares two cores with the server it loads.
type gen struct{ r *randgen.Rand }

// intn is uniform over [lo, hi], both included (the spec's random(x, y)).
func (g gen) intn(lo, hi int) int {
	return lo + int(((g.r.Uint64()>>32)*uint64(hi-lo+1))>>32)
}

// nurand is clause 2.1.6's non-uniform random NURand(A, x, y) with run-time constant c.
func (g gen) nurand(a, c, x, y int) int {
	return ((g.intn(0, a)|g.intn(x, y))+c)%(y-x+1) + x
}

// chance is true with probability pct percent.
func (g gen) chance(pct int) bool { return g.intn(1, 100) <= pct }

// alnum has 64 entries so that 6 random bits pick one character; the spec lets a-strings hold
// any printable characters, and letters and digits need no quoting in COPY text or SQL literals.
const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789xy"

// astr appends an a-string of exactly n random alphanumeric characters.
func (g gen) astr(dst []byte, n int) []byte {
	for n > 0 {
		x := g.r.Uint64()
		for k := 0; k < 10 && n > 0; k++ {
			dst = append(dst, alnum[x&63])
			x >>= 6
			n--
		}
	}
	return dst
}

// astring appends an a-string whose length is uniform in [lo, hi] (clause 4.3.2.2).
func (g gen) astring(dst []byte, lo, hi int) []byte { return g.astr(dst, g.intn(lo, hi)) }

// nstring appends an n-string of exactly n random digits.
func (g gen) nstring(dst []byte, n int) []byte {
	for n > 0 {
		x := g.r.Uint64()
		for k := 0; k < 19 && n > 0; k++ {
			dst = append(dst, byte('0'+x%10))
			x /= 10
			n--
		}
	}
	return dst
}

// data appends I_DATA or S_DATA: an a-string of 26..50 characters where, for 10% of the rows,
// "ORIGINAL" replaces eight characters at a random position (clause 4.3.3.1), which is what
// NewOrder's brand-generic field looks for.
func (g gen) data(dst []byte) []byte {
	start := len(dst)
	dst = g.astring(dst, 26, 50)
	if g.chance(10) {
		pos := start + g.intn(0, len(dst)-start-len(original))
		copy(dst[pos:], original)
	}
	return dst
}

const original = "ORIGINAL"

// zip appends a zip code: four random digits followed by "11111" (clause 4.3.2.7).
func (g gen) zip(dst []byte) []byte { return append(g.nstring(dst, 4), "11111"...) }

// state appends two random upper-case letters.
func (g gen) state(dst []byte) []byte {
	return append(dst, byte('A'+g.intn(0, 25)), byte('A'+g.intn(0, 25)))
}

// exp draws a negative exponential with the given mean, truncated at 10 times the mean as clause
// 5.2.5.4 allows for think times.
func (g gen) exp(mean float64) float64 {
	u := float64(g.r.Uint64()>>11)/(1<<53) + 1.0/(1<<54) // never 0, so the log is finite
	return math.Min(-math.Log(u)*mean, 10*mean)
}

var syllables = [10]string{"BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING"}

// lastName appends C_LAST for a number in 0..999: the syllables of its three digits (clause 4.3.2.3).
func lastName(dst []byte, n int) []byte {
	return append(append(append(dst, syllables[n/100]...), syllables[n/10%10]...), syllables[n%10]...)
}

// The load's constant for C_LAST. Clause 2.1.6.1 lets it be any value in 0..255; fixing it lets a
// run, which may be a different process long after prepare, pick its own constant at the distance
// from it that the clause demands without storing anything in the database.
const cLoad = 157

// runConstants are the C values of NURand for one run (clause 2.1.6): C_LAST differs from cLoad
// by 65..119 but not 96 or 112, so a run's last names hit other customers than the load's order.
type runConstants struct{ cLast, cID, cItem int }

func newRunConstants(g gen) runConstants {
	rc := runConstants{cID: g.intn(0, 1023), cItem: g.intn(0, 8191)}
	for {
		c := g.intn(0, 255)
		d := c - cLoad
		if d < 0 {
			d = -d
		}
		if d >= 65 && d <= 119 && d != 96 && d != 112 {
			rc.cLast = c
			return rc
		}
	}
}

// appendDec writes v / 10^scale as a fixed-point decimal ("-10.00", "0.0450").
func appendDec(dst []byte, v int64, scale int) []byte {
	if v < 0 {
		dst = append(dst, '-')
		v = -v
	}
	p := int64(1)
	for i := 0; i < scale; i++ {
		p *= 10
	}
	dst = appendUint(dst, uint64(v/p))
	if scale == 0 {
		return dst
	}
	dst = append(dst, '.')
	frac := v % p
	for p /= 10; p > 0; p /= 10 {
		dst = append(dst, byte('0'+frac/p))
		frac %= p
	}
	return dst
}

func appendUint(dst []byte, v uint64) []byte {
	var tmp [20]byte
	i := len(tmp)
	for {
		i--
		tmp[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			break
		}
	}
	return append(dst, tmp[i:]...)
}

// parseCents reads a DECIMAL with at most two decimals as returned in text ("-10.00", "7.5", "3")
// as a whole number of hundredths; money is summed in integers so nothing is lost to floats.
func parseCents(s string) int64 {
	neg := false
	if len(s) > 0 && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	var whole, frac int64
	digits := -1
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '.':
			digits = 0
		case c >= '0' && c <= '9':
			if digits < 0 {
				whole = whole*10 + int64(c-'0')
			} else if digits < 2 {
				frac = frac*10 + int64(c-'0')
				digits++
			}
		}
	}
	if digits < 0 {
		digits = 2 // no decimal point: frac is 0
	}
	for ; digits < 2; digits++ {
		frac *= 10
	}
	v := whole*100 + frac
	if neg {
		return -v
	}
	return v
}
