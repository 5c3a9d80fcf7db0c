package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/fairbench/fairbench/internal/engine/discovery"
	"github.com/go-sql-driver/mysql"
)

// sstUser is the uid that rsync's daemon switches to when started as root (rsync's built-in
// default "nobody"): wsrep_sst_rsync writes no uid into its config, so a joining node's data
// directory must be writable by it.
const sstUser = 65534

// GaleraNode is one server's place in a galera cluster (internal/engine/cluster starts them): the
// ports galera listens on besides the SQL port, and whether it founds the cluster or joins it.
type GaleraNode struct {
	Index           int
	Joiner          bool
	GComm, IST, SST int
	Peers           []string // every node's gcomm address, this one's included
}

// args are the mariadbd options that make the server a galera node. binlog_format=ROW and
// innodb_autoinc_lock_mode=2 are galera's requirements, not tuning.
func (n *GaleraNode) args(port int) []string {
	a := []string{
		"--bind-address=127.0.0.1",
		"--wsrep-on=ON",
		"--wsrep-provider=" + discovery.GaleraProvider,
		"--wsrep-cluster-name=fairbench",
		"--wsrep-cluster-address=gcomm://" + strings.Join(n.Peers, ","),
		"--wsrep-node-name=node" + itoa(n.Index+1),
		"--wsrep-node-address=127.0.0.1:" + itoa(n.GComm),
		"--wsrep-node-incoming-address=127.0.0.1:" + itoa(port),
		"--wsrep-sst-receive-address=127.0.0.1:" + itoa(n.SST),
		"--wsrep-provider-options=gmcast.listen_addr=tcp://127.0.0.1:" + itoa(n.GComm) +
			";ist.recv_addr=127.0.0.1:" + itoa(n.IST) + ";gcache.size=64M",
		// rsync is the one state transfer that needs no extra package (mariabackup would).
		"--wsrep-sst-method=rsync",
		"--binlog-format=ROW",
		"--innodb-autoinc-lock-mode=2",
	}
	if !n.Joiner {
		a = append(a, "--wsrep-new-cluster")
	}
	return a
}

// prepareJoiner lets the state transfer write a joining node's data directory: as root,
// wsrep_sst_rsync's rsync daemon runs as nobody. mariadbd (root) still reads and writes it all.
func (s *Server) prepareJoiner() error {
	if s.galera == nil || !s.galera.Joiner || os.Geteuid() != 0 {
		return nil
	}
	return filepath.Walk(s.host("data"), func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, sstUser, sstUser)
	})
}

// waitWsrepReady waits until a cluster node takes statements: it accepts logins before that, and
// answers anything else with "WSREP has not yet prepared node for application use" (error 1047).
func (s *Server) waitWsrepReady(ctx context.Context) error {
	if s.galera == nil {
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
		if err == nil || s.galera == nil || !errors.As(err, &me) || me.Number != 1047 || time.Now().After(deadline) {
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
