package cluster

import (
	"context"
	"fmt"
	"syscall"
)

// PatroniFaults is a postgres-ha cluster as fault.Cluster sees it: nodes named as Patroni names
// them (node1..node3), the leader as Patroni's lock and pg_is_in_recovery() say, and faults sent
// to a node's Patroni and its postgres together, as a host's failure reaches both.
type PatroniFaults struct{ c *Cluster }

// PatroniFaults is the cluster for fault injection during a run.
func (c *Cluster) PatroniFaults() *PatroniFaults { return &PatroniFaults{c: c} }

// Nodes names the nodes in start order.
func (p *PatroniFaults) Nodes() []string {
	out := make([]string, len(p.c.Nodes))
	for i := range p.c.Nodes {
		out[i] = p.c.NodeName(i)
	}
	return out
}

// Leader is the node holding the leader lock and taking writes; an error during an election.
func (p *PatroniFaults) Leader(ctx context.Context) (string, error) {
	s, err := p.c.LeaderNode(ctx)
	if err != nil {
		return "", err
	}
	return nameOf(s), nil
}

func (p *PatroniFaults) signal(name string, sig syscall.Signal) error {
	s := p.c.node(name)
	if s == nil {
		return fmt.Errorf("postgres-ha has no node %q (its nodes: %v)", name, p.Nodes())
	}
	if err := s.Fault(sig); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// Kill is a crash of the node's host: SIGKILL to Patroni and every postgres process of the node
// at once, no shutdown, no leader key released; the others take over once its lock expires
// (Timing.TTL). The node stays down; Stop removes it.
func (p *PatroniFaults) Kill(name string) error { return p.signal(name, syscall.SIGKILL) }

// Stop freezes the node, Patroni and postgres (SIGSTOP): connections stay open and nothing
// answers. A frozen leader loses its lock after the TTL and a replica is promoted; thawed, it
// finds the lock gone and Patroni demotes it.
func (p *PatroniFaults) Stop(name string) error { return p.signal(name, syscall.SIGSTOP) }

// Cont thaws a node Stop froze.
func (p *PatroniFaults) Cont(name string) error { return p.signal(name, syscall.SIGCONT) }

// Partition cuts the node off from its clients, its peers and etcd, as galera's nodes are
// (partition.go: its SQL and REST ports, the connections Patroni and postgres opened, and a
// cgroup v2 match for new ones). A leader cut off cannot renew its lock: Patroni demotes it after
// the TTL and a replica takes over.
func (p *PatroniFaults) Partition(name string) error {
	if p.c.node(name) == nil {
		return fmt.Errorf("postgres-ha has no node %q (its nodes: %v)", name, p.Nodes())
	}
	// Both kinds name their nodes node1..N in start order, so galera's bookkeeping serves.
	return p.c.Faults().Partition(name)
}

// Heal reconnects a node Partition cut off.
func (p *PatroniFaults) Heal(name string) error { return p.c.Faults().Heal(name) }

// LossSetting is the cluster's (Cluster.LossSetting), for the acknowledged-transaction check.
func (p *PatroniFaults) LossSetting() string { return p.c.LossSetting() }

// LossSetting names what lets this cluster lose a transaction it acknowledged when its leader
// fails, for the report beside a loss count (result.AckCheck.Setting): "" where a commit waits
// for a replica (synchronous mode, galera's certification).
func (c *Cluster) LossSetting() string {
	if c.Synchronous {
		return ""
	}
	return fmt.Sprintf("synchronous_mode=off (Patroni): asynchronous streaming replication acknowledges a commit before any replica has it, "+
		"and a replica up to maximum_lag_on_failover=%d bytes behind may be promoted", c.maxLag)
}
