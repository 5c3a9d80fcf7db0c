package machineload

import (
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// The memory probe: how long one load from main memory takes on this machine right now, each
// load depending on the last so that none overlaps another. On a shared host the other tenants'
// memory and cache traffic set it, and no counter of the guest shows it: on the 2-core machine
// of docs/measurements.md ("What the rounds' speed follows") steal stayed at 0% while the probe
// moved between about 95 and 160 ns, in stretches of tens of seconds to minutes, and PostgreSQL's
// point-select throughput moved with it (r = -0.75 over 45 windows). A window's result carries
// the probe taken just before and just after it, so a reader can tell a slow engine from a slow
// machine.
const (
	// memoryChainBytes is twice the last-level cache of this machine (32 MiB of L3) and above
	// most a cloud guest sees, so the chase's loads go to memory. Where a cache holds it all, the
	// probe times the cache and moves less: the report's note then does not fire. It is built once
	// and kept (64 MiB of the client's memory).
	memoryChainBytes = 64 << 20
	// memoryProbeLoads is each CPU's share: about 40 ms at 130 ns, short beside any window.
	memoryProbeLoads = 300_000
)

var (
	chainOnce sync.Once
	chain     []uint32
)

// lineSlots is how many chain slots share a 64-byte cache line: the chain links one slot of each
// line, so every load is another line, as with a chain through every slot, for a sixteenth of
// the build (0.5 s of CPU through every slot of 64 MiB, which a run's own CPU figure then held:
// 1-2 µs per transaction of a 15 s run). It reads about 6% above the chain through every slot
// (163 against 154 ns, alternated in one process): compare probes taken by one release.
const lineSlots = 16

// buildChain makes chain one cycle through the first slot of every cache line in a random order
// (Sattolo's shuffle of the lines), so a chase from any line's slot visits every line before it
// repeats and no prefetcher can guess the next.
func buildChain() {
	lines := memoryChainBytes / 4 / lineSlots
	order := make([]uint32, lines)
	for i := range order {
		order[i] = uint32(i)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := lines - 1; i > 0; i-- {
		j := r.IntN(i)
		order[i], order[j] = order[j], order[i]
	}
	chain = make([]uint32, memoryChainBytes/4)
	for i, next := range order {
		chain[i*lineSlots] = next * lineSlots
	}
}

// chase follows the chain for loads steps from start and returns where it ended, so the
// compiler cannot drop the loop.
func chase(start uint32, loads int) uint32 {
	p := start
	for range loads {
		p = chain[p]
	}
	return p
}

// MemoryNS probes every CPU this process may run on at once, one thread pinned to each, and
// returns the mean time of one load in nanoseconds (0 where the probe could not run). All CPUs
// at once because a tenant sharing one core's caches slows that core alone.
func MemoryNS() float64 {
	chainOnce.Do(buildChain)
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return 0
	}
	var cpus []int
	for cpu := range 1024 {
		if set.IsSet(cpu) {
			cpus = append(cpus, cpu)
		}
	}
	times := make([]time.Duration, len(cpus))
	ends := make([]uint32, len(cpus))
	var wg sync.WaitGroup
	for i, cpu := range cpus {
		wg.Go(func() {
			// The thread stays locked and ends with the goroutine, so its pinned mask never
			// reaches another goroutine.
			runtime.LockOSThread()
			var one unix.CPUSet
			one.Set(cpu)
			_ = unix.SchedSetaffinity(0, &one) // unpinned, the probe still measures memory
			t0 := time.Now()
			ends[i] = chase(uint32(i*7919*lineSlots), memoryProbeLoads)
			times[i] = time.Since(t0)
		})
	}
	wg.Wait()
	var sum time.Duration
	for i, d := range times {
		sum += d
		sink.Add(ends[i])
	}
	if len(times) == 0 {
		return 0
	}
	return round1(float64(sum.Nanoseconds()) / float64(len(times)*memoryProbeLoads))
}

// sink keeps the chases' ends, so the compiler cannot prove them unused.
var sink atomic.Uint32
