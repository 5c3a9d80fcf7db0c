package engine

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/engine/discovery"
	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
)

// nobody is the uid of the local user a reviewer's probes of the reaper ran as.
var nobody = &syscall.Credential{Uid: 65534, Gid: 65534}

// checkClosedToStrangers is what a local user who is not root may try on a throwaway server:
// log in as its superuser with no password or the old fixed one, read its password or owner
// record, and (PostgreSQL) run a program as the server's OS user. None may succeed. With the
// password, the MySQL family must still keep files outside its run dir out of reach.
func checkClosedToStrangers(t *testing.T, srv *Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, pw := range []string{"", "fairbench"} {
		if err := tryLogin(ctx, srv, pw); err == nil {
			t.Errorf("%s %s: superuser logged in with password %q", srv.Kind, srv.Version, pw)
		}
	}
	if len(srv.password) < 20 {
		t.Errorf("server password of %d characters: want a random one of 26", len(srv.password))
	}
	if os.Geteuid() != 0 {
		return
	}
	if _, err := srv.DSNWithPasswordFile(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{srv.record, passwordFileOf(srv.record)} {
		if out, err := asNobody("cat", f).CombinedOutput(); err == nil {
			t.Errorf("uid 65534 read %s: %s", f, out)
		}
	}
	if srv.Kind == discovery.Postgres {
		checkNoProgramForStrangers(ctx, t, srv)
		return
	}
	checkFilesConfined(ctx, t, srv)
}

// tryLogin logs in as the server's superuser with password pw over TCP (a password login does not
// depend on the client's uid).
func tryLogin(ctx context.Context, srv *Server, pw string) error {
	if srv.Kind == discovery.Postgres {
		conn, err := pgx.Connect(ctx, fmt.Sprintf("postgres://fairbench:%s@127.0.0.1:%d/postgres?sslmode=disable&connect_timeout=5", pw, srv.Port))
		if err == nil {
			conn.Close(context.Background())
		}
		return err
	}
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr = "root", pw, "tcp", fmt.Sprintf("127.0.0.1:%d", srv.Port)
	cfg.Timeout, cfg.Logger = 5*time.Second, &mysql.NopLogger{}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return err
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	return db.PingContext(ctx)
}

func asNobody(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: nobody}
	cmd.Dir = "/"
	return cmd
}

// checkNoProgramForStrangers runs psql as uid 65534, over TCP with the old fixed password and over
// the server's socket (trusted for local logins, so only its directory keeps strangers out), and
// asks for COPY ... TO PROGRAM.
func checkNoProgramForStrangers(ctx context.Context, t *testing.T, srv *Server) {
	psql, err := exec.LookPath("psql")
	if err != nil {
		t.Log("psql is not installed: the socket probe is skipped")
		return
	}
	marker := filepath.Join(os.TempDir(), "fairbench-probe-"+newPassword())
	defer os.Remove(marker)
	copyTo := fmt.Sprintf("COPY (SELECT 1) TO PROGRAM 'touch %s'", marker)
	for _, host := range []string{"127.0.0.1", srv.host("")} {
		cmd := asNobody(psql, "-X", "-w", "-h", host, "-p", itoa(srv.Port), "-U", "fairbench", "-d", "postgres", "-c", copyTo)
		cmd.Env = append(os.Environ(), "PGPASSWORD=fairbench", "PGCONNECT_TIMEOUT=5")
		out, err := cmd.CombinedOutput()
		if err == nil {
			t.Errorf("uid 65534 ran COPY TO PROGRAM through %s: %s", host, out)
		}
		if _, serr := os.Stat(marker); serr == nil {
			t.Errorf("uid 65534's COPY TO PROGRAM through %s ran: %s exists", host, marker)
		}
	}
}

// checkFilesConfined logs in with the password and asks the server to write a file into a
// root-only directory and to read /etc/shadow: secure_file_priv must refuse both.
func checkFilesConfined(ctx context.Context, t *testing.T, srv *Server) {
	db := srv.mysqlDB("")
	defer db.Close()
	target := filepath.Join(os.TempDir(), "fairbench-probe-"+newPassword())
	defer os.Remove(target)
	_, err := db.ExecContext(ctx, fmt.Sprintf("SELECT 1 INTO OUTFILE '%s'", target))
	var me *mysql.MySQLError
	if err == nil || !errors.As(err, &me) || me.Number != 1290 {
		t.Errorf("%s: SELECT INTO OUTFILE %s: %v; want error 1290 (secure_file_priv)", srv.Kind, target, err)
	}
	var shadow sql.NullString
	if err := db.QueryRowContext(ctx, "SELECT LOAD_FILE('/etc/shadow')").Scan(&shadow); err != nil || shadow.Valid {
		t.Errorf("%s: LOAD_FILE('/etc/shadow') = %v (%v); want NULL", srv.Kind, shadow.Valid, err)
	}
	var priv string
	if err := db.QueryRowContext(ctx, "SELECT @@secure_file_priv").Scan(&priv); err != nil || !strings.HasPrefix(priv, srv.inner("files")) {
		t.Errorf("%s: secure_file_priv = %q (%v); want %s", srv.Kind, priv, err, srv.inner("files"))
	}
}

