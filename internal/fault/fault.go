// Package fault injects failures into a cluster fairbench started, during a measured run: a node
// killed as if its host crashed, frozen (SIGSTOP) and thawed, or cut off from its peers and
// clients and healed. The engines implement Cluster; the runner's scheduler fires the faults a
// run asked for (runspec's --fault) at their offsets from the measured window's start.
package fault

import "context"

// Cluster is what a fault needs from a cluster fairbench started. Node names are those Nodes
// returns; every method that takes a node returns an error naming an unknown one.
type Cluster interface {
	// Nodes lists the cluster's nodes in a stable order (node1, node2, node3).
	Nodes() []string
	// Leader is the node taking writes now: "" where every node does (Galera), an error where
	// none does at the moment (an election under way).
	Leader(ctx context.Context) (string, error)
	// Kill is a crash of the node's host: SIGKILL to its server (and, for Patroni, its Patroni),
	// with no shutdown. The node stays down for the rest of the run.
	Kill(node string) error
	// Stop freezes the node (SIGSTOP): connections stay open but nothing answers.
	Stop(node string) error
	// Cont thaws a node Stop froze (SIGCONT).
	Cont(node string) error
	// Partition cuts the node off from its peers and its clients: packets to and from its ports
	// are dropped, so connections hang rather than being refused.
	Partition(node string) error
	// Heal undoes Partition.
	Heal(node string) error
}
