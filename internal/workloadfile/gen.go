package workloadfile

import (
	"math"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/fairbench/fairbench/internal/randgen"
)

// Gen makes a column's values when loading, and a parameter's when running. Its kinds:
//
//	sequence: START            row i (from 0) gets START+i: a key
//	uniform: [MIN, MAX]        a whole number, every one alike likely
//	random: [MIN, MAX]         a whole number drawn as --rand-type says (uniform, zipfian, ...)
//	decimal: [MIN, MAX]        a number with the column's scale (2 for a parameter)
//	string: [MINLEN, MAXLEN]   random lowercase letters
//	pattern: "user-####"       # becomes a digit, ? a letter
//	pick: [a, b, c]            one of the values, with weights: [5, 1, 1] if given
//	time: [FROM, TO]           a timestamp (or date) between two dates
//	ref: table.column          a key of another table's sequence column, drawn as --rand-type says
//	next: table.column         (parameters only) a key no row has yet, for INSERTs
type Gen struct {
	Kind     string
	Min, Max int64
	// DecMin, DecMax are a decimal generator's bounds, which may have a fraction (decimal(4,4)
	// holds 0.0100 to 0.2000, say); drawn in steps of the column's scale.
	DecMin, DecMax float64
	Scale          int
	// Every and Cycle lay a sequence out as one column of a composite key: START + (row / Every)
	// % Cycle, so that (w, d, c) keys are 1..W x 1..D x 1..C as TPC-C loads them. Cycle 0: none.
	Every, Cycle int64
	Values       []string
	cum          []int64 // cumulative weights of Values
	Pattern      string
	Ref          string // table.column of ref and next
	From, To     time.Time
	date         bool          // time: written as a date
	next         *atomic.Int64 // next's counter, shared by every worker
	at           pos
}

var genKinds = []string{"sequence", "uniform", "random", "decimal", "string", "pattern", "pick", "time", "ref", "next"}

func (p *parser) gen(n *yaml.Node, what string) *Gen {
	g := &Gen{at: pos{n.Line, n.Column}}
	m := p.fields(n, what+"'s generator", append(genKinds, "weights", "every", "cycle")...)
	if m == nil {
		return g
	}
	for _, k := range genKinds {
		if v, ok := m[k]; ok {
			if g.Kind != "" {
				p.fail(v, "%s has two generators, %s and %s: keep one", what, g.Kind, k)
				return g
			}
			g.Kind = k
			p.genArgs(g, v, what)
		}
	}
	if g.Kind == "" {
		p.fail(n, "%s names no generator: use one of %s", what, strings.Join(genKinds, ", "))
	}
	p.cycle(g, m, what)
	if w := m["weights"]; w != nil {
		p.weights(g, w, what)
	} else if g.Kind == "pick" {
		for i := range g.Values {
			g.cum = append(g.cum, int64(i+1))
		}
	}
	return g
}

func (p *parser) genArgs(g *Gen, v *yaml.Node, what string) {
	switch g.Kind {
	case "sequence":
		g.Min = p.int(v, what+"'s sequence start", math.MinInt32, 1<<50)
	case "uniform", "random", "string":
		g.Min, g.Max = p.pair(v, what+"'s "+g.Kind)
		if g.Kind == "string" && (g.Min < 0 || g.Max > 10000) {
			p.fail(v, "%s: string lengths must be from 0 to 10000", what)
		}
		if g.Kind != "string" && g.Max-g.Min >= 1<<32 {
			p.fail(v, "%s: a range of more than 2^32 values is not drawn evenly; narrow it", what)
		}
	case "decimal":
		g.DecMin, g.DecMax = p.floatPair(v, what+"'s decimal")
		g.Min, g.Max = int64(math.Floor(g.DecMin)), int64(math.Ceil(g.DecMax))
		g.Scale = 2
	case "pattern":
		g.Pattern = p.str(v, what+"'s pattern")
	case "pick":
		g.Values = p.names(v, what+"'s pick")
		if len(g.Values) == 0 {
			p.fail(v, "%s: pick needs at least one value", what)
		}
	case "time":
		p.timeRange(g, v, what)
	case "ref", "next":
		g.Ref = p.str(v, what+"'s "+g.Kind)
		if t, c, ok := strings.Cut(g.Ref, "."); !ok || t == "" || c == "" {
			p.fail(v, "%s: %s names a table's column as table.column, e.g. customers.id", what, g.Kind)
		}
	}
}

