package cluster

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"syscall"

	"github.com/fairbench/fairbench/internal/engine"
)

// GaleraFaults is a galera cluster as fault.Cluster sees it: nodes named node1..node3 in start
// order (node1 founded the cluster and holds fairbench's admin connection), no leader, and faults
// sent to each node's own process.
type GaleraFaults struct{ c *Cluster }

// Faults is the cluster for fault injection during a run.
func (c *Cluster) Faults() *GaleraFaults { return &GaleraFaults{c: c} }

// Nodes names the nodes as their wsrep_node_name says.
func (g *GaleraFaults) Nodes() []string {
	out := make([]string, len(g.c.Nodes))
	for i := range g.c.Nodes {
		out[i] = "node" + strconv.Itoa(i+1)
	}
	return out
}

// Leader is "": every galera node takes writes.
func (g *GaleraFaults) Leader(context.Context) (string, error) { return "", nil }

// EveryNodeWrites marks the cluster leaderless, so kill-leader is refused before a run.
func (g *GaleraFaults) EveryNodeWrites() {}

func (g *GaleraFaults) node(name string) (*engine.Server, error) {
	for i, s := range g.c.Nodes {
		if name == "node"+strconv.Itoa(i+1) {
			return s, nil
		}
	}
	return nil, fmt.Errorf("galera has no node %q (its nodes: %v)", name, g.Nodes())
}

// signal sends sig to the node's server process (Server.Fault).
func (g *GaleraFaults) signal(name string, sig syscall.Signal) error {
	s, err := g.node(name)
	if err != nil {
		return err
	}
	if err := s.Fault(sig); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// Kill is a crash of the node's host: SIGKILL to its process group, no shutdown, no goodbye to
// the cluster; the kernel resets its connections. The node stays down; Stop removes it.
func (g *GaleraFaults) Kill(name string) error { return g.signal(name, syscall.SIGKILL) }

// Stop freezes the node (SIGSTOP): its sockets stay open and nothing answers, as a host that
// hangs. The cluster evicts it after galera's suspect timeout (evs.suspect_timeout, 5 s).
func (g *GaleraFaults) Stop(name string) error { return g.signal(name, syscall.SIGSTOP) }

// Cont thaws a node Stop froze.
func (g *GaleraFaults) Cont(name string) error { return g.signal(name, syscall.SIGCONT) }

// Partition cuts the node off from its peers and its clients (partition.go).
func (g *GaleraFaults) Partition(name string) error {
	s, err := g.node(name)
	if err != nil {
		return err
	}
	g.c.partMu.Lock()
	defer g.c.partMu.Unlock()
	if g.c.parts[name] != nil {
		return fmt.Errorf("%s is already cut off", name)
	}
	p, err := cut(s, name)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if g.c.parts == nil {
		g.c.parts = map[string]*partition{}
	}
	g.c.parts[name] = p
	return nil
}

// Heal reconnects a node Partition cut off.
func (g *GaleraFaults) Heal(name string) error {
	g.c.partMu.Lock()
	p := g.c.parts[name]
	delete(g.c.parts, name)
	g.c.partMu.Unlock()
	if p == nil {
		return fmt.Errorf("%s is not cut off", name)
	}
	return p.heal()
}

// healAll removes every partition still in place (Cluster.Stop).
func (c *Cluster) healAll() error {
	c.partMu.Lock()
	parts := c.parts
	c.parts = nil
	c.partMu.Unlock()
	var errs []error
	for _, p := range parts {
		errs = append(errs, p.heal())
	}
	return errors.Join(errs...)
}
