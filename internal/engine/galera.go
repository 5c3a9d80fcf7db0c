package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fairbench/fairbench/internal/engine/discovery"
	"github.com/fairbench/fairbench/internal/engine/profile"
	"github.com/go-sql-driver/mysql"
)

// GaleraNodes is the size of a galera cluster: three, the fewest that keep a quorum (and so
// keep accepting writes) when one node fails.
const GaleraNodes = 3

// sstUser is the uid that rsync's daemon switches to when started as root (rsync's built-in
// default "nobody"): wsrep_sst_rsync writes no uid into its config, so a joining node's data
// directory must be writable by it.
const sstUser = 65534

// clusterNode is one server's place in a galera cluster: the ports galera listens on besides the
// SQL port, and whether it founds the cluster or joins it.
type clusterNode struct {
	index           int
	joiner          bool
	gcomm, ist, sst int
	peers           []string // every node's gcomm address, this one's included
	password        string   // the cluster's root password: the founder sets it, joiners receive it
}

// args are the mariadbd options that make the server a galera node. binlog_format=ROW and
// innodb_autoinc_lock_mode=2 are galera's requirements, not tuning.
func (n *clusterNode) args(port int) []string {
	a := []string{
		"--bind-address=127.0.0.1",
		"--wsrep-on=ON",
		"--wsrep-provider=" + discovery.GaleraProvider,
		"--wsrep-cluster-name=fairbench",
		"--wsrep-cluster-address=gcomm://" + strings.Join(n.peers, ","),
		"--wsrep-node-name=node" + itoa(n.index+1),
		"--wsrep-node-address=127.0.0.1:" + itoa(n.gcomm),
		"--wsrep-node-incoming-address=127.0.0.1:" + itoa(port),
		"--wsrep-sst-receive-address=127.0.0.1:" + itoa(n.sst),
		"--wsrep-provider-options=gmcast.listen_addr=tcp://127.0.0.1:" + itoa(n.gcomm) +
			";ist.recv_addr=127.0.0.1:" + itoa(n.ist) + ";gcache.size=64M",
		// rsync is the one state transfer that needs no extra package (mariabackup would).
		"--wsrep-sst-method=rsync",
		"--binlog-format=ROW",
		"--innodb-autoinc-lock-mode=2",
	}
	if !n.joiner {
		a = append(a, "--wsrep-new-cluster")
	}
	return a
}

// prepareJoiner lets the state transfer write a joining node's data directory: as root,
// wsrep_sst_rsync's rsync daemon runs as nobody. mariadbd (root) still reads and writes it all.
func (s *Server) prepareJoiner() error {
	if s.node == nil || !s.node.joiner || os.Geteuid() != 0 {
		return nil
	}
	return filepath.Walk(s.host("data"), func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, sstUser, sstUser)
	})
}

// Cluster is a running throwaway cluster: its nodes are ordinary Servers (registered, reaped and
// stopped like any), DSN lists every node so that clients spread over them.
type Cluster struct {
	Kind, Version string
	// DSN lists every node: mariadb://root@127.0.0.1:P1,127.0.0.1:P2,127.0.0.1:P3/fairbench, or
	// for postgres-ha postgres://...@P1,P2,P3/fairbench?...&target_session_attrs=read-write, so that
	// every connection lands on the leader.
	DSN   string
	Nodes []*Server
	// Synchronous says a commit is acknowledged only once a replica has it (Patroni's
	// synchronous_mode; galera always certifies on every node): an acknowledged transaction then
	// survives the loss of any one node.
	Synchronous bool
	Timing      PatroniTiming // postgres-ha: how fast Patroni fails over
	maxLag      int64         // postgres-ha: maximum_lag_on_failover, bytes

	etcd     *etcdProc // postgres-ha's store of the leader lock, stopped after the nodes
	ports    []int     // the cluster's own ports (galera's gcomm, IST, SST; Patroni's REST), released by Stop
	stopOnce sync.Once
	stopErr  error
	// parts are the nodes a fault cut off (galera_fault.go), healed by Stop at the latest.
	partMu sync.Mutex
	parts  map[string]*partition
}

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
	var addrs []string
	for _, n := range nodes {
		s, err := start(ctx, inst, prof, workDir, reservePort, n)
		if err != nil {
			return nil, fmt.Errorf("node %d: %w", n.index+1, err)
		}
		c.Nodes = append(c.Nodes, s)
		addrs = append(addrs, "127.0.0.1:"+itoa(s.Port))
	}
	if err := c.waitSynced(ctx); err != nil {
		return nil, err
	}
	c.DSN = c.Nodes[0].dsnFor(addrs, "")
	return c, nil
}

