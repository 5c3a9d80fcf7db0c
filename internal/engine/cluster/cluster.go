// Package cluster starts and stops the throwaway clusters fairbench measures, on the servers
// internal/engine starts: galera (three MariaDB nodes certifying every write on all) and
// postgres-ha (three PostgreSQL nodes under Patroni, with an etcd of their own); and it injects
// their faults (a node killed, frozen or cut off from the network) and heals them.
package cluster

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/fairbench/fairbench/internal/engine"
	"github.com/fairbench/fairbench/internal/engine/discovery"
)

// Cluster is a running throwaway cluster: its nodes are ordinary servers (registered, reaped and
// stopped like any), DSN lists every node so that clients spread over them.
type Cluster struct {
	Kind, Version string
	// DSN lists every node: mariadb://root@127.0.0.1:P1,127.0.0.1:P2,127.0.0.1:P3/fairbench, or
	// for postgres-ha postgres://...@P1,P2,P3/fairbench?...&target_session_attrs=read-write, so that
	// every connection lands on the leader.
	DSN   string
	Nodes []*engine.Server
	// Synchronous says a commit is acknowledged only once a replica has it (Patroni's
	// synchronous_mode; galera always certifies on every node): an acknowledged transaction then
	// survives the loss of any one node.
	Synchronous bool
	Timing      engine.PatroniTiming // postgres-ha: how fast Patroni fails over
	maxLag      int64                // postgres-ha: maximum_lag_on_failover, bytes

	etcd     *etcdProc // postgres-ha's store of the leader lock, stopped after the nodes
	ports    []int     // the cluster's own ports (galera's gcomm, IST, SST; Patroni's REST), released by Stop
	stopOnce sync.Once
	stopErr  error
	// parts are the nodes a fault cut off (galera_fault.go), healed by Stop at the latest.
	partMu sync.Mutex
	parts  map[string]*partition
}

// reservePort reserves a port of the cluster's own into p; Stop releases it.
func (c *Cluster) reservePort(p *int) error {
	port, err := engine.ReservePort()
	if err != nil {
		return err
	}
	*p = port
	c.ports = append(c.ports, port)
	return nil
}

// Stop stops every node at once and removes everything the cluster created. Idempotent.
func (c *Cluster) Stop() error {
	c.stopOnce.Do(func() {
		healErr := c.healAll()
		errs := make([]error, len(c.Nodes))
		var wg sync.WaitGroup
		for i, s := range c.Nodes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = s.Stop()
			}()
		}
		wg.Wait()
		if c.etcd != nil {
			errs = append(errs, c.etcd.stop())
		}
		for _, p := range c.ports {
			engine.ReleasePort(p)
		}
		c.stopErr = errors.Join(append(errs, healErr)...)
	})
	return c.stopErr
}

// waitFor polls check until it succeeds, ReadyTimeout passes or ctx ends.
func (c *Cluster) waitFor(ctx context.Context, check func() error) error {
	deadline := time.Now().Add(engine.ReadyTimeout)
	for {
		err := check()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready within %s: %w", engine.ReadyTimeout, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// node is the node named name, nil if none is.
func (c *Cluster) node(name string) *engine.Server {
	for i, s := range c.Nodes {
		if c.NodeName(i) == name {
			return s
		}
	}
	return nil
}

// NodeName is the name of the i-th node: node1, node2, ...
func (c *Cluster) NodeName(i int) string {
	if p := c.Nodes[i].Membership().Patroni; p != nil {
		return p.Name
	}
	return "node" + strconv.Itoa(i+1)
}

// kinds are the engines that start several nodes and take faults (--fault).
var kinds = map[string]bool{discovery.Galera: true, discovery.PostgresHA: true}

// IsCluster says whether kind starts a cluster.
func IsCluster(kind string) bool { return kinds[kind] }

// EveryNodeWrites says whether every node of kind takes writes (no leader to kill).
func EveryNodeWrites(kind string) bool { return kind == discovery.Galera }

// NodeNames are the node names a cluster of kind will have, for checking --fault node= before
// it starts; nil where they are known only once it runs.
func NodeNames(kind string) []string {
	if kind != discovery.Galera {
		return nil
	}
	return (&GaleraFaults{c: &Cluster{Nodes: make([]*engine.Server, GaleraNodes)}}).Nodes()
}
