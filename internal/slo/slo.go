// Package slo is a latency objective as a user writes it (p99<=10ms, p90(new_order)<=5s): read
// once, before any server starts, by the capacity command, compare's --slo and a suite's slo:.
package slo

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// SLO is a latency objective: the Percentile of the transactions of Kind (all of them where
// Kind is "") must take at most Limit from their scheduled arrival.
type SLO struct {
	Percentile float64 // 50 to 99.9
	Kind       string
	Limit      time.Duration
}

// String is the objective as it is written: p99<=10ms, p90(new_order)<=5s.
func (s SLO) String() string {
	p := "p" + strconv.FormatFloat(s.Percentile, 'f', -1, 64)
	if s.Kind != "" {
		p += "(" + s.Kind + ")"
	}
	return p + "<=" + s.Limit.String()
}

// Text is the objective for a reader: "p99 ≤ 10ms".
func (s SLO) Text() string { return strings.Replace(s.String(), "<=", " ≤ ", 1) }

var sloForm = regexp.MustCompile(`^p([0-9]+(?:\.[0-9]+)?)(?:\(([a-z_][a-z0-9_]*)\))?\s*(<=|<|=|>=|>)\s*(.*)$`)

// Parse reads an objective as `pNN[(kind)]<=DURATION`; a malformed one is refused with one line
// that says what is wrong and shows the form.
func Parse(text string) (SLO, error) {
	const form = "write it as a percentile from p50 to p99.9, <=, and a time, e.g. 'p99<=10ms' or 'p90(new_order)<=5s'"
	m := sloForm.FindStringSubmatch(strings.ToLower(strings.TrimSpace(text)))
	if m == nil {
		return SLO{}, fmt.Errorf("--slo %q is not an objective: %s", text, form)
	}
	p, err := strconv.ParseFloat(m[1], 64)
	if err != nil || p < 50 || p > 99.9 {
		return SLO{}, fmt.Errorf("--slo %q: the percentile must be from p50 to p99.9 (a maximum is no objective a rate can be judged by): %s", text, form)
	}
	if m[3] != "<=" {
		return SLO{}, fmt.Errorf("--slo %q: an objective is an upper limit, written <=: %s", text, form)
	}
	limit, err := time.ParseDuration(strings.TrimSpace(m[4]))
	if err != nil || limit <= 0 {
		return SLO{}, fmt.Errorf("--slo %q: the limit must be a positive time with its unit (10ms, 1.5s): %s", text, form)
	}
	return SLO{Percentile: p, Kind: m[2], Limit: limit}, nil
}

// MinTransactions is how many transactions a window needs for its percentile to rest on ten of
// them beyond it at the least: 1,000 for a p99, 10,000 for a p99.9.
func (s SLO) MinTransactions() int {
	n := 10 / (1 - s.Percentile/100)
	return int(math.Ceil(math.Round(n*1e6) / 1e6)) // rounded first: 1 - 0.999 is not 0.001 in floating point
}

// StartRate is the lowest rate whose window of this length holds MinTransactions: below it the
// percentile is one slow transaction's, which says nothing of the rate.
func (s SLO) StartRate(window time.Duration) float64 {
	return math.Ceil(float64(s.MinTransactions()) / window.Seconds())
}
