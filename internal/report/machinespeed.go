package report

import (
	"fmt"

	"github.com/fairbench/fairbench/internal/result"
)

// memorySpreadLimit is how far apart the machine's memory speed may be across a comparison's
// windows before the report says so: a fifth is about the rounds' own spread on a quiet host.
const memorySpreadLimit = 1.2

// memoryNote says when the windows ran on a machine whose memory speed moved (the probe taken
// before each window, machine.memory_ns_before): on a shared host other tenants' traffic slows
// every engine's memory alike, no CPU counter shows it, and the rounds' throughput moves with
// it, so picks between near-equal engines need more rounds. Empty when it held still, or where
// fewer than two windows were probed.
func memoryNote(results []*result.Result) string {
	lo, hi, n := 0.0, 0.0, 0
	for _, r := range results {
		if r.Machine == nil || r.Machine.MemoryNSBefore <= 0 {
			continue
		}
		ns := r.Machine.MemoryNSBefore
		if n == 0 || ns < lo {
			lo = ns
		}
		hi = max(hi, ns)
		n++
	}
	if n < 2 || hi < lo*memorySpreadLimit {
		return ""
	}
	return fmt.Sprintf("The machine's memory speed moved under these runs: a load from memory took %.0f-%.0f ns (%.2f× apart) in the probes before their %d windows. "+
		"Other tenants of a shared host set it and steal does not show it; the engines' throughput follows it, so rounds spread wider than the engines differ and picks between near-equal engines take more rounds. "+
		"Each result keeps its probe (machine.memory_ns_before).", lo, hi, hi/lo, n)
}
