package capacity

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/slo"
)

var slo10ms = slo.SLO{Percentile: 99, Limit: 10 * time.Millisecond}

// server is a fake: the window a rate would show in a given round.
type server func(rate float64, rng *rand.Rand) Window

// queue is an M/M/1 server of capacity k per second: its p99 from arrival is ln(100)/(k - rate),
// so the objective's p99 ≤ 10 ms holds up to k - 460.5/s. Beyond k it completes k/s and its
// backlog grows. noise multiplies each window's latency by a log-normal factor of that sigma.
func queue(k, noise float64) server {
	return func(rate float64, rng *rand.Rand) Window {
		w := Window{Offered: rate, Completed: rate, Busy: rate / k, Connections: 64}
		if rate >= k {
			w.Completed, w.LagStart, w.LagEnd = k, time.Millisecond, time.Second
			w.Latency = 2 * time.Second
			return w
		}
		p99 := math.Log(100) / (k - rate)
		w.Latency = time.Duration(p99 * math.Exp(noise*rng.NormFloat64()) * float64(time.Second))
		return w
	}
}

func queueKnee(k float64) float64 { return k - math.Log(100)/0.010 }

// run drives a search against srv as the capacity command does, and fails the test if it does
// not finish within 100 probes.
func run(t *testing.T, p Plan, srv server, seed uint64) ([]Probe, Estimate) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	var done []Probe
	for range 100 {
		next, finished := p.Next(done)
		if finished {
			return done, p.Estimate(done)
		}
		next.Verdict = Judge(slo10ms, srv(next.Rate, rng))
		done = append(done, next)
	}
	t.Fatalf("the search did not finish in 100 probes: %+v", done)
	return nil, Estimate{}
}

// firstConfirmation is the index of the first confirmation probe of a search of queue(5000, 0)
// with plan p: where the tests below put their hiccups.
func firstConfirmation(t *testing.T, p Plan) int {
	t.Helper()
	done, _ := run(t, p, queue(5000, 0), 1)
	for i, pr := range done {
		if pr.Phase == Confirm {
			return i
		}
	}
	t.Fatal("the search confirmed nothing")
	return 0
}

// A server with a known knee: the search climbs, bisects and confirms, and its capacity lies
// within the resolution of the true crossing; its interval holds it.
func TestSearchFindsTheKnee(t *testing.T) {
	truth := queueKnee(5000)
	done, e := run(t, Plan{}, queue(5000, 0), 1)
	if e.Reached != Confirm || e.AtLeast || e.GaveWay != ByServer {
		t.Fatalf("reached %s, at least %v, gave way %q", e.Reached, e.AtLeast, e.GaveWay)
	}
	if math.Abs(e.Capacity-truth)/truth > 0.02 || e.Low > truth*1.001 || e.High < truth*0.999 {
		t.Errorf("capacity %.0f [%.0f, %.0f], the truth %.0f", e.Capacity, e.Low, e.High, truth)
	}
	phases := map[string]int{}
	for _, p := range done {
		phases[p.Phase]++
	}
	if phases[Climb] < 5 || phases[Bisect] < 2 || phases[Confirm] != 10 {
		t.Errorf("phases %v: want a climb from 10/s, a bisection, and 5 rounds of two rates", phases)
	}
	t.Logf("%d probes: %v; capacity %.0f [%.0f, %.0f], truth %.0f", len(done), phases, e.Capacity, e.Low, e.High, truth)
}

// With noise (each window's p99 off by a log-normal factor, sigma 0.15: about ±30% at 95%),
// the estimate stays near the truth and the interval holds it in most searches.
func TestSearchWithNoise(t *testing.T) {
	truth := queueKnee(5000)
	held, near, n := 0, 0, 200
	for seed := range uint64(n) {
		_, e := run(t, Plan{}, queue(5000, 0.15), seed)
		if e.Low <= truth && truth <= e.High {
			held++
		}
		if math.Abs(e.Capacity-truth)/truth <= 0.05 {
			near++
		}
	}
	t.Logf("interval held the truth in %d of %d searches; within 5%% in %d", held, n, near)
	if held < n*90/100 || near < n*95/100 {
		t.Errorf("held %d, near %d of %d", held, near, n)
	}
}

