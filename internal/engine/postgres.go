package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/fairbench/fairbench/internal/engine/discovery"
	"github.com/fairbench/fairbench/internal/engine/profile"
	"github.com/jackc/pgx/v5"
)

// postgresUser is the account initdb and postgres run as when fairbench runs
// as root: both refuse to run as root. In a Debian root it is the root's own
// postgres user (postgresql-common creates it), whose uid the host may not know.
func postgresUser(rootDir string) (*syscall.Credential, error) {
	return serviceUser("postgres", rootDir, "PostgreSQL refuses to run as root")
}

// serviceUser is an engine's own unprivileged account, on the host or in the Debian root the
// server runs in (whose uids the host may not know); why says what needs it, for the error.
func serviceUser(name, rootDir, why string) (*syscall.Credential, error) {
	var uidS, gidS string
	if rootDir == "" {
		u, err := user.Lookup(name)
		if err != nil {
			return nil, fmt.Errorf("%s and there is no %s user to run it as: %w", why, name, err)
		}
		uidS, gidS = u.Uid, u.Gid
	} else {
		var err error
		if uidS, gidS, err = passwdEntry(filepath.Join(rootDir, "etc/passwd"), name); err != nil {
			return nil, fmt.Errorf("%s and the root %s has no %s user to run it as (%v): run scripts/install-engines.sh again", why, rootDir, name, err)
		}
	}
	uid, err1 := strconv.ParseUint(uidS, 10, 32)
	gid, err2 := strconv.ParseUint(gidS, 10, 32)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("%s user has non-numeric uid/gid %s/%s", name, uidS, gidS)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// passwdEntry returns a user's uid and gid from a passwd file.
func passwdEntry(path, name string) (uid, gid string, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Split(line, ":")
		if len(f) >= 4 && f[0] == name {
			return f[2], f[3], nil
		}
	}
	return "", "", fmt.Errorf("no user %s in %s", name, path)
}

func (s *Server) initPostgres(ctx context.Context) error {
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		c, err := postgresUser(s.inst.Root)
		if err != nil {
			return err
		}
		cred = c
		if err := os.Chown(s.hostRun, int(c.Uid), int(c.Gid)); err != nil {
			return err
		}
	}
	// initdb reads the superuser password from a file so that it never
	// appears in a process listing.
	pwfile := s.host("pwfile")
	if err := writePrivate(pwfile, s.password+"\n"); err != nil {
		return err
	}
	defer os.Remove(pwfile)
	if cred != nil {
		if err := os.Chown(pwfile, int(cred.Uid), int(cred.Gid)); err != nil {
			return err
		}
	}
	// scram-sha-256 exists since PostgreSQL 10; initdb also switches
	// password_encryption to match, so the stored password works with it.
	auth := "scram-sha-256"
	if ma, _ := discovery.MajorMinor(s.Version); ma > 0 && ma < 10 {
		auth = "md5"
	}
	initdb := filepath.Join(filepath.Dir(s.inst.BinaryInRoot()), "initdb")
	args := []string{
		"-D", s.inner("data"),
		"-U", "fairbench",
		"--pwfile=" + s.inner("pwfile"),
		"--auth-local=trust",
		"--auth-host=" + auth,
		"-E", s.Applied["server_encoding"],
		"--locale=" + s.Applied["lc_collate"],
	}
	args = append(args, profile.InitdbFlags(s.Translations())...)
	if share := buildShareDir(s.inst.Build); share != "" {
		// A build's own catalog files (postgres.bki), not those of whatever release is installed
		// where its binary was configured to look.
		args = append(args, "-L", share)
	}
	err := s.runInit(ctx, exec.Command(initdb, args...), cred, "initdb.log")
	// initdb is another process: what went wrong is only in the log text the error carries, where
	// a directory the postgres user cannot reach shows as "Permission denied" (or "permission").
	if err != nil && cred != nil && strings.Contains(err.Error(), "ermission denied") {
		err = fmt.Errorf("%w\n(initdb runs as the postgres user, uid %d, which must be able to reach %s: use a work dir under /tmp or /var/tmp)", err, cred.Uid, s.hostRun)
	}
	return err
}

// buildShareDir is where a PostgreSQL build keeps its catalog files: PREFIX/share/postgresql, or
// PREFIX/share for a prefix whose name says postgres (configure's rule); "" for a package.
func buildShareDir(build string) string {
	if build == "" {
		return ""
	}
	for _, d := range []string{"share/postgresql", "share"} {
		if _, err := os.Stat(filepath.Join(build, d, "postgres.bki")); err == nil {
			return filepath.Join(build, d)
		}
	}
	return ""
}

func (s *Server) postgresCmd() *exec.Cmd {
	args := []string{"-D", s.inner("data")}
	for _, k := range sortedKeys(s.Applied) {
		if !profile.InitdbKeys[k] {
			args = append(args, "-c", k+"="+s.Applied[k])
		}
	}
	// The socket lives in the run dir so that it disappears with it; a path
	// too long for sun_path disables the socket instead (TCP is what the
	// benchmark uses anyway).
	sockDir := s.innerRun
	if len(sockDir)+len("/.s.PGSQL.65535") > unixSocketMax {
		sockDir = ""
	}
	args = append(args, "-c", "port="+itoa(s.Port), "-c", "unix_socket_directories="+sockDir)
	if s.inst.Root == "" {
		return exec.Command(s.inst.Binary, args...)
	}
	return s.chrootPostgresCmd(args)
}

