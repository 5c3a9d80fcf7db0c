package cluster

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"strconv"

	"github.com/fairbench/fairbench/internal/engine"
	"github.com/fairbench/fairbench/internal/engine/discovery"
	"github.com/fairbench/fairbench/internal/engine/profile"
)

// GaleraNodes is the size of a galera cluster: three, the fewest that keep a quorum (and so
// keep accepting writes) when one node fails.
const GaleraNodes = 3

// StartGalera starts GaleraNodes nodes of the host's MariaDB: the first founds the cluster
// (--wsrep-new-cluster) and creates the database, the others join it one by one, receiving its
// data by rsync. It returns once every node reports the cluster whole and synced. On failure
// every node started so far is stopped and removed.
func StartGalera(ctx context.Context, inst discovery.Installation, prof profile.Profile, workDir string) (_ *Cluster, err error) {
	if inst.NodeKind() != discovery.MariaDB || inst.Root != "" {
		return nil, fmt.Errorf("galera runs on the host's MariaDB (Debian 12's 10.11 with galera-4), not %s: run scripts/install-engines.sh", inst)
	}
	if _, err := os.Stat(discovery.GaleraProvider); err != nil {
		return nil, fmt.Errorf("galera provider %s is missing: run scripts/install-engines.sh (it installs galera-4)", discovery.GaleraProvider)
	}
	c := &Cluster{Kind: discovery.Galera, Version: inst.Version, Synchronous: true}
	inst.Kind = discovery.MariaDB
	defer func() {
		if err != nil {
			_ = c.Stop()
			err = fmt.Errorf("start galera: %w", err)
		}
	}()
	nodes, err := c.planNodes()
	if err != nil {
		return nil, err
	}
	password := rand.Text() // the founder sets it, joiners receive it
	var addrs []string
	for _, n := range nodes {
		s, err := engine.StartMember(ctx, inst, prof, workDir, engine.Membership{Password: password, Galera: n})
		if err != nil {
			return nil, fmt.Errorf("node %d: %w", n.Index+1, err)
		}
		c.Nodes = append(c.Nodes, s)
		addrs = append(addrs, "127.0.0.1:"+strconv.Itoa(s.Port))
	}
	if err := c.waitSynced(ctx); err != nil {
		return nil, err
	}
	c.DSN = c.Nodes[0].DSNFor(addrs, "")
	return c, nil
}

// planNodes reserves each node's gcomm, IST and SST ports: every node must know all gcomm
// addresses before the first one starts.
func (c *Cluster) planNodes() ([]*engine.GaleraNode, error) {
	nodes := make([]*engine.GaleraNode, GaleraNodes)
	var peers []string
	for i := range nodes {
		n := &engine.GaleraNode{Index: i, Joiner: i > 0}
		for _, p := range []*int{&n.GComm, &n.IST, &n.SST} {
			if err := c.reservePort(p); err != nil {
				return nil, err
			}
		}
		peers = append(peers, "127.0.0.1:"+strconv.Itoa(n.GComm))
		nodes[i] = n
	}
	for _, n := range nodes {
		n.Peers = peers
	}
	return nodes, nil
}

// waitSynced polls until every node sees all nodes and reports Synced.
func (c *Cluster) waitSynced(ctx context.Context) error {
	return c.waitFor(ctx, func() error {
		for _, s := range c.Nodes {
			if err := checkSynced(ctx, s, len(c.Nodes)); err != nil {
				return fmt.Errorf("cluster not synced: %w", err)
			}
		}
		return nil
	})
}

func checkSynced(ctx context.Context, s *engine.Server, want int) error {
	st, err := s.WsrepStatus(ctx)
	if err != nil {
		return err
	}
	if st["wsrep_cluster_size"] != strconv.Itoa(want) || st["wsrep_local_state_comment"] != "Synced" {
		return fmt.Errorf("node on port %d: cluster size %s, state %s", s.Port, st["wsrep_cluster_size"], st["wsrep_local_state_comment"])
	}
	return nil
}
