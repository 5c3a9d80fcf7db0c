package capacity

import (
	"fmt"
	"github.com/fairbench/fairbench/internal/slo"
	"math"
	"time"
)

// Window is what one rate's measured window showed, after its own warm-up.
type Window struct {
	Offered   float64       // arrivals scheduled per second
	Completed float64       // transactions completed per second
	Seconds   float64       // the window's length
	Latency   time.Duration // the objective's percentile, from each scheduled arrival
	// LagStart and LagEnd are how late arrivals started, on average, over the window's first and
	// last thirds: the backlog of arrivals waiting for a free client, as it began and ended.
	LagStart, LagEnd time.Duration
	// LagP99 is the whole window's schedule lag at its p99: how much of the latency's tail was
	// the wait to start.
	LagP99 time.Duration
	// Busy is the share of the connections in use on average: completed rate × mean time from
	// a transaction's start to its end, over the connections (Little's law).
	Busy        float64
	Connections int
	// Service is the mean time from a transaction's start to its end, its wait for a connection
	// left out: what more connections could not shorten.
	Service time.Duration
	// Failed says why the window's run did not finish (a server that froze); its figures are
	// then what it measured before.
	Failed string
}

// What gave way at a rate that failed.
const (
	ByServer      = "server"
	ByConnections = "connections"
	ByClient      = "client"
)

// MinCompleted is the share of the offered rate a passing rate must complete.
const MinCompleted = 0.97

// backlogSlack is how much the backlog's lag may grow through a window, as a share of the
// objective's limit, before the backlog counts as growing: a queue that grows by a quarter of the
// limit in one window would break it a few windows later. The lag must also have reached half the
// limit: an overloaded server's backlog grows by hundreds of milliseconds in a window (10% over
// capacity for 10 s is a second's arrivals), while a few milliseconds of drift between the
// window's thirds is the scheduler's noise on a small machine.
const backlogSlack = 0.25

// busyConnections is the share of the connections in use at which they are all busy: arrivals
// then wait for a connection, not only for the server.
const busyConnections = 0.9

// Verdict is a window judged against an objective.
type Verdict struct {
	Pass bool
	// Ratios are each condition's ratio to its bound (the percentile to the limit, the offered
	// to the completed rate over 97%, the backlog's growth to its slack), in that order; Stress
	// is the largest, at most 1 where the rate passes. The search interpolates the rate at which
	// the condition that gave way crosses 1.
	Ratios [3]float64
	Stress float64
	// Failed names each condition that failed, in words.
	Failed []string
	// GaveWay is what limited a failing rate: ByServer, ByConnections or ByClient.
	GaveWay string
	// Advice says what to raise where the connections or the client, not the server, gave way.
	Advice string
}

// Judge says whether w meets the objective, and why not.
func Judge(obj slo.SLO, w Window) Verdict {
	limit := float64(obj.Limit)
	latency := float64(w.Latency) / limit
	throughput := shortfall(w)
	growth := min(float64(w.LagEnd-w.LagStart)/(backlogSlack*limit), 2*float64(w.LagEnd)/limit)
	v := Verdict{Ratios: [3]float64{latency, throughput, growth}, Stress: max(latency, throughput, growth)}
	if latency > 1 {
		v.Failed = append(v.Failed, fmt.Sprintf("%s was %s, over %s", pName(obj), ms(w.Latency), ms(obj.Limit)))
	}
	if throughput > 1 {
		v.Failed = append(v.Failed, fmt.Sprintf("completed %.0f/s of %.0f/s offered (%.0f%%, under %.0f%% and past the schedule's own variation)",
			w.Completed, w.Offered, 100*w.Completed/w.Offered, 100*MinCompleted))
	}
	if growth > 1 {
		v.Failed = append(v.Failed, fmt.Sprintf("the backlog grew: arrivals started %s late at the window's end, %s at its start",
			ms(w.LagEnd), ms(w.LagStart)))
	}
	if w.Failed != "" {
		v.Failed = append(v.Failed, "the run failed: "+w.Failed)
		v.Stress = max(v.Stress, math.Inf(1))
	}
	v.Pass = len(v.Failed) == 0
	if !v.Pass {
		v.GaveWay, v.Advice = gaveWay(w, obj)
	}
	return v
}

// shortfall is how far the completed transactions fell short of the offered, over what is
// allowed: 3% of the offered, or the Poisson schedule's own variation in a window's arrivals
// (three standard deviations, the square root of their number), whichever is more. A window of
// 50 arrivals holds 29 to 71 of them by chance; past 10,000 the 3% rule is the larger. Without
// the window's length the 3% rule alone applies.
func shortfall(w Window) float64 {
	if w.Offered <= 0 {
		return 0
	}
	if w.Seconds <= 0 {
		if w.Completed <= 0 {
			return math.Inf(1)
		}
		return MinCompleted * w.Offered / w.Completed
	}
	n := w.Offered * w.Seconds
	allowed := max((1-MinCompleted)*n, 3*math.Sqrt(n))
	return 1 + (n-w.Completed*w.Seconds-allowed)/n
}

// worst is the index of the condition furthest past (or nearest to) its bound.
func (v Verdict) worst() int {
	k := 0
	for i, r := range v.Ratios {
		if r > v.Ratios[k] {
			k = i
		}
	}
	return k
}

// gaveWay tells the server's limit from the client's own, where the failing tail was mostly the
// wait to start (the schedule lag at least half the objective's percentile). Arrivals that wait
// while every connection is busy, and whose service once started is well within the limit, wait
// for the pool: more connections would carry more. Arrivals that wait while most connections are
// free wait for the client (its pacer or its CPU could not keep up), which is never the server's
// capacity. A tail made of the server's answers is the server's.
func gaveWay(w Window, obj slo.SLO) (string, string) {
	// The tail was mostly the wait to start: arrivals held back, by the pool or by the client.
	lag := max(w.LagP99, w.LagEnd)
	waited := lag > 0 && lag*2 > w.Latency
	switch {
	case w.Failed != "" || !waited:
		return ByServer, ""
	case w.Busy >= busyConnections && w.Service > 0 && w.Service <= obj.Limit/2:
		return ByConnections, fmt.Sprintf("all %d connections were busy and arrivals waited for one while the server answered in %s on average: raise --max-connections", w.Connections, ms(w.Service))
	case w.Busy < busyConnections/2:
		return ByClient, fmt.Sprintf("arrivals fell behind with %.0f%% of the connections in use: the client could not offer %.0f/s (its CPU or pacer); run the client on another machine (compare --clients) before reading this as the server's limit", 100*w.Busy, w.Offered)
	}
	return ByServer, ""
}

func pName(obj slo.SLO) string {
	s := fmt.Sprintf("p%s", trimFloat(obj.Percentile))
	if obj.Kind != "" {
		s += "(" + obj.Kind + ")"
	}
	return s
}

func trimFloat(x float64) string { return fmt.Sprintf("%g", x) }

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }
