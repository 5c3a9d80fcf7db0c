// Package engine starts throwaway instances of the servers internal/engine/discovery finds, with
// one shared fairness profile (internal/engine/profile), so that PostgreSQL, MariaDB and MySQL are
// compared under the same memory, durability and connection settings rather than under each
// distribution's defaults; and it always stops them: processes, cgroups, data directories, the
// clusters (galera, postgres-ha) and their partitions.
package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fairbench/fairbench/internal/cgroup"
	"github.com/fairbench/fairbench/internal/engine/discovery"
	"github.com/fairbench/fairbench/internal/engine/profile"
)

// Timeouts are variables so that callers with slow disks can raise them.
var (
	// ReadyTimeout bounds how long Start waits for a launched server to
	// accept connections.
	ReadyTimeout = 60 * time.Second
	// StopTimeout bounds the clean shutdown before Stop resorts to SIGKILL.
	StopTimeout = 30 * time.Second
	// initTimeout bounds initdb / mysqld --initialize / mariadb-install-db,
	// which take seconds; a hang there must not block a run forever.
	initTimeout = 3 * time.Minute
)

// unixSocketMax is the usable length of sun_path (108 bytes with the NUL).
const unixSocketMax = 107

var errPortTaken = errors.New("port already in use")

// Server is a running throwaway server.
type Server struct {
	Kind, Version string
	// DSN is e.g. postgres://fairbench:PASSWORD@127.0.0.1:PORT/fairbench?sslmode=disable or
	// mysql://root:PASSWORD@127.0.0.1:PORT/fairbench, with the server's own random password:
	// for fairbench's clients only, never printed or stored (see credentials.go).
	DSN     string
	Port    int
	DataDir string            // host path
	Applied map[string]string // = profile.Settings(kind), for this server's version

	inst       discovery.Installation
	prof       profile.Profile
	hostRun    string        // run dir as seen from here: data/, logs, socket
	innerRun   string        // the same dir as the server sees it (differs under chroot)
	mountPoint string        // bind-mount target inside the chroot, "" if none
	mounted    bool          // mountPoint is currently mounted
	sockDir    string        // separate short dir for the socket, "" if none
	socket     string        // unix socket path as the server sees it
	logs       []string      // host paths of log files, most telling first
	cg         *cgroup.Group // the server's own cgroup, nil where none could be made
	cgErr      error         // why there is none
	record     string        // the owner record that lets a later fairbench reap this server
	password   string        // the superuser's, drawn at Start (a cluster's nodes share one)
	template   bool          // a template data directory (template.go), never started
	rekey      string        // host path of the SQL that sets the password at the first start of a template's copy

	mu         sync.Mutex
	child      *child // the process currently running for this server (init step or server)
	stopped    bool
	ready      bool             // Start succeeded
	port       int              // reserved port, released by Stop
	logOffsets map[string]int64 // log sizes when the current server process was launched
	finalLogs  *string          // log tail captured just before the run dir was removed

	stopOnce sync.Once
	stopErr  error

	galera  *GaleraNode  // a galera node (member.go), nil for a single server
	patroni *PatroniNode // a postgres-ha node: the process launched is Patroni, which runs postgres
	faulted bool         // killed on purpose by a fault: its exit before Stop is no error
}

// child is one process started for a Server, with its exit published on done.
type child struct {
	cmd    *exec.Cmd
	name   string
	server bool
	done   chan struct{}
	err    error // valid after done is closed
}

func (c *child) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

var registry = struct {
	sync.Mutex
	servers map[*Server]struct{}
}{servers: map[*Server]struct{}{}}

func register(s *Server) {
	registry.Lock()
	registry.servers[s] = struct{}{}
	registry.Unlock()
}

func unregister(s *Server) {
	registry.Lock()
	delete(registry.servers, s)
	registry.Unlock()
}

// StopAll stops every server this process started that has not been stopped
// yet, including ones still inside Start. Call it from the signal handler (or
// a deferred cleanup) so an interrupted benchmark leaves nothing running.
func StopAll() error {
	registry.Lock()
	list := make([]*Server, 0, len(registry.servers))
	for s := range registry.servers {
		list = append(list, s)
	}
	registry.Unlock()
	errs := make([]error, len(list))
	var wg sync.WaitGroup
	for i, s := range list {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.Stop()
		}()
	}
	wg.Wait()
	errs = append(errs, DropTemplates())
	// A cluster's etcd last: Patroni nodes shutting down still talk to it.
	return errors.Join(append(errs, stopAfterServers())...)
}

