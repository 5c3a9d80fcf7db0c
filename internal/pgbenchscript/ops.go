package pgbenchscript

import (
	"errors"
	"fmt"
	"math"
)

func (e unary) eval(s *state) (value, error) {
	x, err := e.x.eval(s)
	if err != nil {
		return value{}, err
	}
	switch e.op {
	case "isnull":
		return boolOf(x.kind == nullValue), nil
	case "notnull":
		return boolOf(x.kind != nullValue), nil
	case "not":
		if x.kind == nullValue {
			return value{}, nil
		}
		b, err := x.truthy()
		return boolOf(!b), err
	case "+":
		return x, numeric(x)
	case "-":
		if x.kind == doubleValue {
			return doubleOf(-x.f), nil
		}
		i, err := x.asInt()
		if err != nil {
			return value{}, err
		}
		if i == math.MinInt64 {
			return value{}, errOverflow
		}
		return intOf(-i), nil
	case "~":
		i, err := x.asInt()
		return intOf(^i), err
	}
	return value{}, fmt.Errorf("unknown operator %s", e.op)
}

var errOverflow = errors.New("bigint out of range")

func numeric(v value) error {
	if v.kind == intValue || v.kind == doubleValue {
		return nil
	}
	return fmt.Errorf("%s is not a number", v)
}

func (e binary) eval(s *state) (value, error) {
	x, err := e.x.eval(s)
	if err != nil {
		return value{}, err
	}
	// AND and OR short-circuit, as in pgbench.
	if e.op == "and" || e.op == "or" {
		return e.logic(s, x)
	}
	y, err := e.y.eval(s)
	if err != nil {
		return value{}, err
	}
	switch e.op {
	case "is":
		if y.kind == nullValue || x.kind == nullValue {
			return boolOf(x.kind == y.kind), nil
		}
		b, err := x.truthy()
		return boolOf(b == y.b), err
	case "|", "#", "&", "<<", ">>":
		return bitwise(e.op, x, y)
	}
	if x.kind == nullValue || y.kind == nullValue {
		return value{}, nil
	}
	if x.kind == doubleValue || y.kind == doubleValue {
		return doubles(e.op, x, y)
	}
	return ints(e.op, x, y)
}

func (e binary) logic(s *state, x value) (value, error) {
	xb, err := x.truthy()
	if err != nil {
		return value{}, err
	}
	if (e.op == "and" && !xb && x.kind != nullValue) || (e.op == "or" && xb) {
		return boolOf(xb), nil
	}
	y, err := e.y.eval(s)
	if err != nil {
		return value{}, err
	}
	if x.kind == nullValue || y.kind == nullValue {
		return value{}, nil
	}
	yb, err := y.truthy()
	return boolOf(yb), err
}

// twoInts reads both operands as integers.
func twoInts(x, y value) (int64, int64, error) {
	a, err := x.asInt()
	if err != nil {
		return 0, 0, err
	}
	b, err := y.asInt()
	return a, b, err
}

func bitwise(op string, x, y value) (value, error) {
	a, b, err := twoInts(x, y)
	if err != nil {
		return value{}, err
	}
	switch op {
	case "|":
		return intOf(a | b), nil
	case "#":
		return intOf(a ^ b), nil
	case "&":
		return intOf(a & b), nil
	case "<<":
		return intOf(a << (uint64(b) & 63)), nil
	}
	return intOf(a >> (uint64(b) & 63)), nil
}

func doubles(op string, x, y value) (value, error) {
	a, err := x.asDouble()
	if err != nil {
		return value{}, err
	}
	b, err := y.asDouble()
	if err != nil {
		return value{}, err
	}
	switch op {
	case "+":
		return doubleOf(a + b), nil
	case "-":
		return doubleOf(a - b), nil
	case "*":
		return doubleOf(a * b), nil
	case "/":
		if b == 0 {
			return value{}, errors.New("division by zero")
		}
		return doubleOf(a / b), nil
	case "%":
		return value{}, errors.New("% needs integers")
	}
	return compare(op, a < b, a == b)
}

func ints(op string, x, y value) (value, error) {
	a, b, err := twoInts(x, y)
	if err != nil {
		return value{}, err
	}
	switch op {
	case "+":
		r := a + b
		if (a > 0 && b > 0 && r < 0) || (a < 0 && b < 0 && r >= 0) {
			return value{}, errOverflow
		}
		return intOf(r), nil
	case "-":
		r := a - b
		if (a >= 0 && b < 0 && r < 0) || (a < 0 && b > 0 && r >= 0) {
			return value{}, errOverflow
		}
		return intOf(r), nil
	case "*":
		if a != 0 && ((a*b)/a != b || (a == -1 && b == math.MinInt64) || (b == -1 && a == math.MinInt64)) {
			return value{}, errOverflow
		}
		return intOf(a * b), nil
	case "/", "%":
		if b == 0 {
			return value{}, errors.New("division by zero")
		}
		if b == -1 { // MinInt64 / -1 overflows; x % -1 is 0
			if op == "%" {
				return intOf(0), nil
			}
			if a == math.MinInt64 {
				return value{}, errOverflow
			}
			return intOf(-a), nil
		}
		if op == "/" {
			return intOf(a / b), nil
		}
		return intOf(a % b), nil
	}
	return compare(op, a < b, a == b)
}

func compare(op string, less, equal bool) (value, error) {
	switch op {
	case "=":
		return boolOf(equal), nil
	case "<>", "!=":
		return boolOf(!equal), nil
	case "<":
		return boolOf(less), nil
	case "<=":
		return boolOf(less || equal), nil
	case ">":
		return boolOf(!less && !equal), nil
	case ">=":
		return boolOf(!less), nil
	}
	return value{}, fmt.Errorf("unknown operator %s", op)
}
