package engine

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fairbench/fairbench/internal/engine/profile"
	"github.com/fairbench/fairbench/internal/result"
)

// script writes an executable shell script at dir/rel.
func script(t *testing.T, dir, rel, body string) {
	t.Helper()
	p := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// Every wrong build directory is one line that names the problem and the fix, before any work.
func TestFromBuildBadInput(t *testing.T) {
	empty := t.TempDir()
	noInitdb := t.TempDir()
	script(t, noInitdb, "bin/postgres", `echo "postgres (PostgreSQL) 17.2"`)
	noLib := t.TempDir()
	script(t, noLib, "bin/mysqld", `echo "$0: error while loading shared libraries: libaio.so.1: cannot open shared object file: No such file or directory" >&2; exit 127`)
	wrongKind := t.TempDir()
	script(t, wrongKind, "bin/mysqld", `echo "mysqld  Ver 11.4.2-MariaDB for Linux on x86_64 (MariaDB Server)"`)
	archive := filepath.Join(t.TempDir(), "mysql-8.4.8-linux-glibc2.28-x86_64.tar.xz")
	if err := os.WriteFile(archive, []byte("not a tarball"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		kind, dir, want string
	}{
		{MySQL, "/nonexistent/mysql-8.4", "no such directory or archive"},
		{MySQL, archive, "not an archive tar can unpack"},
		{Postgres, empty, "no postgres server there (looked for bin/postgres)"},
		{Postgres, noInitdb, "no bin/initdb beside it"},
		{MySQL, noLib, "needs the shared library libaio.so.1, which this machine lacks: apt-get install libaio1t64"},
		{MySQL, wrongKind, "says it is mariadb"},
	} {
		_, err := FromBuild(tc.kind, tc.dir)
		var se *SelectError
		if err == nil || !errors.As(err, &se) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s@%s: %v; want one line with %q", tc.kind, tc.dir, err, tc.want)
		}
	}
}

func TestParseEnginesBuild(t *testing.T) {
	choices, _, err := ParseEngines("postgres@/usr/local/pgsql,MySQL@/opt/MySQL-8.4,mariadb@11.8")
	if err != nil {
		t.Fatal(err)
	}
	want := []Choice{{Kind: Postgres, Dir: "/usr/local/pgsql"}, {Kind: MySQL, Dir: "/opt/MySQL-8.4"}, {Kind: MariaDB, Release: "11.8"}}
	for i := range want {
		if choices[i] != want[i] {
			t.Errorf("choice %d: %+v, want %+v", i, choices[i], want[i])
		}
	}
	if _, _, err := ParseEngines("galera@/opt/x"); err == nil || !strings.Contains(err.Error(), "a build is one of") {
		t.Errorf("a cluster from a directory: %v", err)
	}
}

// upstreamPrefix lays the installed package of kind out as an upstream install's prefix:
// PostgreSQL's bin/, lib/ and share/postgresql/; MariaDB's bin/, sbin/, scripts/,
// share/mysql/ and lib/mysql/plugin/.
func upstreamPrefix(t *testing.T, kind string) string {
	t.Helper()
	var inst Installation
	for _, in := range Discover("") {
		if in.Kind == kind && in.Root == "" {
			inst = in
		}
	}
	if inst.Binary == "" {
		t.Skipf("%s is not installed on the host", kind)
	}
	dir, err := os.MkdirTemp("/tmp", "fairbench-build-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	prefix := filepath.Join(dir, kind+"-"+inst.Version)
	var copies [][2]string
	switch kind {
	case Postgres:
		pg := filepath.Dir(filepath.Dir(inst.Binary))
		copies = [][2]string{{filepath.Join(pg, "bin"), "bin"}, {filepath.Join(pg, "lib"), "lib"},
			{"/usr/share/postgresql/" + filepath.Base(pg), "share/postgresql"}}
	case MariaDB:
		copies = [][2]string{{inst.Binary, "sbin/mariadbd"}, {mariadbInstallDB(inst.Binary, ""), "scripts/mariadb-install-db"},
			{"/usr/bin/my_print_defaults", "bin/my_print_defaults"}, {"/usr/share/mysql", "share/mysql"}, {"/usr/lib/mysql/plugin", "lib/mysql/plugin"}}
	}
	for _, c := range copies {
		to := filepath.Join(prefix, c[1])
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("cp", "-aL", c[0], to).CombinedOutput(); err != nil {
			t.Fatalf("cp %s %s: %v: %s", c[0], to, err, out)
		}
	}
	for d := prefix; d != "/tmp"; d = filepath.Dir(d) {
		_ = os.Chmod(d, 0o755) // the server's own user must reach its binary
	}
	return prefix
}

// A PostgreSQL and a MariaDB copied from the packages into upstream prefixes start from there
// with the fairness profile: named after the directory, the binary and version the build's.
func TestStartBuild(t *testing.T) {
	integration(t)
	for _, kind := range []string{Postgres, MariaDB} {
		t.Run(kind, func(t *testing.T) {
			prefix := upstreamPrefix(t, kind)
			insts, err := Select(kind+"@"+prefix, "")
			if err != nil {
				t.Fatal(err)
			}
			inst := insts[0]
			if inst.Build != prefix || !strings.HasPrefix(inst.Binary, prefix+"/") || inst.Name() != inst.BuildName() || !strings.HasSuffix(inst.Name(), "-"+filepath.Base(prefix)) {
				t.Fatalf("build %+v named %s", inst, inst.Name())
			}
			srv, err := Start(context.Background(), inst, profile.Default(), workDir(t, ""))
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Stop()
			exe, err := os.Readlink("/proc/" + itoa(srv.PIDs()[0]) + "/exe")
			if err != nil || !strings.HasPrefix(exe, prefix+"/") {
				t.Errorf("the server runs %s (%v), not the build's binary", exe, err)
			}
		})
	}
}

// A build given as its archive is unpacked once for the run, found inside, named after the
// archive, and removed by RemoveUnpacked.
func TestBuildFromArchive(t *testing.T) {
	integration(t)
	prefix := upstreamPrefix(t, Postgres)
	archive := filepath.Join(t.TempDir(), filepath.Base(prefix)+".tar.gz")
	if out, err := exec.Command("tar", "-czf", archive, "-C", filepath.Dir(prefix), filepath.Base(prefix)).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	insts, err := Select("postgres@"+archive, "")
	if err != nil {
		t.Fatal(err)
	}
	inst := insts[0]
	again, err := Select("postgres@"+archive, "")
	if err != nil || again[0].Binary != inst.Binary {
		t.Errorf("the archive was unpacked twice: %s, then %+v (%v)", inst.Binary, again, err)
	}
	if inst.Build != archive || inst.Name() != "postgres@"+result.Release("postgres", inst.Version)+"-"+filepath.Base(prefix) || !isExecutable(inst.Binary) {
		t.Errorf("build from an archive: %+v named %s", inst, inst.Name())
	}
	unpackedDir := filepath.Dir(filepath.Dir(filepath.Dir(inst.Binary)))
	if err := RemoveUnpacked(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(unpackedDir); !os.IsNotExist(err) {
		t.Errorf("%s is still there after RemoveUnpacked: %v", unpackedDir, err)
	}
}
