package cluster

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/fairbench/fairbench/internal/engine"
	"github.com/fairbench/fairbench/internal/engine/discovery"
	"github.com/fairbench/fairbench/internal/engine/profile"
)

// PostgresHANodes is the size of a postgres-ha cluster: a leader and two replicas, so that with
// synchronous mode one replica can be lost and the other still confirms every commit.
const PostgresHANodes = 3

// HAOptions are the choices of a postgres-ha cluster that change what it guarantees.
type HAOptions struct {
	// Async turns Patroni's synchronous_mode off: the leader acknowledges a commit before any
	// replica has it, so a failover can lose acknowledged transactions (the loss test uses it).
	Async  bool
	Timing engine.PatroniTiming // zero: engine.DefaultPatroniTiming
	// MaxLagOnFailover is how far behind (WAL bytes) a replica may be and still be promoted;
	// zero: Patroni's 1 MiB. Only asynchronous mode lets a replica fall behind at all.
	MaxLagOnFailover int64
}

// NodeInfo is what the report and the fault injector need of one node: its name, its DSN (the
// node alone, not the host list), and its role now as Patroni sees it (leader, sync_standby,
// replica; "" when its Patroni does not answer).
type NodeInfo struct {
	Name, DSN, Role, State string
	Port                   int
	LagBytes               int64 // replication lag Patroni reports for a replica, -1 when unknown
}

// StartPostgresHA starts etcd and PostgresHANodes Patroni nodes of the host's PostgreSQL: node1
// bootstraps the cluster (initdb) and creates the database, the others join as replicas by
// pg_basebackup. It returns once the cluster has a leader and every replica streams from it.
// On failure everything started so far is stopped and removed.
func StartPostgresHA(ctx context.Context, inst discovery.Installation, prof profile.Profile, workDir string, opts HAOptions) (_ *Cluster, err error) {
	if inst.NodeKind() != discovery.Postgres || inst.Root != "" {
		return nil, fmt.Errorf("postgres-ha runs on the host's PostgreSQL (Debian 12's 15 with patroni and etcd-server), not %s: run scripts/install-engines.sh", inst)
	}
	if !discovery.IsExecutable(discovery.PatroniBinary) {
		return nil, fmt.Errorf("%s is missing: run scripts/install-engines.sh (it installs patroni and etcd-server)", discovery.PatroniBinary)
	}
	if opts.Timing == (engine.PatroniTiming{}) {
		opts.Timing = engine.DefaultPatroniTiming
	}
	if opts.MaxLagOnFailover == 0 {
		opts.MaxLagOnFailover = 1 << 20
	}
	c := &Cluster{Kind: discovery.PostgresHA, Version: inst.Version, Synchronous: !opts.Async, Timing: opts.Timing, maxLag: opts.MaxLagOnFailover}
	inst.Kind = discovery.Postgres
	defer func() {
		if err != nil {
			_ = c.Stop()
			err = fmt.Errorf("start postgres-ha: %w", err)
		}
	}()
	if c.etcd, err = startEtcd(ctx, workDir); err != nil {
		return nil, err
	}
	var addrs []string
	// One password for the cluster's superuser, replication user and REST API: the replicas
	// copy the leader's accounts.
	password := rand.Text()
	for i := range PostgresHANodes {
		pn := &engine.PatroniNode{Name: "node" + strconv.Itoa(i+1), Etcd: c.etcd.Addr(),
			Async: opts.Async, Timing: opts.Timing, MaxLagOnFailover: opts.MaxLagOnFailover}
		if err := c.reservePort(&pn.REST); err != nil {
			return nil, err
		}
		s, err := engine.StartMember(ctx, inst, prof, workDir, engine.Membership{Password: password, Patroni: pn})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", pn.Name, err)
		}
		c.Nodes = append(c.Nodes, s)
		addrs = append(addrs, "127.0.0.1:"+strconv.Itoa(s.Port))
		if i == 0 {
			// Before the replicas copy it, so that they have the database too.
			if err := c.createDatabase(ctx, s); err != nil {
				return nil, err
			}
		}
	}
	if err := c.waitStreaming(ctx); err != nil {
		return nil, err
	}
	c.DSN = c.Nodes[0].DSNFor(addrs, "sslmode=disable&target_session_attrs=read-write")
	return c, nil
}

// createDatabase waits until the bootstrapping node is the leader and creates the database
// there, as on a single server.
func (c *Cluster) createDatabase(ctx context.Context, s *engine.Server) error {
	if err := c.waitFor(ctx, func() error {
		role, err := patroniRole(ctx, s)
		if err == nil && role != "leader" && role != "master" && role != "primary" {
			err = fmt.Errorf("%s is %s, not yet the leader", nameOf(s), role)
		}
		return err
	}); err != nil {
		return err
	}
	return s.CreateDatabase(ctx)
}

