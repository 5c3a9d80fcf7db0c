package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/fairbench/fairbench/internal/engine/discovery"
	"github.com/go-sql-driver/mysql"
)

// initMySQL creates the data directory of a MySQL or MariaDB server whose root account logs in
// over TCP from 127.0.0.1 (and on the socket) with the server's password only, set before the
// server first listens, so that no other local user ever finds it open.
func (s *Server) initMySQL(ctx context.Context) error {
	if err := s.makeFilesDir(); err != nil {
		return err
	}
	if !s.template {
		if copied, err := s.fromTemplate(ctx); copied || err != nil {
			return err
		}
	}
	accounts := s.host("accounts.sql")
	if err := writePrivate(accounts, mysqlAccountsSQL(s.Kind, s.password)); err != nil {
		return err
	}
	defer os.Remove(accounts)
	if err := s.giveToServerUser(accounts); err != nil {
		return err
	}
	if s.Kind == discovery.MariaDB {
		return s.initMariaDB(ctx)
	}
	// --initialize-insecure creates root@localhost without a password; the init file runs during
	// bootstrap and gives it the password, and adds root@127.0.0.1, which a TCP login matches under
	// --skip-name-resolve.
	args := append([]string{"--no-defaults"}, s.userArgs()...)
	args = append(args, s.buildArgs()...)
	args = append(args,
		"--initialize-insecure",
		"--datadir="+s.inner("data"),
		"--tmpdir="+s.inner(""),
		"--log-error="+s.inner("error.log"),
		"--init-file="+s.inner("accounts.sql"),
	)
	return s.runInit(ctx, s.inRootCmd(s.inst.BinaryInRoot(), args), nil, "init.log")
}

// initMariaDB runs mariadb-install-db, then sets the accounts in a bootstrap of the new data
// directory (mariadbd --bootstrap reads SQL from its input and opens no port).
func (s *Server) initMariaDB(ctx context.Context) error {
	tool := discovery.MariaDBInstallDB(s.inst.Binary, s.inst.Root)
	if tool == "" {
		return errors.New("mariadb-install-db not found: run scripts/install-engines.sh")
	}
	// --no-defaults has to come first. "normal" root authentication gives root@localhost and
	// root@127.0.0.1 password logins (the default "socket" method would lock TCP logins out);
	// the bootstrap below gives them the password before anything listens.
	args := append([]string{"--no-defaults", "--auth-root-authentication-method=normal"}, s.userArgs()...)
	args = append(args, s.buildArgs()...)
	// The bootstrap's temporary tables go in the run dir, as the server's do (mysqlCmd): a
	// starting mariadbd deletes every #sql file in its tmpdir, so two inits sharing /tmp
	// (a root's, or the host's) removed each other's and aborted ("Unknown table
	// 'mysql.tmp_user_sys'").
	common := []string{"--datadir=" + s.inner("data"), "--tmpdir=" + s.inner("")}
	// --force: the script resolves the machine's name, or localhost, before anything else and
	// gives up when neither resolves, --skip-name-resolve or not; a minimal Debian root has no
	// /etc/hosts (seen: a fresh trixie root, MariaDB 11.8: "Neither host 'vm' nor 'localhost'
	// could be looked up"). The accounts use IP addresses anyway (--skip-name-resolve).
	args = append(append(args, common...), "--skip-test-db", "--skip-name-resolve", "--force")
	if err := s.runInit(ctx, s.inRootCmd(s.inst.InRoot(tool), args), nil, "init.log"); err != nil {
		return err
	}
	boot := append([]string{"--no-defaults"}, s.userArgs()...)
	boot = append(boot, s.buildArgs()...)
	boot = append(append(boot, common...), "--bootstrap", "--log-error="+s.inner("error.log"))
	cmd := s.inRootCmd(s.inst.BinaryInRoot(), boot)
	in, err := os.Open(s.host("accounts.sql"))
	if err != nil {
		return err
	}
	defer in.Close()
	return s.runInitWithInput(ctx, cmd, in, "init.log")
}

// buildArgs point a build's server and its tools at its own prefix (--basedir: its messages,
// character sets, plugins and bootstrap SQL), where a packaged server finds them where Debian
// put them.
func (s *Server) buildArgs() []string {
	if s.inst.Build == "" {
		return nil
	}
	args := []string{"--basedir=" + s.inst.Build}
	for _, dir := range []string{"lib/mysql/plugin", "lib/plugin"} {
		if discovery.IsDir(filepath.Join(s.inst.Build, dir)) {
			return append(args, "--plugin-dir="+filepath.Join(s.inst.Build, dir))
		}
	}
	return args
}

// mysqlUser is the account a MySQL-family server runs as when fairbench runs as root, as
// PostgreSQL runs as postgres: a server running as OS root lets anyone with its password create
// root-owned files anywhere (SET GLOBAL general_log_file = '/any/path'). Galera's nodes still
// run as root: their state transfer's rsync daemon switches to nobody (prepareJoiner).
func (s *Server) mysqlUser() (*syscall.Credential, error) {
	if os.Geteuid() != 0 || s.galera != nil {
		return nil, nil
	}
	return serviceUser("mysql", s.inst.Root, "a MySQL-family server must not run as root")
}

// userArgs tell mysqld and its tools the account to switch to: mysql where fairbench runs as
// root (root for Galera's nodes); none otherwise, since the server then runs as this user.
func (s *Server) userArgs() []string {
	switch {
	case os.Geteuid() != 0:
		return nil
	case s.galera != nil:
		return []string{"--user=root"}
	}
	return []string{"--user=mysql"}
}