// planNodes reserves each node's gcomm, IST and SST ports: every node must know all gcomm
// addresses before the first one starts.
func (c *Cluster) planNodes() ([]*clusterNode, error) {
	nodes := make([]*clusterNode, GaleraNodes)
	var peers []string
	password := newPassword()
	for i := range nodes {
		n := &clusterNode{index: i, joiner: i > 0, password: password}
		for _, p := range []*int{&n.gcomm, &n.ist, &n.sst} {
			port, err := reservePort()
			if err != nil {
				return nil, err
			}
			*p = port
			c.ports = append(c.ports, port)
		}
		peers = append(peers, "127.0.0.1:"+itoa(n.gcomm))
		nodes[i] = n
	}
	for _, n := range nodes {
		n.peers = peers
	}
	return nodes, nil
}

// waitSynced polls until every node sees all nodes and reports Synced.
func (c *Cluster) waitSynced(ctx context.Context) error {
	return c.waitFor(ctx, func() error {
		for _, s := range c.Nodes {
			if err := s.checkSynced(ctx, len(c.Nodes)); err != nil {
				return fmt.Errorf("cluster not synced: %w", err)
			}
		}
		return nil
	})
}

func (s *Server) checkSynced(ctx context.Context, want int) error {
	st, err := s.WsrepStatus(ctx)
	if err != nil {
		return err
	}
	if st["wsrep_cluster_size"] != itoa(want) || st["wsrep_local_state_comment"] != "Synced" {
		return fmt.Errorf("node on port %d: cluster size %s, state %s", s.Port, st["wsrep_cluster_size"], st["wsrep_local_state_comment"])
	}
	return nil
}

// waitWsrepReady waits until a cluster node takes statements: it accepts logins before that, and
// answers anything else with "WSREP has not yet prepared node for application use" (error 1047).
func (s *Server) waitWsrepReady(ctx context.Context) error {
	if s.node == nil {
		return nil
	}
	deadline := time.Now().Add(ReadyTimeout)
	for {
		st, err := s.WsrepStatus(ctx)
		if err == nil && st["wsrep_ready"] == "ON" {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("node on port %d not ready for statements within %s (wsrep_ready %q, %v)", s.Port, ReadyTimeout, st["wsrep_ready"], err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// execWsrep runs a statement, retrying it on a cluster node while the node answers error 1047
// ("WSREP has not yet prepared node for application use"): on a busy machine a bootstrapped node
// can say wsrep_ready=ON a moment before it takes statements. On a single server it just runs.
func (s *Server) execWsrep(ctx context.Context, db *sql.DB, stmt string) error {
	deadline := time.Now().Add(ReadyTimeout)
	for {
		_, err := db.ExecContext(ctx, stmt)
		var me *mysql.MySQLError
		if err == nil || s.node == nil || !errors.As(err, &me) || me.Number != 1047 || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// WsrepStatus reads the node's wsrep status variables (SHOW STATUS LIKE 'wsrep%'): cluster size,
// state, receive queue, flow control and certification failures.
func (s *Server) WsrepStatus(ctx context.Context) (map[string]string, error) {
	qctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	db := s.mysqlDB("")
	defer db.Close()
	rows, err := db.QueryContext(qctx, "SHOW GLOBAL STATUS LIKE 'wsrep%'")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	m := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		m[strings.ToLower(k)] = v
	}
	return m, rows.Err()
}

// Fault sends sig to the server as a fault injected during a run: SIGKILL kills its whole process
// group (state-transfer helpers included) and makes its exit before Stop expected; SIGSTOP and
// SIGCONT freeze and thaw it. Stop thaws a frozen server before shutting it down.
func (s *Server) Fault(sig syscall.Signal) error {
	s.mu.Lock()
	c := s.child
	if sig == syscall.SIGKILL {
		s.faulted = true
	}
	s.mu.Unlock()
	if c == nil || !c.server || c.exited() {
		return errors.New("server is not running")
	}
	if s.patroni != nil {
		return s.patroniFault(c, sig)
	}
	if sig == syscall.SIGKILL {
		return syscall.Kill(-c.cmd.Process.Pid, sig)
	}
	return c.cmd.Process.Signal(sig)
}

// Alive reports whether the server process is still running.
func (s *Server) Alive() bool {
	s.mu.Lock()
	c := s.child
	s.mu.Unlock()
	return c != nil && c.server && !c.exited()
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
			releasePort(p)
		}
		c.stopErr = errors.Join(append(errs, healErr)...)
	})
	return c.stopErr
}
