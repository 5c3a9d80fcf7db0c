package pgbenchscript

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
)

// value is what a pgbench expression evaluates to: an integer, a double, a boolean or NULL, as
// in pgbench's PgBenchValue.
type value struct {
	kind valueKind
	i    int64
	f    float64
	b    bool
	s    string
}

type valueKind int

const (
	nullValue valueKind = iota
	intValue
	doubleValue
	boolValue
	// stringValue is text from a query (\gset): substituted as it is, read as a number when an
	// expression uses it, as pgbench does.
	stringValue
)

func intOf(i int64) value      { return value{kind: intValue, i: i} }
func doubleOf(f float64) value { return value{kind: doubleValue, f: f} }
func boolOf(b bool) value      { return value{kind: boolValue, b: b} }

// number reads a string value as pgbench reads a variable's text: an integer, else a double.
func (v value) number() value {
	if v.kind != stringValue {
		return v
	}
	t := strings.TrimSpace(v.s)
	if i, err := strconv.ParseInt(t, 10, 64); err == nil {
		return intOf(i)
	}
	if f, err := strconv.ParseFloat(t, 64); err == nil {
		return doubleOf(f)
	}
	return v
}

// asInt converts as pgbench's coerceToInt does: a double is truncated toward zero and must fit.
func (v value) asInt() (int64, error) {
	v = v.number()
	switch v.kind {
	case intValue:
		return v.i, nil
	case doubleValue:
		f := math.Trunc(v.f)
		if math.IsNaN(f) || f < math.MinInt64 || f >= math.MaxInt64 {
			return 0, fmt.Errorf("double %g is out of the integer range", v.f)
		}
		return int64(f), nil
	}
	return 0, fmt.Errorf("%s is not a number", v)
}

func (v value) asDouble() (float64, error) {
	v = v.number()
	switch v.kind {
	case intValue:
		return float64(v.i), nil
	case doubleValue:
		return v.f, nil
	}
	return 0, fmt.Errorf("%s is not a number", v)
}

// truthy is pgbench's coerceToBool: a boolean, or a number other than zero; NULL is false.
func (v value) truthy() (bool, error) {
	v = v.number()
	switch v.kind {
	case boolValue:
		return v.b, nil
	case intValue:
		return v.i != 0, nil
	case doubleValue:
		return v.f != 0, nil
	case stringValue:
		return false, fmt.Errorf("%q is not a boolean", v.s)
	}
	return false, nil
}

// param is the value as a statement parameter: NULL as NULL, a boolean as 1 or 0, which every
// engine reads as a boolean and as a number.
func (v value) param() any {
	switch v.kind {
	case intValue:
		return v.i
	case doubleValue:
		return v.f
	case boolValue:
		if v.b {
			return int64(1)
		}
		return int64(0)
	case stringValue:
		return v.s
	}
	return nil
}

// String is the value as pgbench substitutes it into SQL text.
func (v value) String() string {
	switch v.kind {
	case intValue:
		return strconv.FormatInt(v.i, 10)
	case doubleValue:
		return strconv.FormatFloat(v.f, 'g', -1, 64)
	case boolValue:
		return strconv.FormatBool(v.b)
	case stringValue:
		return v.s
	}
	return "NULL"
}

// expr is a parsed pgbench expression.
type expr interface {
	eval(s *state) (value, error)
}

type (
	literal  struct{ v value }
	variable struct{ name string }
	unary    struct {
		op string
		x  expr
	}
	binary struct {
		op   string
		x, y expr
	}
	call struct {
		name string
		args []expr
		fn   function
	}
	caseExpr struct {
		whens, thens []expr
		els          expr // nil: NULL
	}
)

func (e literal) eval(*state) (value, error) { return e.v, nil }

func (e variable) eval(s *state) (value, error) {
	v, ok := s.vars[e.name]
	if !ok {
		return value{}, fmt.Errorf("undefined variable :%s", e.name)
	}
	return v.number(), nil
}

func (e caseExpr) eval(s *state) (value, error) {
	for i, w := range e.whens {
		c, err := w.eval(s)
		if err != nil {
			return value{}, err
		}
		if ok, err := c.truthy(); err != nil || ok {
			if err != nil {
				return value{}, err
			}
			return e.thens[i].eval(s)
		}
	}
	if e.els == nil {
		return value{}, nil
	}
	return e.els.eval(s)
}

func (e call) eval(s *state) (value, error) {
	args := make([]value, len(e.args))
	for i, a := range e.args {
		v, err := a.eval(s)
		if err != nil {
			return value{}, err
		}
		args[i] = v
	}
	v, err := e.fn.eval(s, args)
	if err != nil {
		return value{}, fmt.Errorf("%s(): %w", e.name, err)
	}
	return v, nil
}