// Stalls of the machine fail a window at any rate: here one window in five, wherever it falls
// (every 8 s window on this 2-core VM held a stall of 13-72 ms, enough for a 5 ms p99). Judged on
// one window each, the climb's and bisection's rates below the knee ended 184 of 200 such searches
// low (16 within 5% of the knee); with a failure measured again before it bounds the search, 112
// of 200 end within 5%. The rest met two stalls at one rate (4% of rates) or fail-pass-fail (3%),
// which a rule on windows alone cannot tell from a server at its limit.
func TestSearchWithStalls(t *testing.T) {
	truth := queueKnee(5000)
	stalled := func(rate float64, rng *rand.Rand) Window {
		w := queue(5000, 0)(rate, rng)
		if rng.Float64() < 0.2 {
			w.Latency = max(w.Latency, 15*time.Millisecond)
		}
		return w
	}
	near, probes, n := 0, 0, 200
	for seed := range uint64(n) {
		done, e := run(t, Plan{Rounds: 3}, stalled, seed)
		probes += len(done)
		if math.Abs(e.Capacity-truth)/truth <= 0.05 {
			near++
		}
	}
	t.Logf("within 5%% of the knee in %d of %d searches, %.1f probes each", near, n, float64(probes)/float64(n))
	if near < n/2 {
		t.Errorf("within 5%% of the knee in %d of %d searches", near, n)
	}
}

// A cliff: fine up to 3,000/s, then a second a transaction. The capacity is just under the cliff.
func TestSearchCliff(t *testing.T) {
	cliff := func(rate float64, _ *rand.Rand) Window {
		w := Window{Offered: rate, Completed: rate, Latency: time.Millisecond, Busy: 0.3, Connections: 64}
		if rate > 3000 { // the server stalls: every connection held, each for a second
			w.Latency, w.Completed, w.LagEnd, w.Busy, w.Service = 2*time.Second, 1000, time.Second, 1, time.Second
		}
		return w
	}
	_, e := run(t, Plan{}, cliff, 1)
	if e.Capacity > 3000 || e.Capacity < 3000*0.9 || e.High > 3000*1.06 || e.GaveWay != ByServer {
		t.Errorf("capacity %.0f [%.0f, %.0f] at a cliff at 3,000/s", e.Capacity, e.Low, e.High)
	}
}

// A plateau: latency stays low, but the server completes at most 2,000/s. The rate fails on
// throughput (97% of the offered), which the verdict names.
func TestSearchPlateau(t *testing.T) {
	plateau := func(rate float64, _ *rand.Rand) Window {
		return Window{Offered: rate, Completed: min(rate, 2000), Latency: time.Millisecond, Busy: 0.95, Connections: 8}
	}
	done, e := run(t, Plan{}, plateau, 1)
	truth := 2000 / MinCompleted
	if math.Abs(e.Capacity-truth)/truth > 0.02 {
		t.Errorf("capacity %.0f, want %.0f (97%% completed)", e.Capacity, truth)
	}
	if f := lowestFailure(done); f == nil || !strings.Contains(strings.Join(f.Verdict.Failed, "; "), "under 97%") {
		t.Errorf("the failing rate's verdict: %+v", f)
	}
}

// The client cannot offer more than 1,500/s: arrivals fall behind with connections free. The
// search stops there and says the capacity is at least what passed, and that the client gave way.
func TestSearchClientLimited(t *testing.T) {
	client := func(rate float64, _ *rand.Rand) Window {
		w := Window{Offered: rate, Completed: rate, Latency: time.Millisecond, Busy: 0.1, Connections: 64}
		if rate > 1500 {
			w.Completed, w.LagEnd, w.Latency = 1500, 500*time.Millisecond, 600*time.Millisecond
		}
		return w
	}
	_, e := run(t, Plan{}, client, 1)
	if !e.AtLeast || e.GaveWay != ByClient || !strings.Contains(e.Advice, "the client could not offer") || e.Capacity > 1500 || e.Capacity < 1500*0.95 {
		t.Errorf("estimate %+v: want at least a capacity under 1,500/s, the client named", e)
	}
}

// Too few connections: every one busy and arrivals waiting for one, the server quick. The
// verdict says to raise --max-connections.
func TestSearchConnectionLimited(t *testing.T) {
	pool := func(rate float64, _ *rand.Rand) Window {
		w := Window{Offered: rate, Completed: rate, Latency: 2 * time.Millisecond, Busy: rate / 4000, Connections: 8, Service: time.Millisecond}
		if rate > 4000 {
			w.Busy, w.Completed, w.LagStart, w.LagEnd, w.Latency = 1, 4000, time.Millisecond, 300*time.Millisecond, 310*time.Millisecond
		}
		return w
	}
	_, e := run(t, Plan{}, pool, 1)
	if e.GaveWay != ByConnections || !strings.Contains(e.Advice, "raise --max-connections") {
		t.Errorf("estimate %+v: want the connections named", e)
	}
}

