package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/fairbench/fairbench/internal/engine/discovery"
	"github.com/fairbench/fairbench/internal/engine/profile"
	"github.com/jackc/pgx/v5"
	"gopkg.in/yaml.v3"
)

// PostgresHANodes is the size of a postgres-ha cluster: a leader and two replicas, so that with
// synchronous mode one replica can be lost and the other still confirms every commit.
const PostgresHANodes = 3

// PatroniTiming is how fast Patroni notices a lost leader: the leader lock expires TTL seconds
// after the leader last renewed it, each node looks every LoopWait seconds, and a DCS or
// PostgreSQL call is retried for RetryTimeout. Patroni requires LoopWait + 2×RetryTimeout ≤ TTL.
type PatroniTiming struct{ TTL, LoopWait, RetryTimeout int }

// DefaultPatroniTiming is a third of Patroni's own 30/10/10: a failover then takes about 10-15 s,
// short enough to show within a benchmark run of a minute, and still far above a loaded
// loopback's latencies, so no healthy leader loses its lock. Tests may lower it.
var DefaultPatroniTiming = PatroniTiming{TTL: 10, LoopWait: 2, RetryTimeout: 4}

// HAOptions are the choices of a postgres-ha cluster that change what it guarantees.
type HAOptions struct {
	// Async turns Patroni's synchronous_mode off: the leader acknowledges a commit before any
	// replica has it, so a failover can lose acknowledged transactions (the loss test uses it).
	Async  bool
	Timing PatroniTiming // zero: DefaultPatroniTiming
	// MaxLagOnFailover is how far behind (WAL bytes) a replica may be and still be promoted;
	// zero: Patroni's 1 MiB. Only asynchronous mode lets a replica fall behind at all.
	MaxLagOnFailover int64
}