// Running returns the servers that StopAll would stop.
func Running() []*Server {
	registry.Lock()
	defer registry.Unlock()
	list := make([]*Server, 0, len(registry.servers))
	for s := range registry.servers {
		list = append(list, s)
	}
	// Sorted by port for a stable listing; read under each server's lock
	// because a server still inside Start may be picking its port.
	port := map[*Server]int{}
	for _, s := range list {
		s.mu.Lock()
		port[s] = s.port
		s.mu.Unlock()
	}
	sort.Slice(list, func(i, j int) bool { return port[list[i]] < port[list[j]] })
	return list
}

// Start creates a fresh data directory under workDir (or os.TempDir()),
// initialises it, starts the server on a free 127.0.0.1 port with the
// profile, waits until it accepts connections and creates the database
// fairbench. On failure everything it created is removed again.
//
// ctx bounds only the start-up: the server outlives it and runs until Stop.
func Start(ctx context.Context, inst discovery.Installation, prof profile.Profile, workDir string) (*Server, error) {
	return start(ctx, inst, prof, workDir, ReservePort)
}

// start is Start with the port picker given, so a test can hand out a taken port.
func start(ctx context.Context, inst discovery.Installation, prof profile.Profile, workDir string, pickPort func() (int, error)) (*Server, error) {
	return startWith(ctx, inst, prof, workDir, pickPort, func(*Server) {})
}

