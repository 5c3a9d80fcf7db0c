package engine

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/engine/discovery"
	"github.com/fairbench/fairbench/internal/engine/profile"
	"github.com/go-sql-driver/mysql"
)

// The second MySQL-family server of an installation copies the first's template data directory:
// it starts faster, answers to its own password only (the template's and the other server's are
// refused), keeps no file holding the password after its start, and StopAll removes the template.
// Not parallel: it counts the templates and calls StopAll.
func TestTemplateDataDirectory(t *testing.T) {
	integration(t)
	for _, inst := range discovery.Discover("") {
		if inst.Kind == discovery.Postgres {
			continue
		}
		t.Run(inst.Name(), func(t *testing.T) {
			if err := DropTemplates(); err != nil {
				t.Fatal(err)
			}
			prof := profile.Profile{BufferPoolBytes: 64 * mib, RedoBytes: 64 * mib, MaxConnections: 20}
			var srvs []*Server
			var took []time.Duration
			for range 2 {
				t0 := time.Now()
				srv, err := Start(context.Background(), inst, prof, workDir(t, ""))
				if err != nil {
					t.Fatal(err)
				}
				took = append(took, time.Since(t0))
				t.Cleanup(func() { srv.Stop() })
				srvs = append(srvs, srv)
			}
			t.Logf("%s: first server (template made) %s, second (copied) %s", inst.Name(), took[0].Round(time.Millisecond), took[1].Round(time.Millisecond))
			tmpl := templateOf(inst)
			if tmpl.srv == nil || !discovery.IsDir(tmpl.srv.host("data")) {
				t.Fatalf("no template data directory after two starts (%v)", tmpl.err)
			}
			if _, err := os.Stat(filepath.Join(srvs[1].hostRun, "accounts.sql")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the copy's password file is still there after its start: %v", err)
			}
			for i, srv := range srvs {
				if err := mysqlLogin(srv, ""); err != nil {
					t.Errorf("server %d with its own password: %v", i+1, err)
				}
				for _, other := range []string{srvs[1-i].password, tmpl.srv.password} {
					if err := mysqlLogin(srv, other); err == nil || !strings.Contains(err.Error(), "Access denied") {
						t.Errorf("server %d took another's password: %v", i+1, err)
					}
				}
			}
			dir := tmpl.srv.hostRun
			if err := StopAll(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("template %s left after StopAll: %v", dir, err)
			}
		})
	}
}

// mysqlLogin logs in to srv as root over TCP with password ("" for the server's own).
func mysqlLogin(srv *Server, password string) error {
	db, err := mysqlOpen(srv, password)
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return db.PingContext(ctx)
}

// mysqlDB is srv's root over TCP with its own password, closed at the test's end.
func mysqlDB(t *testing.T, srv *Server) *sql.DB {
	t.Helper()
	db, err := mysqlOpen(srv, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func mysqlOpen(srv *Server, password string) (*sql.DB, error) {
	u, err := url.Parse(srv.DSN)
	if err != nil {
		return nil, err
	}
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr = u.User.Username(), "tcp", u.Host
	cfg.Passwd, _ = u.User.Password()
	if password != "" {
		cfg.Passwd = password
	}
	return sql.Open("mysql", cfg.FormatDSN())
}

// A MySQL-family throwaway server runs as the unprivileged mysql user, from a template copy and
// from a fresh initialization alike: with the server's password a client cannot make it write a
// file where the mysql user may not (as OS root, SET GLOBAL general_log_file created
// a root-owned file anywhere).
func TestMySQLFamilyNotRoot(t *testing.T) {
	integration(t)
	if os.Geteuid() != 0 {
		t.Skip("the servers run as this user when fairbench is not root")
	}
	for _, inst := range discovery.Discover("") {
		if inst.Kind == discovery.Postgres {
			continue
		}
		t.Run(inst.Name(), func(t *testing.T) {
			prof := profile.Profile{BufferPoolBytes: 64 * mib, RedoBytes: 64 * mib, MaxConnections: 20}
			for i := range 2 { // the first may make the template, the second copies it
				srv, err := Start(context.Background(), inst, prof, workDir(t, ""))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { srv.Stop() })
				for _, pid := range srv.PIDs() {
					if uid := procUID(t, pid); uid == 0 {
						t.Errorf("server %d: process %d runs as root", i+1, pid)
					}
				}
				private := t.TempDir() // root's, mode 0700
				target := filepath.Join(private, "planted.log")
				db := mysqlDB(t, srv)
				_, err = db.Exec("SET GLOBAL general_log_file = '" + target + "'")
				if err == nil {
					_, err = db.Exec("SET GLOBAL general_log = ON")
				}
				if _, serr := os.Stat(target); !errors.Is(serr, os.ErrNotExist) {
					t.Errorf("server %d wrote %s in root's private directory (%v, %v)", i+1, target, err, serr)
				}
				_, _ = db.Exec("SET GLOBAL general_log = OFF")
			}
		})
	}
}

// procUID is the real uid of process pid.
func procUID(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return -1 // gone: nothing to say of it
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "Uid:" {
			uid, _ := strconv.Atoi(f[1])
			return uid
		}
	}
	t.Fatalf("no Uid in /proc/%d/status", pid)
	return -1
}