// exprParser reads one pgbench expression (pgbench's exprparse.y) by precedence climbing.
type exprParser struct {
	toks  []token
	pos   int
	depth int // of parse calls under way: every nesting (parentheses, a unary operator, a function's arguments) adds one
}

// An expression's limits. pgbench's own are its parser stack's; here a few thousand nested
// minus signs would take gigabytes and a deep recursion at every evaluation, on every thread.
// Real scripts nest a handful of levels and hold tens of tokens.
const (
	maxExprDepth  = 64
	maxExprTokens = 10000
)

type token struct {
	kind string // "num", "ident", "var", "op", "(", ")", ",", "eof"
	text string
}

// parseExpr parses the whole of text as one expression.
func parseExpr(text string) (expr, error) {
	toks, err := lex(text)
	if err != nil {
		return nil, err
	}
	p := &exprParser{toks: toks}
	e, err := p.parse(0)
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != "eof" {
		return nil, fmt.Errorf("unexpected %q after the expression", t.text)
	}
	return e, nil
}

func lex(text string) ([]token, error) {
	var out []token
	rs := []rune(text)
	for i := 0; i < len(rs); {
		if len(out) > maxExprTokens {
			return nil, fmt.Errorf("the expression has more than %d tokens, the most fairbench reads: split it over several \\set lines", maxExprTokens)
		}
		r := rs[i]
		switch {
		case unicode.IsSpace(r):
			i++
		case unicode.IsDigit(r) || (r == '.' && i+1 < len(rs) && unicode.IsDigit(rs[i+1])):
			j := i
			for j < len(rs) && (unicode.IsDigit(rs[j]) || rs[j] == '.' || rs[j] == 'e' || rs[j] == 'E' ||
				((rs[j] == '+' || rs[j] == '-') && j > i && (rs[j-1] == 'e' || rs[j-1] == 'E'))) {
				j++
			}
			out = append(out, token{"num", string(rs[i:j])})
			i = j
		case r == ':' && i+1 < len(rs) && isIdent(rs[i+1]):
			j := i + 1
			for j < len(rs) && isIdent(rs[j]) {
				j++
			}
			out = append(out, token{"var", string(rs[i+1 : j])})
			i = j
		case isIdent(r):
			j := i
			for j < len(rs) && isIdent(rs[j]) {
				j++
			}
			out = append(out, token{"ident", strings.ToLower(string(rs[i:j]))})
			i = j
		case r == '(' || r == ')' || r == ',':
			out = append(out, token{string(r), string(r)})
			i++
		default:
			op := string(r)
			if i+1 < len(rs) {
				if two := string(rs[i : i+2]); two == "<=" || two == ">=" || two == "<>" || two == "!=" || two == "<<" || two == ">>" {
					op = two
				}
			}
			if !strings.Contains("+-*/%<>=&|#~", op[:1]) && op != "!=" {
				return nil, fmt.Errorf("unexpected character %q", r)
			}
			out = append(out, token{"op", op})
			i += len(op)
		}
	}
	return append(out, token{"eof", "end of the expression"}), nil
}

func isIdent(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

func (p *exprParser) peek() token { return p.toks[p.pos] }
func (p *exprParser) next() token {
	t := p.toks[p.pos]
	if t.kind != "eof" {
		p.pos++
	}
	return t
}

// Binding powers, lowest first, as pgbench's grammar orders them.
const (
	precOr = iota + 1
	precAnd
	precNot
	precIs
	precCompare
	precBits
	precAdd
	precMul
	precUnary
)

// infix gives the binding power of the operator at t, 0 when t is none.
func infix(t token) int {
	switch {
	case t.kind == "ident" && t.text == "or":
		return precOr
	case t.kind == "ident" && t.text == "and":
		return precAnd
	case t.kind == "ident" && (t.text == "is" || t.text == "isnull" || t.text == "notnull"):
		return precIs
	case t.kind != "op":
		return 0
	}
	switch t.text {
	case "=", "<>", "!=", "<", "<=", ">", ">=":
		return precCompare
	case "|", "#", "&", "<<", ">>":
		return precBits
	case "+", "-":
		return precAdd
	case "*", "/", "%":
		return precMul
	}
	return 0
}

func (p *exprParser) parse(minPrec int) (expr, error) {
	if p.depth++; p.depth > maxExprDepth {
		return nil, fmt.Errorf("the expression nests deeper than %d levels: split it over several \\set lines", maxExprDepth)
	}
	defer func() { p.depth-- }()
	left, err := p.prefix()
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		prec := infix(t)
		if prec == 0 || prec <= minPrec {
			return left, nil
		}
		p.next()
		if prec == precIs {
			if left, err = p.isNull(t, left); err != nil {
				return nil, err
			}
			continue
		}
		right, err := p.parse(prec)
		if err != nil {
			return nil, err
		}
		left = binary{op: t.text, x: left, y: right}
	}
}