// startWith is start with the server's cluster membership set by member before anything starts.
func startWith(ctx context.Context, inst discovery.Installation, prof profile.Profile, workDir string, pickPort func() (int, error), member func(*Server)) (_ *Server, err error) {
	prof = prof.WithDefaults()
	if err := prof.Validate(); err != nil {
		return nil, err
	}
	if err := checkStartable(inst); err != nil {
		return nil, err
	}
	s := &Server{
		Kind:    inst.Kind,
		Version: inst.Version,
		Applied: prof.ForServer(inst.Kind, inst.Version),
		inst:    inst,
		prof:    prof,
	}
	member(s)
	if s.password == "" {
		s.password = newPassword()
	}
	// Registered before anything exists on disk so that StopAll from a
	// signal handler also cleans up a server that is still starting.
	register(s)
	defer func() {
		if err != nil {
			_ = s.Stop()
			err = fmt.Errorf("start %s %s: %w", inst.Kind, inst.Version, err)
		}
	}()

	reapOnce.Do(func() { reapAtStart(ReapLog) })
	if err := s.makeRunDir(workDir); err != nil {
		return nil, err
	}
	s.makeGroup()
	if _, gerr := s.Cgroup(); gerr != nil && prof.CPUs > 0 {
		return nil, gerr
	}
	if err := s.writeRecord(); err != nil {
		return nil, err
	}
	if err := s.initData(ctx); err != nil {
		return nil, err
	}
	if err := s.listen(ctx, pickPort); err != nil {
		return nil, err
	}
	if err := s.setup(ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.ready = true
	s.mu.Unlock()
	return s, nil
}

// checkStartable refuses, before anything is created, an installation this process cannot start.
func checkStartable(inst discovery.Installation) error {
	switch inst.Kind {
	case discovery.Postgres, discovery.MariaDB, discovery.MySQL:
	default:
		return fmt.Errorf("unknown engine kind %q (want one of %s)", inst.Kind, strings.Join(discovery.Kinds, ", "))
	}
	if !discovery.IsExecutable(inst.Binary) {
		return fmt.Errorf("%s server binary %q is missing: run scripts/install-engines.sh", inst.Kind, inst.Binary)
	}
	if inst.Root != "" && os.Geteuid() != 0 {
		return fmt.Errorf("%s in %s runs under chroot, which needs root: run fairbench as root", inst.Kind, inst.Root)
	}
	return nil
}

// initData creates the data directory: initdb, mysqld's own initialisation, or (a postgres-ha
// node) Patroni's configuration, Patroni running initdb or pg_basebackup itself.
func (s *Server) initData(ctx context.Context) error {
	var err error
	if s.patroni != nil {
		err = s.preparePatroni()
	} else if s.Kind == discovery.Postgres {
		err = s.initPostgres(ctx)
	} else {
		err = s.initMySQL(ctx)
	}
	if err != nil {
		return err
	}
	return s.prepareJoiner()
}

// listen starts the server on a port pickPort gives and waits until it accepts connections.
// The port is free when picked but something else may bind it before the server does; that is
// cheap to detect and retry without re-initialising.
func (s *Server) listen(ctx context.Context, pickPort func() (int, error)) error {
	for attempt := 1; ; attempt++ {
		port, err := pickPort()
		if err != nil {
			return err
		}
		s.mu.Lock()
		s.Port, s.port = port, port
		s.mu.Unlock()
		cmd, err := s.serverCmd()
		if err != nil {
			return err
		}
		if err := s.launch(cmd); err != nil {
			return err
		}
		err = s.waitReady(ctx)
		if err == nil {
			s.rekeyed()
			return nil
		}
		if !errors.Is(err, errPortTaken) || attempt == 3 {
			return err
		}
		s.mu.Lock()
		s.port = 0
		s.mu.Unlock()
		ReleasePort(port)
	}
}

// setup creates the database fairbench (or, a postgres-ha node, checks its settings: only the
// leader can create the database, which StartPostgresHA does) and sets the DSN.
func (s *Server) setup(ctx context.Context) error {
	var err error
	if s.patroni != nil {
		err = s.checkPostgresSettings(ctx)
	} else if s.Kind == discovery.Postgres {
		err = s.setupPostgres(ctx)
	} else {
		err = s.setupMySQL(ctx)
	}
	query := ""
	if s.Kind == discovery.Postgres {
		query = "sslmode=disable"
	}
	s.DSN = s.dsnFor([]string{"127.0.0.1:" + itoa(s.Port)}, query)
	return err
}

// serverCmd is the command that runs the server: Patroni for a postgres-ha node.
func (s *Server) serverCmd() (*exec.Cmd, error) {
	switch {
	case s.patroni != nil:
		return s.patroniCmd()
	case s.Kind == discovery.Postgres:
		return s.postgresCmd(), nil
	}
	return s.mysqlCmd(), nil
}

// makeRunDir creates the per-server directory that holds data/, the logs and
// the socket, so that removing one directory removes everything.
func (s *Server) makeRunDir(workDir string) error {
	base := workDir
	if base == "" {
		base = os.TempDir()
	}
	if err := os.MkdirAll(base, 0o755); err != nil {
		return fmt.Errorf("work dir: %w", err)
	}
	base, err := filepath.Abs(base)
	if err != nil {
		return err
	}
	// Under the lock, so that a concurrent Stop either runs first (and we
	// create nothing) or sees every path it has to remove.
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return errors.New("stopped while starting")
	}
	if s.inst.Root == "" {
		d, err := os.MkdirTemp(base, "fairbench-"+s.Kind+"-")
		if err != nil {
			return fmt.Errorf("work dir: %w", err)
		}
		s.hostRun, s.innerRun = d, d
	} else if err := s.makeChrootRunDir(base); err != nil {
		return err
	}
	s.DataDir = filepath.Join(s.hostRun, "data")

	if s.Kind == discovery.Postgres {
		s.logs = []string{s.host("server.log"), s.host("initdb.log")}
		return nil
	}
	s.logs = []string{s.host("error.log"), s.host("console.log"), s.host("init.log")}
	s.socket = s.inner("mysqld.sock")
	if len(s.socket) > unixSocketMax {
		// Only possible without chroot (the path inside the root is short),
		// so a host temp dir works.
		d, err := os.MkdirTemp("/tmp", "fbsock-")
		if err != nil {
			return fmt.Errorf("socket dir: %w", err)
		}
		s.sockDir = d
		s.socket = filepath.Join(d, "mysqld.sock")
	}
	return nil
}

// makeChrootRunDir puts the run dir where a chrooted server can reach it.
// The data must still live on the work dir's filesystem: otherwise MySQL
// could be measured on a different disk (or on tmpfs) than the other
// engines. So a work dir on another filesystem is bind-mounted into the root.
func (s *Server) makeChrootRunDir(base string) error {
	rootBase := filepath.Join(s.inst.Root, "var/lib/fairbench")
	if err := os.MkdirAll(rootBase, 0o755); err != nil {
		return fmt.Errorf("chroot work dir: %w", err)
	}
	if sameFilesystem(base, rootBase) {
		d, err := os.MkdirTemp(rootBase, s.Kind+"-")
		if err != nil {
			return fmt.Errorf("chroot work dir: %w", err)
		}
		s.hostRun = d
		s.innerRun = "/var/lib/fairbench/" + filepath.Base(d)
		return nil
	}
	d, err := os.MkdirTemp(base, "fairbench-"+s.Kind+"-")
	if err != nil {
		return fmt.Errorf("work dir: %w", err)
	}
	s.hostRun = d
	mp := filepath.Join(rootBase, filepath.Base(d))
	if err := os.Mkdir(mp, 0o700); err != nil {
		return fmt.Errorf("chroot mount point: %w", err)
	}
	s.mountPoint = mp
	if err := syscall.Mount(d, mp, "", syscall.MS_BIND, ""); err != nil {
		return fmt.Errorf("bind-mount %s into the MySQL root (needed because %s is on another filesystem than %s): %w", d, base, rootBase, err)
	}
	s.mounted = true
	s.innerRun = "/var/lib/fairbench/" + filepath.Base(d)
	return nil
}

func sameFilesystem(a, b string) bool {
	var sa, sb syscall.Stat_t
	if syscall.Stat(a, &sa) != nil || syscall.Stat(b, &sb) != nil {
		return false
	}
	return sa.Dev == sb.Dev
}

// inner maps a name inside the run dir to the path the server uses.
func (s *Server) inner(name string) string { return filepath.Join(s.innerRun, name) }

// host maps a name inside the run dir to the path this process uses.
func (s *Server) host(name string) string { return filepath.Join(s.hostRun, name) }

// prepare fills in what every child of this server shares: a minimal
// environment, its own process group (so a Ctrl-C on the terminal reaches
// fairbench, which then stops servers cleanly, and not the servers
// directly), the chroot, and the log file for stdout and stderr.
func (s *Server) prepare(cmd *exec.Cmd, cred *syscall.Credential, logName string) (*os.File, error) {
	cmd.Env = discovery.ChildEnv()
	attr := &syscall.SysProcAttr{Setpgid: true, Credential: cred}
	if cmd.SysProcAttr != nil {
		// A private mount namespace that the command asked for (privateShmCmd).
		attr.Unshareflags = cmd.SysProcAttr.Unshareflags
	}
	if s.inst.Root != "" {
		attr.Chroot = s.inst.Root
		cmd.Dir = "/"
	} else {
		cmd.Dir = s.hostRun
	}
	cmd.SysProcAttr = attr
	f, err := os.OpenFile(s.host(logName), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd.Stdin = nil
	cmd.Stdout = f
	cmd.Stderr = f
	return f, nil
}

// startChild starts cmd as the server's current process unless Stop has
// already run, in which case starting it would leak it.
func (s *Server) startChild(cmd *exec.Cmd, name string, server bool) (*child, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return nil, errors.New("stopped while starting")
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	c := &child{cmd: cmd, name: name, server: server, done: make(chan struct{})}
	go func() {
		c.err = cmd.Wait()
		close(c.done)
	}()
	s.child = c
	return c, nil
}

// runInit runs an initialisation step to completion, logging to logName.
func (s *Server) runInit(ctx context.Context, cmd *exec.Cmd, cred *syscall.Credential, logName string) error {
	return s.runInitInput(ctx, cmd, cred, nil, logName)
}

// runInitWithInput is runInit for a step that reads its SQL from standard input (a bootstrap).
func (s *Server) runInitWithInput(ctx context.Context, cmd *exec.Cmd, in io.Reader, logName string) error {
	return s.runInitInput(ctx, cmd, nil, in, logName)
}

func (s *Server) runInitInput(ctx context.Context, cmd *exec.Cmd, cred *syscall.Credential, in io.Reader, logName string) error {
	name := filepath.Base(cmd.Path)
	if cmd.SysProcAttr != nil && cmd.SysProcAttr.Unshareflags != 0 && len(cmd.Args) > 3 {
		name = cmd.Args[3] // privateShmCmd's shell, named after the binary it runs
	}
	f, err := s.prepare(cmd, cred, logName)
	if err != nil {
		return err
	}
	if in != nil {
		cmd.Stdin = in
	}
	c, err := s.startChild(cmd, name, false)
	f.Close()
	if err != nil {
		return err
	}
	timer := time.NewTimer(initTimeout)
	defer timer.Stop()
	select {
	case <-c.done:
	case <-ctx.Done():
		killGroup(c)
		return ctx.Err()
	case <-timer.C:
		killGroup(c)
		return fmt.Errorf("%s did not finish within %s; logs:\n%s", name, initTimeout, s.Logs())
	}
	// All logs, not just logName: mysqld --initialize reports its errors in
	// --log-error, not on the console.
	if c.err != nil {
		return fmt.Errorf("%s failed: %v; logs:\n%s", name, c.err, s.Logs())
	}
	return nil
}

// killGroup kills an init step with everything it spawned (install scripts
// and initdb run the server binary as a child) and waits for it.
func killGroup(c *child) {
	if c.exited() {
		return
	}
	tree := processTree(c.cmd.Process.Pid)
	_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
	killProcs(tree, syscall.SIGKILL)
	<-c.done
}

// launch starts the server process and remembers where its logs end, so that
// failures are diagnosed from this launch's output only.
func (s *Server) launch(cmd *exec.Cmd) error {
	// PostgreSQL logs to stderr, so its console output is the server log;
	// mysqld logs to --log-error and the console only gets stray warnings.
	console := "console.log"
	if s.Kind == discovery.Postgres {
		console = "server.log"
	}
	name := filepath.Base(cmd.Path)
	closeFiles, err := s.joinGroup(cmd)
	if err != nil {
		return err
	}
	defer closeFiles()
	f, err := s.prepare(cmd, s.credential(), console)
	if err != nil {
		return err
	}
	offsets := map[string]int64{}
	for _, l := range s.logs {
		if st, err := os.Stat(l); err == nil {
			offsets[l] = st.Size()
		}
	}
	s.mu.Lock()
	s.logOffsets = offsets
	s.mu.Unlock()
	_, err = s.startChild(cmd, name, true)
	f.Close()
	if err != nil {
		return err
	}
	return s.writeRecord()
}

// credential is the user the server runs as: PostgreSQL refuses to run as
// root, the MySQL family is told --user=root instead.
func (s *Server) credential() *syscall.Credential {
	// In a Debian root the start wrapper switches to the postgres user itself.
	if s.Kind != discovery.Postgres || os.Geteuid() != 0 || s.inst.Root != "" {
		return nil
	}
	cred, _ := postgresUser("")
	return cred
}

// waitReady polls until the server accepts a real login, which is later than
// the port opening (MySQL listens before it finishes recovery and
// PostgreSQL answers "starting up").
func (s *Server) waitReady(ctx context.Context) error {
	s.mu.Lock()
	c := s.child
	s.mu.Unlock()
	deadline := time.Now().Add(ReadyTimeout)
	var lastErr error
	for {
		if lastErr = s.probe(ctx); lastErr == nil {
			return nil
		}
		select {
		case <-c.done:
			out := s.logsSinceLaunch()
			err := fmt.Errorf("%s exited during start-up (%v); server log:\n%s", c.name, c.err, out)
			if strings.Contains(out, "Address already in use") {
				err = fmt.Errorf("%w: %w", errPortTaken, err)
			}
			return err
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not accept connections on port %d within %s (last error: %v); server log:\n%s",
				c.name, s.Port, ReadyTimeout, lastErr, s.Logs())
		}
	}
}

// probe logs in and checks the server is this one: if another server grabbed
// the port first (and also lets root in without a password, as throwaway
// servers do), Start must not mistake it for its own and write to it.
func (s *Server) probe(ctx context.Context) error {
	pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	var dir, want string
	if s.Kind == discovery.Postgres {
		conn, err := s.pgConnect(pctx, "postgres")
		if err != nil {
			return err
		}
		defer conn.Close(context.Background())
		if err := conn.QueryRow(pctx, "SHOW data_directory").Scan(&dir); err != nil {
			return err
		}
		want = s.inner("data")
	} else {
		db := s.mysqlDB("")
		defer db.Close()
		if err := db.QueryRowContext(pctx, "SELECT @@datadir").Scan(&dir); err != nil {
			return err
		}
		want = s.inner("data")
	}
	if filepath.Clean(dir) != filepath.Clean(want) {
		return fmt.Errorf("port %d is answered by another server (data directory %s)", s.Port, dir)
	}
	return nil
}

