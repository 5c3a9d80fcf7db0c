package compare

import (
	"fmt"
	"slices"

	"github.com/fairbench/fairbench/internal/engine/cluster"
	"github.com/fairbench/fairbench/internal/runspec"
	"github.com/fairbench/fairbench/internal/suite"
)

// checkFaults refuses, before any server starts, faults the comparison cannot inject: on an
// engine that is a single server, kill-leader on a cluster where every node writes, with client
// hosts (whose runs are other processes), and a fault outside a step's measured time.
func checkFaults(o *Options, insts []Contender, steps []suite.Resolved) error {
	if len(o.Faults) == 0 {
		return nil
	}
	if o.Clients > 0 || o.Network != nil {
		return &runspec.InputError{Setting: "--fault", Problem: "faults are injected by this process, not by simulated client hosts", Fix: "leave out --clients and --network"}
	}
	for _, inst := range insts {
		if !cluster.IsCluster(inst.Kind) {
			return &runspec.InputError{Setting: "--fault", Value: o.Faults[0].String(),
				Problem: fmt.Sprintf("%s is a single server: a fault needs a cluster to fail over to", inst.Name()),
				Fix:     "compare clusters only, e.g. --engines galera"}
		}
		for _, f := range o.Faults {
			if nodes := cluster.NodeNames(inst.Kind); f.Node != "" && nodes != nil && !slices.Contains(nodes, f.Node) {
				return &runspec.InputError{Setting: "--fault", Value: f.String(),
					Problem: fmt.Sprintf("%s has no node %q", inst.Name(), f.Node), Fix: fmt.Sprintf("name one of %v", nodes)}
			}
			if f.Kind == runspec.KillLeader && cluster.EveryNodeWrites(inst.Kind) {
				return &runspec.InputError{Setting: "--fault", Value: f.String(),
					Problem: fmt.Sprintf("every node of %s takes writes, so none leads", inst.Name()), Fix: "use kill-node@" + f.At.String()}
			}
		}
	}
	for _, st := range steps {
		if err := runspec.CheckFaults("--fault", o.Faults, st.Time); err != nil {
			return fmt.Errorf("suite step %s: %w", st.Workload, err)
		}
	}
	return nil
}