// isNull reads the rest of "x IS [NOT] NULL" (or TRUE/FALSE), "x ISNULL", "x NOTNULL".
func (p *exprParser) isNull(t token, x expr) (expr, error) {
	switch t.text {
	case "isnull":
		return unary{op: "isnull", x: x}, nil
	case "notnull":
		return unary{op: "notnull", x: x}, nil
	}
	not := false
	if n := p.peek(); n.kind == "ident" && n.text == "not" {
		p.next()
		not = true
	}
	w := p.next()
	if w.kind != "ident" || (w.text != "null" && w.text != "true" && w.text != "false") {
		return nil, fmt.Errorf("expected NULL, TRUE or FALSE after IS, got %q", w.text)
	}
	var e expr = binary{op: "is", x: x, y: literal{map[string]value{"null": {}, "true": boolOf(true), "false": boolOf(false)}[w.text]}}
	if not {
		e = unary{op: "not", x: e}
	}
	return e, nil
}

func (p *exprParser) prefix() (expr, error) {
	t := p.next()
	switch t.kind {
	case "num":
		return parseNumber(t.text)
	case "var":
		return variable{t.text}, nil
	case "(":
		e, err := p.parse(0)
		if err != nil {
			return nil, err
		}
		if c := p.next(); c.kind != ")" {
			return nil, fmt.Errorf("expected ) but found %q", c.text)
		}
		return e, nil
	case "op":
		if t.text == "-" || t.text == "+" || t.text == "~" {
			x, err := p.parse(precUnary - 1)
			if err != nil {
				return nil, err
			}
			return unary{op: t.text, x: x}, nil
		}
	case "ident":
		return p.word(t.text)
	}
	return nil, fmt.Errorf("unexpected %q", t.text)
}

// word reads what starts with a keyword: a constant, NOT, CASE, or a function call.
func (p *exprParser) word(w string) (expr, error) {
	switch w {
	case "true", "false":
		return literal{boolOf(w == "true")}, nil
	case "null":
		return literal{}, nil
	case "not":
		x, err := p.parse(precNot - 1)
		if err != nil {
			return nil, err
		}
		return unary{op: "not", x: x}, nil
	case "case":
		return p.caseExpr()
	}
	fn, ok := functions[w]
	if !ok {
		return nil, fmt.Errorf("unknown function %q", w)
	}
	if t := p.next(); t.kind != "(" {
		return nil, fmt.Errorf("expected ( after %s", w)
	}
	var args []expr
	for p.peek().kind != ")" {
		a, err := p.parse(0)
		if err != nil {
			return nil, err
		}
		args = append(args, a)
		if p.peek().kind == "," {
			p.next()
			continue
		}
		if p.peek().kind != ")" {
			return nil, fmt.Errorf("expected , or ) in the arguments of %s, found %q", w, p.peek().text)
		}
	}
	p.next()
	if len(args) < fn.minArgs || (fn.maxArgs >= 0 && len(args) > fn.maxArgs) {
		return nil, fmt.Errorf("%s() takes %s, got %d", w, fn.arity(), len(args))
	}
	return call{name: w, args: args, fn: fn}, nil
}

func (p *exprParser) caseExpr() (expr, error) {
	var c caseExpr
	for {
		t := p.next()
		if t.kind != "ident" {
			return nil, fmt.Errorf("expected WHEN, ELSE or END in CASE, found %q", t.text)
		}
		switch t.text {
		case "when":
			w, err := p.parse(0)
			if err != nil {
				return nil, err
			}
			if k := p.next(); k.kind != "ident" || k.text != "then" {
				return nil, fmt.Errorf("expected THEN in CASE, found %q", k.text)
			}
			th, err := p.parse(0)
			if err != nil {
				return nil, err
			}
			c.whens, c.thens = append(c.whens, w), append(c.thens, th)
		case "else":
			e, err := p.parse(0)
			if err != nil {
				return nil, err
			}
			c.els = e
		case "end":
			if len(c.whens) == 0 {
				return nil, fmt.Errorf("CASE needs at least one WHEN")
			}
			return c, nil
		default:
			return nil, fmt.Errorf("expected WHEN, ELSE or END in CASE, found %q", t.text)
		}
	}
}

func parseNumber(text string) (expr, error) {
	if !strings.ContainsAny(text, ".eE") {
		i, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("integer %s is out of range", text)
		}
		return literal{intOf(i)}, nil
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return nil, fmt.Errorf("bad number %q", text)
	}
	return literal{doubleOf(f)}, nil
}