// waitStreaming waits until the leader sees every replica streaming, and, in synchronous mode,
// one of them confirming commits: the state in which an acknowledged commit survives a failover.
func (c *Cluster) waitStreaming(ctx context.Context) error {
	return c.waitFor(ctx, func() error {
		leader, err := c.LeaderNode(ctx)
		if err != nil {
			return err
		}
		conn, err := leader.PgConnect(ctx)
		if err != nil {
			return err
		}
		defer conn.Close(context.Background())
		var streaming, sync int
		if err := conn.QueryRow(ctx, `SELECT count(*) FILTER (WHERE state = 'streaming'),
			count(*) FILTER (WHERE state = 'streaming' AND sync_state = 'sync') FROM pg_stat_replication`).Scan(&streaming, &sync); err != nil {
			return err
		}
		if streaming < len(c.Nodes)-1 || (c.Synchronous && sync < 1) {
			return fmt.Errorf("leader %s: %d of %d replicas streaming, %d synchronous", nameOf(leader), streaming, len(c.Nodes)-1, sync)
		}
		if c.Synchronous && !c.patroniNamesSyncStandby(ctx) {
			return fmt.Errorf("leader %s: Patroni names no sync_standby yet", nameOf(leader))
		}
		return nil
	})
}

// patroniNamesSyncStandby reports whether Patroni's own view has a sync_standby. PostgreSQL shows
// a replica as sync a loop before Patroni records it in its /sync key, and until then Patroni
// would promote no one if the leader died: a cluster is ready only once both agree.
func (c *Cluster) patroniNamesSyncStandby(ctx context.Context) bool {
	members, err := c.clusterView(ctx)
	if err != nil {
		return false
	}
	for _, m := range members {
		if m["role"] == "sync_standby" {
			return true
		}
	}
	return false
}

// patroniRole is the node's role as its Patroni sees it (GET /patroni of its REST API), an
// error while Patroni does not say it is running.
func patroniRole(ctx context.Context, s *engine.Server) (string, error) {
	st, err := restGet(ctx, restURL(s, "/patroni"))
	if err != nil {
		return "", err
	}
	role, _ := st["role"].(string)
	if state, _ := st["state"].(string); state != "running" {
		return "", fmt.Errorf("%s is %s (%s)", nameOf(s), state, role)
	}
	return role, nil
}

// restURL is the address of path on the node's Patroni REST API.
func restURL(s *engine.Server, path string) string {
	return "http://127.0.0.1:" + strconv.Itoa(s.Membership().Patroni.REST) + path
}

// nameOf is a postgres-ha node's name as Patroni knows it.
func nameOf(s *engine.Server) string { return s.Membership().Patroni.Name }

func restGet(ctx context.Context, url string) (map[string]any, error) {
	rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		return nil, fmt.Errorf("%s: %s: %w", url, resp.Status, err)
	}
	return m, nil
}

// clusterView is GET /cluster from the first node that answers: the members as the DCS has them.
func (c *Cluster) clusterView(ctx context.Context) ([]map[string]any, error) {
	var last error = errors.New("no node")
	for _, s := range c.Nodes {
		if !s.Alive() {
			continue
		}
		m, err := restGet(ctx, restURL(s, "/cluster"))
		if err != nil {
			last = err
			continue
		}
		members, _ := m["members"].([]any)
		var out []map[string]any
		for _, x := range members {
			if mm, ok := x.(map[string]any); ok {
				out = append(out, mm)
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("no Patroni node answers: %w", last)
}

// LeaderNode is the node holding Patroni's leader lock and running as primary now; an error
// while there is none (an election under way).
func (c *Cluster) LeaderNode(ctx context.Context) (*engine.Server, error) {
	if c.Kind != discovery.PostgresHA {
		return nil, fmt.Errorf("%s has no single leader", c.Kind)
	}
	members, err := c.clusterView(ctx)
	if err != nil {
		return nil, err
	}
	for _, m := range members {
		if m["role"] == "leader" && m["state"] == "running" {
			if s := c.node(fmt.Sprint(m["name"])); s != nil && s.Alive() {
				// The lock comes before the promotion: a leader is one that takes writes.
				if err := checkWritable(ctx, s); err != nil {
					return nil, err
				}
				return s, nil
			}
		}
	}
	return nil, errors.New("no leader now (an election may be under way)")
}

// checkWritable says whether the node's postgres has finished recovery and takes writes.
func checkWritable(ctx context.Context, s *engine.Server) error {
	conn, err := s.PgConnect(ctx)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	var recovering bool
	if err := conn.QueryRow(ctx, "SELECT pg_is_in_recovery()").Scan(&recovering); err != nil {
		return err
	}
	if recovering {
		return fmt.Errorf("%s holds the leader lock but is still being promoted", nameOf(s))
	}
	return nil
}

// NodeInfos describes every node now: name, its own DSN, role and state as Patroni's DCS has
// them, and the replication lag it reports in bytes. The cluster figures (replication lag per
// interval, per-node server figures) read it; a node whose Patroni is gone has Role "".
func (c *Cluster) NodeInfos(ctx context.Context) []NodeInfo {
	byName := map[string]map[string]any{}
	if members, err := c.clusterView(ctx); err == nil {
		for _, m := range members {
			byName[fmt.Sprint(m["name"])] = m
		}
	}
	var out []NodeInfo
	for i, s := range c.Nodes {
		in := NodeInfo{Name: c.NodeName(i), DSN: s.DSN, Port: s.Port, LagBytes: -1}
		if m, ok := byName[in.Name]; ok && s.Alive() {
			in.Role, _ = m["role"].(string)
			in.State, _ = m["state"].(string)
			if lag, ok := m["lag"].(float64); ok {
				in.LagBytes = int64(lag)
			}
		}
		out = append(out, in)
	}
	return out
}