// chrootPostgresCmd starts postgres in its Debian root with a /dev/shm of its own (privateShmCmd).
// PostgreSQL keeps its dynamic shared memory (parallel queries, statistics) there. The shell runs
// as root (mounting needs it) and switches to the postgres user before it execs postgres, which
// keeps the server's pid: stop and sampling see the postmaster.
func (s *Server) chrootPostgresCmd(args []string) *exec.Cmd {
	cred, err := postgresUser(s.inst.Root)
	if err != nil {
		// initPostgres already needed the same user, so this cannot fail here; the
		// shell then fails the start with the reason in the server log.
		return exec.Command("/bin/sh", "-c", "echo "+shellQuote(err.Error())+" >&2; exit 1")
	}
	asUser := `setpriv --reuid=` + strconv.Itoa(int(cred.Uid)) + ` --regid=` + strconv.Itoa(int(cred.Gid)) + ` --clear-groups`
	return privateShmCmd(asUser, s.inst.BinaryInRoot(), args)
}

// privateShmCmd runs a server binary in its Debian root with a private tmpfs on /dev/shm, in a
// mount namespace of its own, so that the mount ends with the server and nothing is left to
// clean up. On the host /dev/shm is RAM (tmpfs); in a root it is a plain directory on the root's
// disk, which servers read as something it is not: MariaDB 11.8 takes a redo log on the same
// device as /dev/shm for memory (it treats /dev/shm as persistent memory) and then writes it
// through a memory map without ever flushing it, so its commits stopped waiting for the disk (4x
// the inserts of 10.11, with 250 block writes in 490,000 commits). prefix ("" or a command that
// switches user) comes before the binary; the shell execs the server, which keeps its pid.
func privateShmCmd(prefix, binary string, args []string) *exec.Cmd {
	script := `mount -t tmpfs -o mode=1777,nosuid,nodev,size=50% fairbench-shm /dev/shm && exec ` + prefix + ` "$@"`
	// $0 is the binary's name, which runInit's messages name the step by.
	cmd := exec.Command("/bin/sh", append([]string{"-c", script, filepath.Base(binary), binary}, args...)...)
	// Go makes every mount of the new namespace private before it chroots, so the tmpfs
	// never shows on the host.
	cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
	return cmd
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func (s *Server) pgConnect(ctx context.Context, db string) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(fmt.Sprintf("postgres://fairbench@127.0.0.1:%d/%s?sslmode=disable&connect_timeout=5", s.Port, db))
	if err != nil {
		return nil, err
	}
	cfg.Password = s.password
	return pgx.ConnectConfig(ctx, cfg)
}

// setupPostgres creates the benchmark database and checks that the server
// really runs with the sizes the report will claim.
func (s *Server) setupPostgres(ctx context.Context) error {
	conn, err := s.pgConnect(ctx, "postgres")
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	if err := s.statementAccounts(ctx); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE fairbench"); err != nil {
		return fmt.Errorf("create database fairbench: %w", err)
	}
	return s.checkSettingsOn(ctx, conn)
}

// statementAccounts creates pg_stat_statements in template1 where the profile preloads it, so
// that every database made on this throwaway server (fairbench's, a test's) has its view.
func (s *Server) statementAccounts(ctx context.Context) error {
	if !strings.Contains(s.Applied["shared_preload_libraries"], "pg_stat_statements") {
		return nil
	}
	conn, err := s.pgConnect(ctx, "template1")
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"); err != nil {
		return fmt.Errorf("create extension pg_stat_statements: %w", err)
	}
	return nil
}

// checkPostgresSettings checks the sizes the report will claim on a server whose database
// someone else creates (a postgres-ha node).
func (s *Server) checkPostgresSettings(ctx context.Context) error {
	conn, err := s.pgConnect(ctx, "postgres")
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	return s.checkSettingsOn(ctx, conn)
}

func (s *Server) checkSettingsOn(ctx context.Context, conn *pgx.Conn) error {
	var pool, maxConn, wal int64
	err := conn.QueryRow(ctx, `SELECT pg_size_bytes(current_setting('shared_buffers')),
		current_setting('max_connections')::bigint,
		pg_size_bytes(current_setting('max_wal_size'))`).Scan(&pool, &maxConn, &wal)
	if err != nil {
		return fmt.Errorf("read back settings: %w", err)
	}
	return errors.Join(
		s.checkApplied("shared_buffers", pool, s.prof.BufferPoolBytes),
		s.checkApplied("max_connections", maxConn, int64(s.prof.MaxConnections)),
		s.checkApplied("max_wal_size", wal, s.prof.RedoBytes),
	)
}

// checkApplied turns a server silently adjusting a setting (InnoDB rounding
// the buffer pool, mysqld lowering max_connections for lack of file
// descriptors) into an error: the report would otherwise compare engines
// under settings they did not run with.
func (s *Server) checkApplied(key string, got, want int64) error {
	// Under --profile defaults the engine keeps its own value, which is nothing to check.
	if _, applied := s.Applied[key]; got == want || !applied {
		return nil
	}
	hint := ""
	if strings.Contains(key, "buffer_pool") {
		hint = " (InnoDB sizes the pool in whole chunks of innodb_buffer_pool_chunk_size × instances: use a multiple of 1 GiB, or of 128 MiB below 1 GiB)"
	}
	return fmt.Errorf("%s %s runs with %s = %d, not the profile's %d%s", s.Kind, s.Version, key, got, want, hint)
}