// giveToServerUser makes the run dir, the files dir, the socket's dir and the named files the
// server user's, so that a server that switched to it can read its init file and write its data.
func (s *Server) giveToServerUser(files ...string) error {
	cred, err := s.mysqlUser()
	if err != nil || cred == nil {
		return err
	}
	for _, p := range append([]string{s.hostRun, s.host("files"), s.sockDir}, files...) {
		if p == "" {
			continue
		}
		if err := os.Lchown(p, int(cred.Uid), int(cred.Gid)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("giving %s to the server's user: %w", p, err)
		}
	}
	return nil
}

// makeFilesDir creates the one directory the server may read and write files in on a client's
// behalf (secure_file_priv): LOAD_FILE, SELECT ... INTO OUTFILE and server-side LOAD DATA reach
// nothing else. fairbench itself loads with LOAD DATA LOCAL, which the client reads.
func (s *Server) makeFilesDir() error {
	return os.Mkdir(s.host("files"), 0o700)
}

// writePrivate writes a file that only its owner can read (it may hold the server's password).
func writePrivate(path, content string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.WriteString(content)
	return errors.Join(err, f.Close())
}

func (s *Server) mysqlCmd() *exec.Cmd {
	args := append([]string{"--no-defaults"}, s.userArgs()...)
	args = append(args, s.buildArgs()...)
	args = append(args,
		"--datadir="+s.inner("data"),
		"--port="+itoa(s.Port),
		"--socket="+s.socket,
		"--pid-file="+s.inner("data/mysqld.pid"),
		"--log-error="+s.inner("error.log"),
		// Temporary tables in the server's own run dir, as PostgreSQL keeps its temp files in its
		// data dir: on the same disk, and out of reach of whatever else cleans /tmp (a MariaDB
		// here lost a temp table's file mid-query to a cleaner of /tmp).
		"--tmpdir="+s.inner(""),
	)
	if s.rekey != "" {
		// A template's copy: its password is set before the server takes a connection.
		args = append(args, "--init-file="+s.inner("accounts.sql"))
	}
	for _, k := range sortedKeys(s.Applied) {
		v := s.Applied[k]
		switch {
		case k == "log_bin" && v == "ON":
			// A relative base name keeps the binlog files in the data dir.
			args = append(args, "--log-bin=binlog")
		case k == "log_bin":
			// MySQL 8+ enables the binlog by default; MariaDB does not, but
			// accepts the flag, so both are told explicitly.
			args = append(args, "--skip-log-bin")
		default:
			args = append(args, "--"+strings.ReplaceAll(k, "_", "-")+"="+v)
		}
	}
	if s.galera != nil {
		args = append(args, s.galera.args(s.Port)...)
	}
	// Files on a client's behalf only in the run dir's files/ (see makeFilesDir). Debian's
	// MySQL would default to /var/lib/mysql-files, which does not exist in the root.
	args = append(args, "--secure-file-priv="+s.inner("files"))
	if s.Kind == discovery.MySQL {
		if ma, _ := discovery.MajorMinor(s.Version); ma == 0 || ma >= 8 {
			// The X plugin listens on 33060 by default: a second server (or
			// a system MySQL) would clash with it.
			args = append(args, "--mysqlx=OFF")
		}
	}
	return s.inRootCmd(s.inst.BinaryInRoot(), args)
}

// inRootCmd runs a MySQL-family binary: on the host as it is, in a Debian root with the private
// /dev/shm every process of a server there gets (privateShmCmd), its data directory's
// initialisation included, which writes the same redo log.
func (s *Server) inRootCmd(binary string, args []string) *exec.Cmd {
	if s.inst.Root == "" {
		return exec.Command(binary, args...)
	}
	return privateShmCmd("", binary, args)
}

// mysqlDB opens a pool to this server as root. The driver's logger is
// silenced here only: while the server starts it would print every refused
// probe to stderr.
func (s *Server) mysqlDB(db string) *sql.DB {
	cfg := mysql.NewConfig()
	cfg.User = "root"
	cfg.Passwd = s.password
	cfg.Net = "tcp"
	cfg.Addr = fmt.Sprintf("127.0.0.1:%d", s.Port)
	cfg.DBName = db
	cfg.Timeout = 5 * time.Second
	cfg.Logger = &mysql.NopLogger{}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		// NewConnector only fails on an invalid config, which is fixed here.
		panic(err)
	}
	return sql.OpenDB(conn)
}

func (s *Server) setupMySQL(ctx context.Context) error {
	db := s.mysqlDB("")
	defer db.Close()
	if err := s.waitWsrepReady(ctx); err != nil {
		return err
	}
	// A joining cluster node received the database from the first node.
	if s.galera == nil || !s.galera.Joiner {
		if err := s.execWsrep(ctx, db, "CREATE DATABASE fairbench CHARACTER SET utf8mb4"); err != nil {
			return fmt.Errorf("create database fairbench: %w", err)
		}
	}
	redoKey := "innodb_redo_log_capacity"
	redoWant := s.prof.RedoBytes
	if _, ok := s.prof.FairSettings(s.Kind, s.Version)[redoKey]; !ok {
		redoKey = "innodb_log_file_size"
		if s.Kind == discovery.MySQL {
			redoWant /= 2
		}
	}
	var pool, maxConn, redo int64
	err := db.QueryRowContext(ctx, "SELECT @@innodb_buffer_pool_size, @@max_connections, @@"+redoKey).Scan(&pool, &maxConn, &redo)
	if err != nil {
		return fmt.Errorf("read back settings: %w", err)
	}
	return errors.Join(
		s.checkApplied("innodb_buffer_pool_size", pool, s.prof.BufferPoolBytes),
		s.checkApplied("max_connections", maxConn, int64(s.prof.MaxConnections)),
		s.checkApplied(redoKey, redo, redoWant),
	)
}
