package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/fairbench/fairbench/internal/engine/discovery"
	"github.com/fairbench/fairbench/internal/engine/profile"
)

// Membership is a server's place in a cluster that internal/engine/cluster starts: what changes
// in the server's start (its options, who makes its data directory, the process launched), its
// stop and its faults. The zero value is a single server.
type Membership struct {
	// Password is the cluster's superuser password, which every node shares: a galera joiner
	// receives the founder's accounts, a replica copies the leader's.
	Password string
	Galera   *GaleraNode  // a galera node
	Patroni  *PatroniNode // a postgres-ha node
}

// StartMember is Start for a cluster's node: the server gets the membership's options, password
// and process before anything starts.
func StartMember(ctx context.Context, inst discovery.Installation, prof profile.Profile, workDir string, m Membership) (*Server, error) {
	if m.Password == "" || (m.Galera == nil) == (m.Patroni == nil) {
		return nil, errors.New("a cluster's node needs the cluster's password and one kind of membership")
	}
	return startWith(ctx, inst, prof, workDir, ReservePort, func(s *Server) {
		s.galera, s.patroni, s.password = m.Galera, m.Patroni, m.Password
	})
}

// Membership is the server's place in its cluster, the zero value for a single server. Its
// Password is left empty: the password stays inside the server, where nothing prints it.
func (s *Server) Membership() Membership {
	return Membership{Galera: s.galera, Patroni: s.patroni}
}

// OwnPorts are the ports the server listens on: SQL, a galera node's gcomm, IST and SST, and a
// Patroni node's REST API (what a network partition of the node cuts).
func (s *Server) OwnPorts() []int {
	ports := []int{s.Port}
	if n := s.galera; n != nil {
		ports = append(ports, n.GComm, n.IST, n.SST)
	}
	if p := s.patroni; p != nil {
		ports = append(ports, p.REST)
	}
	return ports
}

// DSNFor is the server's DSN for other addresses (a cluster's host list) and query.
func (s *Server) DSNFor(addrs []string, query string) string { return s.dsnFor(addrs, query) }

// CreateDatabase creates the database fairbench on a postgres-ha node that has become the
// leader, and checks its settings, as Start does on a single server; the replicas copy it.
func (s *Server) CreateDatabase(ctx context.Context) error {
	if s.patroni == nil {
		return errors.New("CreateDatabase is for a postgres-ha node: Start creates a single server's")
	}
	return s.setupPostgres(ctx)
}

// afterServers are what StopAll stops once every server is down: a cluster's helpers (etcd),
// which its nodes still talk to while they shut down.
var afterServers struct {
	sync.Mutex
	stops []func() error
}

// AfterServers makes StopAll call stop once every server is down.
func AfterServers(stop func() error) {
	afterServers.Lock()
	afterServers.stops = append(afterServers.stops, stop)
	afterServers.Unlock()
}

func stopAfterServers() error {
	afterServers.Lock()
	stops := afterServers.stops
	afterServers.Unlock()
	var errs []error
	for _, stop := range stops {
		errs = append(errs, stop())
	}
	return errors.Join(errs...)
}

// RecordHelper writes the owner record of a process a cluster runs beside its servers (etcd),
// so that a later fairbench reaps it, and its run directory, as it reaps a server's, if this one
// is killed outright. It returns the record's path, which the helper removes when it stops.
func RecordHelper(kind string, pid, port int, runDir string) (string, error) {
	rec := record{Owner: ownerTag(), Kind: kind, Port: port, RunDir: runDir}
	if p, ok := readProc(pid); ok {
		rec.ServerPID, rec.ServerStart = p.pid, p.start
	}
	path := filepath.Join(RecordDir, fmt.Sprintf("%d-%s.json", os.Getpid(), filepath.Base(runDir)))
	return path, writeRecordFile(path, rec)
}
