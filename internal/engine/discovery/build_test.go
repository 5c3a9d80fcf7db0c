package discovery

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