// plantedRecord is what a local attacker writes: a record naming a live process of someone else's,
// its directory, and a cgroup that is not fairbench's.
func plantedRecord(t *testing.T, victim *exec.Cmd, dir string) record {
	p, ok := readProc(victim.Process.Pid)
	if !ok {
		t.Fatal("victim not running")
	}
	return record{Owner: "1 1", Kind: discovery.Postgres, ServerPID: p.pid, ServerStart: p.start, RunDir: dir,
		DataDir: "/var/lib/postgresql", Cgroups: []string{"/sys/fs/cgroup/system.slice"}, MountPoint: "/proc"}
}

// touching are the reaper's lines about what the planted record names: the reaper also sweeps
// what a fairbench killed outright left on this machine (a test run stopped with kill -9 leaves
// its cgroups), which is not the planted record's doing.
func touching(reaped []string, planted record) []string {
	var out []string
	for _, line := range reaped {
		for _, p := range append([]string{planted.RunDir, planted.DataDir, planted.MountPoint}, planted.Cgroups...) {
			if strings.Contains(line, p) {
				out = append(out, line)
				break
			}
		}
	}
	return out
}

// A record in a directory another user made, or that names what Start never makes, moves the
// reaper to nothing; a link planted where a record is written is not followed.
func TestPlantedRecords(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the reaper's trust matters when fairbench runs as root")
	}
	saved := RecordDir
	t.Cleanup(func() { RecordDir = saved })
	victim := exec.Command("sleep", "60")
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = victim.Process.Kill(); _ = victim.Wait() }()
	keep := t.TempDir()
	decoy := filepath.Join(keep, "fairbench-postgres-victim")
	if err := os.Mkdir(decoy, 0o755); err != nil {
		t.Fatal(err)
	}
	planted := plantedRecord(t, victim, decoy)
	rec, _ := json.Marshal(planted)

	t.Run("directory of another user", func(t *testing.T) {
		RecordDir = filepath.Join(t.TempDir(), "fairbench-servers")
		if err := os.Mkdir(RecordDir, 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(RecordDir, int(nobody.Uid), int(nobody.Gid)); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(RecordDir, "1-x.json"), rec, 0o644); err != nil {
			t.Fatal(err)
		}
		reaped, err := ReapStale()
		if err == nil || !strings.Contains(err.Error(), "belongs to uid 65534") || len(touching(reaped, planted)) != 0 {
			t.Errorf("ReapStale = %q, %v; want nothing reaped and the directory's owner named", reaped, err)
		}
		if err := writeRecordFile(filepath.Join(RecordDir, "2-x.json"), record{}); err == nil {
			t.Error("a record was written into a directory of another user")
		}
	})
	t.Run("own directory, foreign paths", func(t *testing.T) {
		RecordDir = filepath.Join(t.TempDir(), "servers")
		if err := writeRecordFile(filepath.Join(RecordDir, "1-x.json"), record{}); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(RecordDir, "1-x.json"), rec, 0o600); err != nil {
			t.Fatal(err)
		}
		reaped, err := ReapStale()
		if err == nil || !strings.Contains(err.Error(), "left alone") || len(touching(reaped, planted)) != 0 {
			t.Errorf("ReapStale = %q, %v; want the record left alone", reaped, err)
		}
	})
	t.Run("link at a record's temporary name", func(t *testing.T) {
		RecordDir = filepath.Join(t.TempDir(), "servers")
		if err := writeRecordFile(filepath.Join(RecordDir, "0.json"), record{}); err != nil {
			t.Fatal(err)
		}
		precious := filepath.Join(keep, "precious")
		if err := os.WriteFile(precious, []byte("keep me"), 0o644); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(RecordDir, "3-x.json")
		if err := os.Symlink(precious, path+".tmp"); err != nil {
			t.Fatal(err)
		}
		if err := writeRecordFile(path, record{Kind: discovery.Postgres}); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(precious); string(b) != "keep me" {
			t.Errorf("the linked file was overwritten: %q", b)
		}
	})
	if p, ok := readProc(victim.Process.Pid); !ok || dead(p) {
		t.Error("the reaper killed the victim process")
	}
	if _, err := os.Stat(decoy); err != nil {
		t.Errorf("the reaper removed %s: %v", decoy, err)
	}
}