// patroniNode is one node's place in a postgres-ha cluster.
type patroniNode struct {
	name string // node1, node2, ...
	rest int    // Patroni's REST API port
	etcd string // host:port of the cluster's etcd
	opts HAOptions
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
	if opts.Timing == (PatroniTiming{}) {
		opts.Timing = DefaultPatroniTiming
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
	password := newPassword()
	for i := range PostgresHANodes {
		pn := &patroniNode{name: "node" + itoa(i+1), etcd: c.etcd.Addr(), opts: opts}
		if pn.rest, err = reservePort(); err != nil {
			return nil, err
		}
		c.ports = append(c.ports, pn.rest)
		s, err := startWith(ctx, inst, prof, workDir, reservePort, func(s *Server) { s.patroni, s.password = pn, password })
		if err != nil {
			return nil, fmt.Errorf("%s: %w", pn.name, err)
		}
		c.Nodes = append(c.Nodes, s)
		addrs = append(addrs, "127.0.0.1:"+itoa(s.Port))
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
	c.DSN = c.Nodes[0].dsnFor(addrs, "sslmode=disable&target_session_attrs=read-write")
	return c, nil
}

// createDatabase waits until the bootstrapping node is the leader and creates the database
// there, as on a single server.
func (c *Cluster) createDatabase(ctx context.Context, s *Server) error {
	if err := c.waitFor(ctx, func() error {
		role, err := s.patroniRole(ctx)
		if err == nil && role != "leader" && role != "master" && role != "primary" {
			err = fmt.Errorf("%s is %s, not yet the leader", s.patroni.name, role)
		}
		return err
	}); err != nil {
		return err
	}
	return s.setupPostgres(ctx)
}

// waitStreaming waits until the leader sees every replica streaming, and, in synchronous mode,
// one of them confirming commits: the state in which an acknowledged commit survives a failover.
func (c *Cluster) waitStreaming(ctx context.Context) error {
	return c.waitFor(ctx, func() error {
		leader, err := c.LeaderNode(ctx)
		if err != nil {
			return err
		}
		conn, err := leader.pgConnect(ctx, "postgres")
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
			return fmt.Errorf("leader %s: %d of %d replicas streaming, %d synchronous", leader.patroni.name, streaming, len(c.Nodes)-1, sync)
		}
		if c.Synchronous && !c.patroniNamesSyncStandby(ctx) {
			return fmt.Errorf("leader %s: Patroni names no sync_standby yet", leader.patroni.name)
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

// waitFor polls check until it succeeds, ReadyTimeout passes or ctx ends.
func (c *Cluster) waitFor(ctx context.Context, check func() error) error {
	deadline := time.Now().Add(ReadyTimeout)
	for {
		err := check()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready within %s: %w", ReadyTimeout, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// patroniConfig is the node's Patroni YAML: every node gets the fairness profile's settings in
// bootstrap.dcs (the cluster-wide configuration, which is where Patroni takes max_connections and
// the other settings primary and replicas must share) and again in its own postgresql.parameters.
func (s *Server) patroniConfig() map[string]any {
	pn := s.patroni
	params := map[string]any{}
	for k, v := range s.Applied {
		if !profile.InitdbKeys[k] && k != "listen_addresses" && k != "port" {
			params[k] = v
		}
	}
	sockDir := s.innerRun
	if len(sockDir)+len("/.s.PGSQL.65535") > unixSocketMax {
		sockDir = ""
	}
	params["unix_socket_directories"] = sockDir
	initdb := []any{map[string]string{"encoding": s.Applied["server_encoding"]}, map[string]string{"locale": s.Applied["lc_collate"]}}
	for _, f := range profile.InitdbFlags(s.Translations()) {
		k, v, hasV := strings.Cut(strings.TrimPrefix(f, "--"), "=")
		if hasV {
			initdb = append(initdb, map[string]string{k: v})
		} else {
			initdb = append(initdb, k)
		}
	}
	pg := "127.0.0.1:" + itoa(s.Port)
	rest := "127.0.0.1:" + itoa(pn.rest)
	return map[string]any{
		"scope": "fairbench", "name": pn.name,
		// Changes through the REST API (restart, failover, reinitialise) need the password; reads
		// (GET /patroni, /cluster) stay open, which is all fairbench uses.
		"restapi": map[string]any{"listen": rest, "connect_address": rest,
			"authentication": map[string]string{"username": "fairbench", "password": s.password}},
		"etcd3": map[string]any{"hosts": pn.etcd, "protocol": "http"},
		"bootstrap": map[string]any{
			"dcs": map[string]any{
				"ttl": pn.opts.Timing.TTL, "loop_wait": pn.opts.Timing.LoopWait, "retry_timeout": pn.opts.Timing.RetryTimeout,
				"synchronous_mode": !pn.opts.Async, "maximum_lag_on_failover": pn.opts.MaxLagOnFailover,
				// pg_rewind needs wal_log_hints (or checksums), which costs WAL the single
				// server does not write: a demoted leader is rebuilt instead, not rewound.
				"postgresql": map[string]any{"use_pg_rewind": false, "use_slots": true, "parameters": params},
			},
			"initdb": initdb,
		},
		"postgresql": map[string]any{
			"listen": pg, "connect_address": pg,
			"data_dir": s.inner("data"), "bin_dir": filepath.Dir(s.inst.Binary),
			"pgpass": s.inner("pgpass"),
			// A replica's copy starts at once instead of after a spread checkpoint (minutes).
			"basebackup": []any{map[string]string{"checkpoint": "fast"}},
			"parameters": params,
			// Loopback only: every client and replica of a throwaway cluster is on this machine.
			"pg_hba": []string{
				"local all all trust",
				"host all all 127.0.0.1/32 scram-sha-256",
				"host replication replicator 127.0.0.1/32 scram-sha-256",
			},
			"authentication": map[string]any{
				"superuser":   map[string]string{"username": "fairbench", "password": s.password},
				"replication": map[string]string{"username": "replicator", "password": s.password},
			},
		},
		"watchdog": map[string]any{"mode": "off"},
	}
}

// patroniCmd writes the node's configuration (with the port just picked) and returns the command
// that runs Patroni on it, as the postgres user like a plain server.
func (s *Server) patroniCmd() (*exec.Cmd, error) {
	b, err := yaml.Marshal(s.patroniConfig())
	if err != nil {
		return nil, err
	}
	path := s.host("patroni.yml")
	// It holds the cluster's password: readable by its owner (the postgres user) alone.
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return nil, err
	}
	if cred := s.credential(); cred != nil {
		if err := os.Chown(path, int(cred.Uid), int(cred.Gid)); err != nil {
			return nil, err
		}
	}
	return exec.Command(discovery.PatroniBinary, path), nil
}

// preparePatroni hands the run dir to the postgres user, who runs Patroni, initdb and
// pg_basebackup; Patroni creates the data directory itself.
func (s *Server) preparePatroni() error {
	if cred := s.credential(); cred != nil {
		return os.Chown(s.hostRun, int(cred.Uid), int(cred.Gid))
	}
	return nil
}

// patroniStatus is GET /patroni of the node's REST API: its role and state as Patroni sees them.
func (s *Server) patroniStatus(ctx context.Context) (map[string]any, error) {
	return restGet(ctx, "http://127.0.0.1:"+itoa(s.patroni.rest)+"/patroni")
}

func (s *Server) patroniRole(ctx context.Context) (string, error) {
	st, err := s.patroniStatus(ctx)
	if err != nil {
		return "", err
	}
	role, _ := st["role"].(string)
	if state, _ := st["state"].(string); state != "running" {
		return "", fmt.Errorf("%s is %s (%s)", s.patroni.name, state, role)
	}
	return role, nil
}

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
		m, err := restGet(ctx, "http://127.0.0.1:"+itoa(s.patroni.rest)+"/cluster")
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
func (c *Cluster) LeaderNode(ctx context.Context) (*Server, error) {
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
				if err := s.checkWritable(ctx); err != nil {
					return nil, err
				}
				return s, nil
			}
		}
	}
	return nil, errors.New("no leader now (an election may be under way)")
}

// checkWritable says whether the node's postgres has finished recovery and takes writes.
func (s *Server) checkWritable(ctx context.Context) error {
	conn, err := s.pgConnect(ctx, "postgres")
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	var recovering bool
	if err := conn.QueryRow(ctx, "SELECT pg_is_in_recovery()").Scan(&recovering); err != nil {
		return err
	}
	if recovering {
		return fmt.Errorf("%s holds the leader lock but is still being promoted", s.patroni.name)
	}
	return nil
}

// node is the node named name, nil if none is.
func (c *Cluster) node(name string) *Server {
	for i, s := range c.Nodes {
		if c.NodeName(i) == name {
			return s
		}
	}
	return nil
}

// NodeName is the name of the i-th node: node1, node2, ...
func (c *Cluster) NodeName(i int) string {
	if c.Nodes[i].patroni != nil {
		return c.Nodes[i].patroni.name
	}
	return "node" + itoa(i+1)
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

// PgConnect connects to this node alone, to the fairbench database as its superuser: for admin
// work on one node (pg_stat_replication, pausing a replica's replay) that no host list may route.
func (s *Server) PgConnect(ctx context.Context) (*pgx.Conn, error) {
	return s.pgConnect(ctx, "fairbench")
}

// detachedTree is a postgres-ha node's postgres with its children: Patroni starts the postmaster
// in a session of its own, reparented away, so the launched process's tree does not hold it.
func (s *Server) detachedTree() []procInfo {
	if s.patroni == nil {
		return nil
	}
	pm, ok := postmasterOf(s.DataDir)
	if !ok {
		return nil
	}
	return processTree(pm.pid)
}

// patroniFault signals a postgres-ha node as a whole: SIGKILL is its host crashing (Patroni and
// every postgres process die at once, with no shutdown), SIGSTOP and SIGCONT freeze and thaw them.
func (s *Server) patroniFault(c *child, sig syscall.Signal) error {
	tree := append(processTree(c.cmd.Process.Pid), s.detachedTree()...)
	if sig == syscall.SIGKILL {
		_ = syscall.Kill(-c.cmd.Process.Pid, sig)
	}
	killProcs(tree, sig)
	if sig == syscall.SIGKILL && !waitGone(tree, 5*time.Second) {
		return fmt.Errorf("%s: processes survived SIGKILL", s.patroni.name)
	}
	return nil
}