// pair reads [MIN, MAX] with MIN <= MAX.
func (p *parser) pair(v *yaml.Node, what string) (int64, int64) {
	items := p.list(v, what)
	if len(items) != 2 {
		p.fail(v, "%s takes [MIN, MAX]", what)
		return 0, 0
	}
	lo, hi := p.int(items[0], what+"'s MIN", math.MinInt64/4, math.MaxInt64/4), p.int(items[1], what+"'s MAX", math.MinInt64/4, math.MaxInt64/4)
	if lo > hi {
		p.fail(v, "%s: MIN %d is above MAX %d", what, lo, hi)
	}
	return lo, hi
}

// cycle reads a sequence's every: and cycle:, which only a sequence takes.
func (p *parser) cycle(g *Gen, m map[string]*yaml.Node, what string) {
	every, cycle := m["every"], m["cycle"]
	if every == nil && cycle == nil {
		return
	}
	if g.Kind != "sequence" || cycle == nil {
		at := every
		if at == nil {
			at = cycle
		}
		p.fail(at, "%s: every and cycle go with sequence, cycle always: {sequence: 1, every: 3000, cycle: 10}", what)
		return
	}
	g.Cycle = p.int(cycle, what+"'s cycle", 1, 1<<40)
	g.Every = 1
	if every != nil {
		g.Every = p.int(every, what+"'s every", 1, 1<<40)
	}
}

func (p *parser) floatPair(v *yaml.Node, what string) (float64, float64) {
	items := p.list(v, what)
	if len(items) != 2 {
		p.fail(v, "%s takes [MIN, MAX]", what)
		return 0, 0
	}
	lo, hi := p.float(items[0], what+"'s MIN", -1e15, 1e15), p.float(items[1], what+"'s MAX", -1e15, 1e15)
	if lo > hi {
		p.fail(v, "%s: MIN %g is above MAX %g", what, lo, hi)
	}
	return lo, hi
}

func (p *parser) weights(g *Gen, w *yaml.Node, what string) {
	items := p.list(w, what+"'s weights")
	if g.Kind != "pick" || len(items) != len(g.Values) {
		p.fail(w, "%s: weights go with pick, one per value", what)
		return
	}
	var sum int64
	for _, it := range items {
		sum += p.int(it, what+"'s weight", 0, 1000000)
		g.cum = append(g.cum, sum)
	}
	if sum == 0 {
		p.fail(w, "%s: the weights add up to 0: give at least one value a weight", what)
	}
}

func (p *parser) timeRange(g *Gen, v *yaml.Node, what string) {
	items := p.names(v, what+"'s time")
	if len(items) != 2 {
		p.fail(v, "%s: time takes [FROM, TO], e.g. [2024-01-01, 2024-12-31]", what)
		return
	}
	var ts [2]time.Time
	for i, s := range items {
		t, err := time.Parse("2006-01-02 15:04:05", s)
		if err != nil {
			t, err = time.Parse("2006-01-02", s)
		}
		if err != nil {
			p.fail(v, "%s: %q is not a date: write 2024-01-31 or 2024-01-31 12:00:00", what, s)
			return
		}
		ts[i] = t
	}
	if !ts[0].Before(ts[1]) {
		p.fail(v, "%s: FROM must be before TO", what)
	}
	g.From, g.To = ts[0], ts[1]
}