// PIDs returns the server's process tree (the main server pid and all
// descendants, from /proc) for resource sampling. Empty once it has exited.
func (s *Server) PIDs() []int {
	s.mu.Lock()
	c := s.child
	s.mu.Unlock()
	if c == nil || !c.server || c.exited() {
		return nil
	}
	tree := append(processTree(c.cmd.Process.Pid), s.detachedTree()...)
	pids := make([]int, len(tree))
	for i, p := range tree {
		pids[i] = p.pid
	}
	return pids
}

// Stop shuts the server down (clean shutdown, SIGKILL after StopTimeout) and
// removes everything Start created. It is idempotent and safe to call
// concurrently, e.g. from a signal handler and a deferred cleanup at once:
// later callers wait for the first and get its result.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() { s.stopErr = s.stop() })
	return s.stopErr
}

func (s *Server) stop() error {
	s.mu.Lock()
	s.stopped = true
	c := s.child
	s.mu.Unlock()

	var errs []error
	if c != nil {
		if c.server {
			errs = append(errs, s.shutdown(c))
		} else {
			killGroup(c)
		}
	}

	// The logs live in the run dir; keep their tail for Logs() after Stop.
	tail := s.Logs()
	s.mu.Lock()
	s.finalLogs = &tail
	s.mu.Unlock()

	if s.mounted {
		if err := syscall.Unmount(s.mountPoint, 0); err != nil {
			// Lazy detach still frees the mount point once nothing uses it.
			if err2 := syscall.Unmount(s.mountPoint, syscall.MNT_DETACH); err2 != nil {
				errs = append(errs, fmt.Errorf("unmount %s: %w", s.mountPoint, err))
			} else {
				s.mounted = false
			}
		} else {
			s.mounted = false
		}
	}
	// Remove (not RemoveAll) the mount point: if it were still mounted,
	// RemoveAll would reach through it, and an error is the better outcome.
	if s.mountPoint != "" && !s.mounted {
		if err := os.Remove(s.mountPoint); err != nil && !os.IsNotExist(err) {
			errs = append(errs, err)
		}
	}
	for _, d := range []string{s.hostRun, s.sockDir} {
		if d == "" || (s.mounted && d == s.hostRun) {
			continue
		}
		if err := os.RemoveAll(d); err != nil {
			errs = append(errs, fmt.Errorf("remove %s: %w", d, err))
		}
	}
	if s.cg != nil {
		// After the shutdown: only what survived it is still in the group, and is killed.
		if err := s.cg.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	if s.record != "" {
		for _, f := range []string{s.record, passwordFileOf(s.record)} {
			if err := os.Remove(f); err != nil && !os.IsNotExist(err) {
				errs = append(errs, err)
			}
		}
	}
	s.mu.Lock()
	port := s.port
	s.mu.Unlock()
	if port != 0 {
		ReleasePort(port)
	}
	unregister(s)
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("stop %s on port %d: %w", s.Kind, port, err)
	}
	return nil
}

