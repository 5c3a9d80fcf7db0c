// Package histogram records latencies losslessly (HdrHistogram, microsecond resolution, three
// significant digits) and turns them into the percentiles and the portable encoding of a result.
package histogram

import (
	"fmt"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/fairbench/fairbench/internal/result"
)

const (
	// MaxMicros is the largest latency kept exactly: an hour. Longer values are clamped and counted
	// in Clamped, so a stalled server still shows as the maximum rather than vanishing.
	MaxMicros   = int64(3600 * 1e6)
	sigFigures  = 3
	lowestMicro = 1
)

// Histogram is not safe for concurrent use; the runner gives each thread its own and merges them.
type Histogram struct {
	h       *hdrhistogram.Histogram
	Clamped int64
}

func New() *Histogram {
	return &Histogram{h: hdrhistogram.New(lowestMicro, MaxMicros, sigFigures)}
}

// Record adds one latency in microseconds.
func (h *Histogram) Record(micros int64) {
	if micros < lowestMicro {
		micros = lowestMicro
	}
	if micros > MaxMicros {
		micros = MaxMicros
		h.Clamped++
	}
	_ = h.h.RecordValue(micros) // cannot fail: the value is within the trackable range
}

func (h *Histogram) Merge(o *Histogram) {
	h.h.Merge(o.h)
	h.Clamped += o.Clamped
}

func (h *Histogram) Reset() {
	h.h.Reset()
	h.Clamped = 0
}

func (h *Histogram) Count() int64 { return h.h.TotalCount() }

// PercentileMS is the latency at percentile p (0..100) in milliseconds.
func (h *Histogram) PercentileMS(p float64) float64 {
	if h.h.TotalCount() == 0 {
		return 0
	}
	return float64(h.h.ValueAtPercentile(p)) / 1000
}

// Latency summarises the histogram in the results format.
func (h *Histogram) Latency() result.Latency {
	if h.h.TotalCount() == 0 {
		return result.Latency{}
	}
	ms := func(v int64) float64 { return float64(v) / 1000 }
	return result.Latency{
		Avg:  h.h.Mean() / 1000,
		P50:  ms(h.h.ValueAtPercentile(50)),
		P90:  ms(h.h.ValueAtPercentile(90)),
		P95:  ms(h.h.ValueAtPercentile(95)),
		P99:  ms(h.h.ValueAtPercentile(99)),
		P999: ms(h.h.ValueAtPercentile(99.9)),
		Max:  ms(h.h.Max()),
	}
}

// Encode is the compressed, base64 HdrHistogram V2 form stored in results.
func (h *Histogram) Encode() (string, error) {
	b, err := h.h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// Decode reads a histogram stored by Encode, so results from several runs or hosts can be merged.
func Decode(s string) (*Histogram, error) {
	hh, err := hdrhistogram.Decode([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("bad latency histogram in results: %v", err)
	}
	return &Histogram{h: hh}, nil
}

// CumulativeAt counts, for each bound in microseconds (ascending), the values at or below it:
// the cumulative buckets of a Prometheus histogram. A value counts under a bound when its whole
// HdrHistogram bucket does, so the answer is exact to the histogram's three significant digits.
func (h *Histogram) CumulativeAt(bounds []int64) []uint64 {
	out := make([]uint64, len(bounds))
	for _, bar := range h.h.Distribution() {
		if bar.Count == 0 {
			continue
		}
		for i := len(bounds) - 1; i >= 0 && bar.To <= bounds[i]; i-- {
			out[i] += uint64(bar.Count)
		}
	}
	return out
}

// SumMicros is the sum of all recorded values, from the histogram's mean.
func (h *Histogram) SumMicros() float64 { return h.h.Mean() * float64(h.h.TotalCount()) }