// An objective no rate meets: the first rate fails, again when measured again, and the search
// ends there, saying so.
func TestSearchNoRateMeets(t *testing.T) {
	done, e := run(t, Plan{Start: 10}, func(rate float64, _ *rand.Rand) Window {
		return Window{Offered: rate, Completed: rate, Latency: 50 * time.Millisecond, Busy: 0.01, Connections: 4}
	}, 1)
	if len(done) != 2 || done[1].Rate != done[0].Rate || e.Reached != "no rate" || e.Capacity != 0 {
		t.Errorf("%d probes, estimate %+v", len(done), e)
	}
}

// A server that passes every rate up to the plan's top: the climb stops there, a lower bound.
func TestSearchMaxRate(t *testing.T) {
	done, e := run(t, Plan{MaxRate: 1000}, queue(1e9, 0), 1)
	if !e.AtLeast || e.Reached != Climb || e.Capacity != 1000 || done[len(done)-1].Rate != 1000 {
		t.Errorf("estimate %+v after %d probes", e, len(done))
	}
}

// Next is a pure function of the probes: the same probes give the same next rate.
func TestNextIsPure(t *testing.T) {
	done, _ := run(t, Plan{}, queue(5000, 0.1), 3)
	for i := range done {
		a, fa := Plan{}.Next(done[:i])
		b, fb := Plan{}.Next(done[:i])
		if a.Rate != b.Rate || a.Phase != b.Phase || a.Round != b.Round || fa != fb {
			t.Fatalf("after %d probes: %+v then %+v", i, a, b)
		}
		if a.Rate != done[i].Rate || a.Phase != done[i].Phase {
			t.Fatalf("after %d probes Next says %+v, the search measured %+v", i, a, done[i])
		}
	}
}

// A hint from an earlier round is measured first: where the server is where it was, the bracket
// is confirmed in five probes (the hint's top fails twice); where it moved, the search climbs or
// descends from the hint.
func TestSearchFromAHint(t *testing.T) {
	truth := queueKnee(5000)
	done, e := run(t, Plan{HintLow: 4450, HintHigh: 4650, Rounds: 1}, queue(5000, 0), 1)
	if len(done) != 5 || math.Abs(e.Capacity-truth)/truth > 0.02 {
		t.Errorf("hinted at the knee: %d probes, capacity %.0f (truth %.0f)", len(done), e.Capacity, truth)
	}
	for _, hint := range [][2]float64{{9000, 9400}, {1000, 1050}} { // the server got slower; faster
		done, e := run(t, Plan{HintLow: hint[0], HintHigh: hint[1], Rounds: 1}, queue(5000, 0), 1)
		if math.Abs(e.Capacity-truth)/truth > 0.03 || e.Reached != Confirm {
			t.Errorf("hint %v: %d probes, capacity %.0f reached %s (truth %.0f)", hint, len(done), e.Capacity, e.Reached, truth)
		}
	}
}

// A confirmation round that fails at the bracket's bottom (noise at the knee, a busy moment) is
// taken into the rounds' estimates; it does not end the search as the client's limit, nor name
// what gave way. Seen on PostgreSQL here: the first confirmation at 673/s failed with the
// arrivals late, and the search stopped with "at least 673/s".
func TestConfirmationFailureIsNoise(t *testing.T) {
	first := firstConfirmation(t, Plan{Rounds: 3})
	calls := 0
	srv := func(rate float64, rng *rand.Rand) Window {
		calls++
		w := queue(5000, 0)(rate, rng)
		if calls == first+1 { // the first confirmation probe: late arrivals with connections free
			w.Latency, w.LagStart, w.LagEnd, w.Busy = 30*time.Millisecond, 5*time.Millisecond, 25*time.Millisecond, 0.05
		}
		return w
	}
	done, e := run(t, Plan{Rounds: 3}, srv, 1)
	if done[first].Phase != Confirm || done[first].Verdict.GaveWay != ByClient {
		t.Fatalf("probe %d is %+v, want the confirmation that fails", first+1, done[first])
	}
	if e.Reached != Confirm || e.AtLeast || e.GaveWay != ByServer || len(e.PerRound) != 3 {
		t.Errorf("estimate %+v after %d probes: want the three rounds, the server named", e, len(done))
	}
}