// Append writes row's value in COPY's text format (LOAD DATA reads the same): special
// characters escaped, NULL as \N.
func (g *Gen) Append(b []byte, rng *randgen.Rand, row int64) []byte {
	switch g.Kind {
	case "sequence":
		if g.Cycle > 0 {
			return strconv.AppendInt(b, g.Min+(row/g.Every)%g.Cycle, 10)
		}
		return strconv.AppendInt(b, g.Min+row, 10)
	case "uniform", "ref":
		return strconv.AppendInt(b, g.uniform(rng), 10)
	case "random":
		return strconv.AppendInt(b, g.random(rng), 10)
	case "decimal":
		return g.appendDecimal(b, rng)
	case "string":
		n := int(g.Min) + int(rng.Uniform(0, uint32(g.Max-g.Min)))
		for range n {
			b = append(b, byte('a'+rng.Uniform(0, 25)))
		}
		return b
	case "pattern":
		return g.appendPattern(b, rng)
	case "pick":
		return appendEscaped(b, g.pick(rng))
	case "time":
		return g.appendTime(b, rng)
	}
	return b
}

// Value is a parameter's value: int64 for whole numbers, string for the rest.
func (g *Gen) Value(rng *randgen.Rand) any {
	switch g.Kind {
	case "uniform":
		return g.uniform(rng)
	case "random", "ref":
		return g.random(rng)
	case "next":
		return g.next.Add(1)
	case "sequence":
		return g.Min
	case "pick":
		return g.pick(rng)
	}
	return string(g.Append(nil, rng, 0))
}

func (g *Gen) uniform(rng *randgen.Rand) int64 {
	return g.Min + int64(rng.Uniform(0, uint32(g.Max-g.Min)))
}

// random draws as --rand-type says (sysbench's rand.default).
func (g *Gen) random(rng *randgen.Rand) int64 {
	return g.Min + int64(rng.Default(1, uint32(g.Max-g.Min+1))) - 1
}

func (g *Gen) pick(rng *randgen.Rand) string {
	x := int64(rng.Float64() * float64(g.cum[len(g.cum)-1]))
	for i, c := range g.cum {
		if x < c {
			return g.Values[i]
		}
	}
	return g.Values[len(g.Values)-1]
}

func (g *Gen) appendDecimal(b []byte, rng *randgen.Rand) []byte {
	unit := int64(math.Pow10(g.Scale))
	lo, hi := int64(math.Ceil(g.DecMin*float64(unit)-1e-9)), int64(math.Floor(g.DecMax*float64(unit)+1e-9))
	v := lo + int64(rng.Float64()*float64(hi-lo+1))
	v = min(v, hi)
	if v < 0 {
		b = append(b, '-')
		v = -v
	}
	b = strconv.AppendInt(b, v/unit, 10)
	if g.Scale > 0 {
		frac := strconv.FormatInt(v%unit, 10)
		b = append(b, '.')
		b = append(b, strings.Repeat("0", g.Scale-len(frac))...)
		b = append(b, frac...)
	}
	return b
}

func (g *Gen) appendPattern(b []byte, rng *randgen.Rand) []byte {
	for i := 0; i < len(g.Pattern); i++ {
		switch c := g.Pattern[i]; c {
		case '#':
			b = append(b, byte('0'+rng.Uniform(0, 9)))
		case '?':
			b = append(b, byte('a'+rng.Uniform(0, 25)))
		default:
			b = appendEscaped(b, string(c))
		}
	}
	return b
}

func (g *Gen) appendTime(b []byte, rng *randgen.Rand) []byte {
	span := g.To.Sub(g.From)
	t := g.From.Add(time.Duration(rng.Float64() * float64(span)))
	if g.date {
		return t.AppendFormat(b, "2006-01-02")
	}
	return t.AppendFormat(b, "2006-01-02 15:04:05")
}

// appendEscaped writes s as COPY's text format and LOAD DATA's default FIELDS ESCAPED BY '\\'
// read it: backslash, tab, newline and carriage return escaped.
func appendEscaped(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			b = append(b, '\\', '\\')
		case '\t':
			b = append(b, '\\', 't')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		default:
			b = append(b, c)
		}
	}
	return b
}
