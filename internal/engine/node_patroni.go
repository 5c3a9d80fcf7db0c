package engine

import (
	"context"
	"fmt"
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

// PatroniTiming is how fast Patroni notices a lost leader: the leader lock expires TTL seconds
// after the leader last renewed it, each node looks every LoopWait seconds, and a DCS or
// PostgreSQL call is retried for RetryTimeout. Patroni requires LoopWait + 2×RetryTimeout ≤ TTL.
type PatroniTiming struct{ TTL, LoopWait, RetryTimeout int }

// DefaultPatroniTiming is a third of Patroni's own 30/10/10: a failover then takes about 10-15 s,
// short enough to show within a benchmark run of a minute, and still far above a loaded
// loopback's latencies, so no healthy leader loses its lock. Tests may lower it.
var DefaultPatroniTiming = PatroniTiming{TTL: 10, LoopWait: 2, RetryTimeout: 4}

// PatroniNode is one node's place in a postgres-ha cluster (internal/engine/cluster starts them):
// the process launched is Patroni, which runs initdb or pg_basebackup and then postgres.
type PatroniNode struct {
	Name string // node1, node2, ...
	REST int    // Patroni's REST API port
	Etcd string // host:port of the cluster's etcd
	// Async turns Patroni's synchronous_mode off: the leader acknowledges a commit before any
	// replica has it, so a failover can lose acknowledged transactions.
	Async  bool
	Timing PatroniTiming
	// MaxLagOnFailover is how far behind (WAL bytes) a replica may be and still be promoted.
	MaxLagOnFailover int64
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
	rest := "127.0.0.1:" + itoa(pn.REST)
	return map[string]any{
		"scope": "fairbench", "name": pn.Name,
		// Changes through the REST API (restart, failover, reinitialise) need the password; reads
		// (GET /patroni, /cluster) stay open, which is all fairbench uses.
		"restapi": map[string]any{"listen": rest, "connect_address": rest,
			"authentication": map[string]string{"username": "fairbench", "password": s.password}},
		"etcd3": map[string]any{"hosts": pn.Etcd, "protocol": "http"},
		"bootstrap": map[string]any{
			"dcs": map[string]any{
				"ttl": pn.Timing.TTL, "loop_wait": pn.Timing.LoopWait, "retry_timeout": pn.Timing.RetryTimeout,
				"synchronous_mode": !pn.Async, "maximum_lag_on_failover": pn.MaxLagOnFailover,
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
		return fmt.Errorf("%s: processes survived SIGKILL", s.patroni.Name)
	}
	return nil
}