// A client held back once (a burst of steal at 400/s, seen here right after another search) is
// measured again: passing the second time, the climb goes on to the server's knee.
func TestClientHiccupMeasuredAgain(t *testing.T) {
	calls := 0
	srv := func(rate float64, rng *rand.Rand) Window {
		calls++
		w := queue(5000, 0)(rate, rng)
		if calls == 6 { // 320/s, the first time
			w.Latency, w.LagStart, w.LagEnd, w.Busy = 30*time.Millisecond, time.Millisecond, 25*time.Millisecond, 0.01
		}
		return w
	}
	done, e := run(t, Plan{Rounds: 2}, srv, 1)
	if done[5].Verdict.GaveWay != ByClient || done[6].Rate != done[5].Rate || !done[6].Verdict.Pass {
		t.Fatalf("probes 6 and 7: %+v, %+v; want the client's failure and the same rate again", done[5], done[6])
	}
	if e.AtLeast || e.Reached != Confirm || math.Abs(e.Capacity-queueKnee(5000))/queueKnee(5000) > 0.02 {
		t.Errorf("estimate %+v: want the server's knee", e)
	}
}

// The client held back at the very first rate (a burst of steal, seen at 100/s on PostgreSQL
// here) is measured again there, not read as an objective no rate meets; confirmation rounds in
// which the bracket's bottom failed are counted and said.
func TestClientHiccupAtTheStart(t *testing.T) {
	// The first confirmation probe is at the bracket's bottom; the start measured again puts it
	// one later than in a search without the hiccup.
	bottom := firstConfirmation(t, Plan{Rounds: 2}) + 1
	calls := 0
	srv := func(rate float64, rng *rand.Rand) Window {
		calls++
		w := queue(5000, 0)(rate, rng)
		if calls == 1 || calls == bottom+1 {
			w.Latency, w.LagStart, w.LagEnd, w.Busy = 30*time.Millisecond, time.Millisecond, 25*time.Millisecond, 0.01
		}
		return w
	}
	done, e := run(t, Plan{Rounds: 2}, srv, 1)
	if done[1].Rate != done[0].Rate || !done[1].Verdict.Pass {
		t.Fatalf("the start rate was not measured again: %+v, %+v", done[0], done[1])
	}
	if e.Reached != Confirm || e.Contradicted != 1 {
		t.Errorf("estimate %+v: want a confirmed capacity with one contradicted round", e)
	}
}

// A bracket whose bottom passed once by luck and fails in every confirmation round is refuted
// after two: the search goes below it and confirms the bracket it finds there (PostgreSQL's
// point selects here failed at the bracket's bottom in 3 of 3 rounds, and the capacity was that
// rate).
func TestRoundsFailingAtTheBottom(t *testing.T) {
	seen := map[float64]int{}
	srv := func(rate float64, rng *rand.Rand) Window {
		seen[rate]++
		w := queue(5000, 0)(rate, rng)
		if rate > 4000 && rate < 4539 && seen[rate] > 1 { // only the first window at such a rate passes
			w.Latency = 15 * time.Millisecond
		}
		return w
	}
	done, e := run(t, Plan{Rounds: 3}, srv, 1)
	lo, _, _ := bracket(done)
	if e.Refuted == 0 || e.Reached != Confirm || lo > 4000 || e.Contradicted != 0 {
		t.Errorf("refuted %d, reached %s, bracket bottom %.0f, contradicted %d: want the bottoms above 4,000/s refuted and a bracket below confirmed", e.Refuted, e.Reached, lo, e.Contradicted)
	}
	if e.Capacity > 4100 || e.Capacity < 3700 {
		t.Errorf("capacity %.0f, want about 4,000/s, where windows pass every time", e.Capacity)
	}
}

// nearLimit is a server whose latency sits near the objective at every rate (a transaction whose own
// p99 is about the limit): each window's p99 is the limit times exp((rate − mid)/mid + noise), so
// windows at mid pass half the time, at 0.9 × mid two thirds, and at 1.1 × mid a third.
func nearLimit(mid, noise float64) server {
	return func(rate float64, rng *rand.Rand) Window {
		w := Window{Offered: rate, Completed: rate, Busy: 0.3, Connections: 64}
		w.Latency = time.Duration(float64(slo10ms.Limit) * math.Exp((rate-mid)/mid+noise*rng.NormFloat64()))
		return w
	}
}