// shutdown stops the server process and every process it started.
func (s *Server) shutdown(c *child) error {
	pid := c.cmd.Process.Pid
	if c.exited() {
		// Already gone (crashed, or failed to start): nothing to signal,
		// but the caller should know the server did not run until Stop.
		// A Patroni gone leaves its detached postgres running.
		if tree := s.detachedTree(); len(tree) > 0 {
			killProcs(tree, syscall.SIGKILL)
			waitGone(tree, 5*time.Second)
		}
		s.mu.Lock()
		ready := s.ready
		s.mu.Unlock()
		if !ready || s.faulted {
			return nil
		}
		return fmt.Errorf("%s had exited before Stop: %v", c.name, c.err)
	}
	tree := append(processTree(pid), s.detachedTree()...)
	// A node a fault stopped (SIGSTOP) would never see the shutdown signal.
	_ = c.cmd.Process.Signal(syscall.SIGCONT)
	killProcs(tree, syscall.SIGCONT)
	// SIGINT is PostgreSQL's "fast" shutdown (abort sessions, checkpoint,
	// exit); SIGTERM would wait for every client to disconnect. For mysqld
	// SIGTERM is the normal clean shutdown, and for Patroni too (it stops
	// its postgres fast, then exits).
	sig := syscall.SIGTERM
	if s.Kind == discovery.Postgres && s.patroni == nil {
		sig = syscall.SIGINT
	}
	_ = c.cmd.Process.Signal(sig)

	var errs []error
	timer := time.NewTimer(StopTimeout)
	defer timer.Stop()
	select {
	case <-c.done:
		if c.err != nil {
			errs = append(errs, fmt.Errorf("%s exited uncleanly: %v", c.name, c.err))
		}
	case <-timer.C:
		errs = append(errs, fmt.Errorf("%s did not shut down within %s; killed it", c.name, StopTimeout))
		tree = append(tree, processTree(pid)...)
		// A killed PostgreSQL leaves its dynamic shared memory segments in
		// /dev/shm (RAM, outside the data dir); find them while the
		// processes still map them.
		shm := sharedMemoryFiles(tree)
		defer func() {
			for _, f := range shm {
				_ = os.Remove(f)
			}
		}()
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		killProcs(tree, syscall.SIGKILL)
		<-c.done
	}

	// PostgreSQL children call setsid(), so they are not in our process
	// group, and after a kill they are reparented away from us: wait for
	// them by identity and kill what lingers.
	if waitGone(tree, 5*time.Second) {
		return errors.Join(errs...)
	}
	killProcs(tree, syscall.SIGKILL)
	if !waitGone(tree, 2*time.Second) {
		errs = append(errs, fmt.Errorf("%s: processes survived SIGKILL", c.name))
	}
	return errors.Join(errs...)
}

func waitGone(tree []procInfo, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for anyAlive(tree) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// Logs returns the tail of the server's logs (for error messages). After Stop
// it returns the tail as it was just before the logs were deleted.
func (s *Server) Logs() string {
	s.mu.Lock()
	final := s.finalLogs
	s.mu.Unlock()
	if final != nil {
		return *final
	}
	var b strings.Builder
	for _, l := range s.logs {
		t := TailFile(l, 30)
		if strings.TrimSpace(t) == "" {
			continue
		}
		fmt.Fprintf(&b, "==> %s <==\n%s", filepath.Base(l), t)
	}
	return b.String()
}

// logsSinceLaunch returns what the logs gained since the last launch, so a
// retried start is not misdiagnosed from an earlier attempt's output.
func (s *Server) logsSinceLaunch() string {
	s.mu.Lock()
	offsets := s.logOffsets
	s.mu.Unlock()
	var b strings.Builder
	for _, l := range s.logs {
		f, err := os.Open(l)
		if err != nil {
			continue
		}
		if _, err := f.Seek(offsets[l], io.SeekStart); err == nil {
			data, _ := io.ReadAll(io.LimitReader(f, 1<<20))
			if t := lastLines(string(data), 30); strings.TrimSpace(t) != "" {
				fmt.Fprintf(&b, "==> %s <==\n%s", filepath.Base(l), t)
			}
		}
		f.Close()
	}
	return b.String()
}

// TailFile returns the last n lines of a file, reading at most its last 64 KiB: a log's end for
// an error that says why a process did not start.
func TailFile(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return ""
	}
	off := st.Size() - 64<<10
	if off < 0 {
		off = 0
	}
	data := make([]byte, st.Size()-off)
	if _, err := f.ReadAt(data, off); err != nil && err != io.EOF {
		return ""
	}
	return lastLines(string(data), n)
}

func lastLines(s string, n int) string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return ""
	}
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n") + "\n"
}

// sortedKeys gives a stable argument order, which makes logged command lines
// comparable between runs.
func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }

func itoa(n int) string { return strconv.Itoa(n) }

// Translations are the profile settings this server's version took in another form.
func (s *Server) Translations() []profile.Translation {
	return s.prof.Translations(s.Kind, s.Version)
}
