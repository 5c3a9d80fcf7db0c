package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
)

// initMySQL creates the data directory of a MySQL or MariaDB server, with a
// root account that logs in over TCP from 127.0.0.1 without a password.
func (s *Server) initMySQL(ctx context.Context) error {
	if s.Kind == MariaDB {
		tool := mariadbInstallDB(s.inst.Binary, s.inst.Root)
		if tool == "" {
			return errors.New("mariadb-install-db not found: run scripts/install-engines.sh")
		}
		// --no-defaults has to come first. "normal" root authentication
		// gives root@127.0.0.1 without a password, which MariaDB creates by
		// default; the default "socket" method would lock TCP logins out.
		args := []string{"--no-defaults", "--auth-root-authentication-method=normal"}
		if os.Geteuid() == 0 {
			args = append(args, "--user=root")
		}
		// The bootstrap's temporary tables go in the run dir, as the server's do (mysqlCmd): a
		// starting mariadbd deletes every #sql file in its tmpdir, so two inits sharing /tmp
		// (a root's, or the host's) removed each other's and aborted ("Unknown table
		// 'mysql.tmp_user_sys'").
		args = append(args, "--datadir="+s.inner("data"), "--tmpdir="+s.inner(""), "--skip-test-db", "--skip-name-resolve")
		return s.runInit(ctx, s.inRootCmd(s.inst.inner(tool), args), nil, "init.log")
	}

	// --initialize-insecure only creates root@localhost, which a TCP login
	// from 127.0.0.1 does not match under --skip-name-resolve; the init file
	// runs during bootstrap and adds the loopback account.
	initSQL := "CREATE USER 'root'@'127.0.0.1' IDENTIFIED BY '';\n" +
		"GRANT ALL PRIVILEGES ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION;\n"
	if err := os.WriteFile(s.host("init.sql"), []byte(initSQL), 0o644); err != nil {
		return err
	}
	defer os.Remove(s.host("init.sql"))
	args := []string{"--no-defaults"}
	if os.Geteuid() == 0 {
		args = append(args, "--user=root")
	}
	args = append(args,
		"--initialize-insecure",
		"--datadir="+s.inner("data"),
		"--tmpdir="+s.inner(""),
		"--log-error="+s.inner("error.log"),
		"--init-file="+s.inner("init.sql"),
	)
	return s.runInit(ctx, s.inRootCmd(s.inst.pathInRoot(), args), nil, "init.log")
}

func (s *Server) mysqlCmd() *exec.Cmd {
	args := []string{"--no-defaults"}
	if os.Geteuid() == 0 {
		args = append(args, "--user=root")
	}
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
	if s.node != nil {
		args = append(args, s.node.args(s.Port)...)
	}
	if s.Kind == MySQL {
		// Debian's build defaults secure_file_priv to /var/lib/mysql-files,
		// which does not exist in the root, and mysqld refuses to start.
		args = append(args, "--secure-file-priv=")
		if ma, _ := majorMinor(s.Version); ma == 0 || ma >= 8 {
			// The X plugin listens on 33060 by default: a second server (or
			// a system MySQL) would clash with it.
			args = append(args, "--mysqlx=OFF")
		}
	}
	return s.inRootCmd(s.inst.pathInRoot(), args)
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
	if s.node == nil || !s.node.joiner {
		if err := s.execWsrep(ctx, db, "CREATE DATABASE fairbench CHARACTER SET utf8mb4"); err != nil {
			return fmt.Errorf("create database fairbench: %w", err)
		}
	}
	redoKey := "innodb_redo_log_capacity"
	redoWant := s.prof.RedoBytes
	if _, ok := s.prof.fairSettings(s.Kind, s.Version)[redoKey]; !ok {
		redoKey = "innodb_log_file_size"
		if s.Kind == MySQL {
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