// On such a curve one rate's windows pass and fail by turns, and a bracket's bottom that passed
// once is luck as often as not. The confirmation refutes it when it fails in most rounds, so a
// search seldom promises a rate whose windows pass less than a third of the time: 26 of these
// 200 searches did, and their median lies at the rate that passes half the time (1,017/s);
// without refutation 92 of 200 did, median 1,092/s. Three rounds keep a bottom that passes a
// third of the time in about a quarter of the brackets, so the bound is 15%.
func TestSearchOnALatencyFloor(t *testing.T) {
	const mid, searches = 1000.0, 200
	high, refuted := 0, 0
	var caps []float64
	for seed := range uint64(searches) {
		_, e := run(t, Plan{Rounds: 3}, nearLimit(mid, 0.25), seed)
		caps = append(caps, e.Capacity)
		if e.Capacity > 1.1*mid {
			high++
		}
		if e.Refuted > 0 {
			refuted++
		}
	}
	slices.Sort(caps)
	t.Logf("capacity median %.0f (windows pass half the time at %.0f); above 1.1x in %d of %d searches; a bracket refuted in %d", caps[searches/2], mid, high, searches, refuted)
	if high > searches*15/100 {
		t.Errorf("%d of %d searches promised a rate whose windows pass less than a third of the time", high, searches)
	}
}

// A search that refuted brackets says so in its line and in the report's words, and records how
// many (the results file's refuted).
func TestRefutedSaid(t *testing.T) {
	c := &result.Capacity{SLO: "p99<=5ms", Reached: Confirm, PerS: 410, LowPerS: 390, HighPerS: 430, Connections: 32, Rounds: 3, Refuted: 2}
	if got := Line(c); !strings.Contains(got, "2 brackets' lower rates failed in most of their confirmation rounds and the search went below each") {
		t.Errorf("line %q does not say the brackets were refuted", got)
	}
	c.Refuted = 0
	if got := Line(c); strings.Contains(got, "refuted") || strings.Contains(got, "went below") {
		t.Errorf("line %q speaks of refutation where there was none", got)
	}
}

// The floor is the objective's percentile at the lowest rate, over its limit: far below it for a
// queue whose knee is far above the start; near it for a workload whose own latency nearly
// unloaded is most of the objective, which the line then says is soft.
func TestFloor(t *testing.T) {
	_, e := run(t, Plan{}, queue(5000, 0), 1)
	if want := math.Log(100) / (5000 - 10) / 0.010; math.Abs(e.Floor-want) > 1e-6 {
		t.Errorf("queue: floor %.4f, want %.4f (p99 at the start rate over 10 ms)", e.Floor, want)
	}
	slow := func(rate float64, rng *rand.Rand) Window {
		w := queue(5000, 0)(rate, rng)
		w.Latency += 6100 * time.Microsecond // a transaction that takes 7 ms unloaded
		return w
	}
	_, e = run(t, Plan{Rounds: 3}, slow, 1)
	c := &result.Capacity{SLO: "p99<=10ms", Reached: e.Reached, PerS: e.Capacity, LowPerS: e.Low, HighPerS: e.High, Floor: e.Floor}
	if line := Line(c); e.Floor < 0.70 || e.Floor > 0.71 || !strings.Contains(line, "already 70% of its limit") || !strings.Contains(line, "3.4× as much") {
		t.Errorf("a workload 7 ms unloaded against 10 ms: floor %.3f, line %q", e.Floor, line)
	}
	c.Floor = 0.3
	if line := Line(c); strings.Contains(line, "already") {
		t.Errorf("floor 0.3 called soft: %q", line)
	}
}

// A search from a hint (a later round of compare) starts near the capacity and never measures the
// start rate, where the floor means something: it gives none rather than the knee's latency.
func TestNoFloorFromAHint(t *testing.T) {
	_, e := run(t, Plan{HintLow: 4400, HintHigh: 4600, Rounds: 1}, queue(5000, 0), 1)
	if e.Floor != 0 || e.Reached != Confirm {
		t.Errorf("floor %.2f, reached %s: want no floor from a search that began at its hint", e.Floor, e.Reached)
	}
}
