package engine

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// The second MySQL-family server of an installation copies the first's template data directory:
// it starts faster, answers to its own password only (the template's and the other server's are
// refused), keeps no file holding the password after its start, and StopAll removes the template.
// Not parallel: it counts the templates and calls StopAll.
func TestTemplateDataDirectory(t *testing.T) {
	for _, inst := range Discover("") {
		if inst.Kind == Postgres {
			continue
		}
		t.Run(inst.Name(), func(t *testing.T) {
			if err := DropTemplates(); err != nil {
				t.Fatal(err)
			}
			prof := Profile{BufferPoolBytes: 64 * mib, RedoBytes: 64 * mib, MaxConnections: 20}
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
			if tmpl.srv == nil || !isDir(tmpl.srv.host("data")) {
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
	u, err := url.Parse(srv.DSN)
	if err != nil {
		return err
	}
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr = u.User.Username(), "tcp", u.Host
	cfg.Passwd, _ = u.User.Password()
	if password != "" {
		cfg.Passwd = password
	}
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return db.PingContext(ctx)
}
