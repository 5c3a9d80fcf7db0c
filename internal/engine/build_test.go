package engine

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fairbench/fairbench/internal/engine/discovery"
	"github.com/fairbench/fairbench/internal/engine/profile"
	"github.com/fairbench/fairbench/internal/result"
)

// upstreamPrefix lays the installed package of kind out as an upstream install's prefix:
// PostgreSQL's bin/, lib/ and share/postgresql/; MariaDB's bin/, sbin/, scripts/,
// share/mysql/ and lib/mysql/plugin/.
func upstreamPrefix(t *testing.T, kind string) string {
	t.Helper()
	var inst discovery.Installation
	for _, in := range discovery.Discover("") {
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
	case discovery.Postgres:
		pg := filepath.Dir(filepath.Dir(inst.Binary))
		copies = [][2]string{{filepath.Join(pg, "bin"), "bin"}, {filepath.Join(pg, "lib"), "lib"},
			{"/usr/share/postgresql/" + filepath.Base(pg), "share/postgresql"}}
	case discovery.MariaDB:
		copies = [][2]string{{inst.Binary, "sbin/mariadbd"}, {discovery.MariaDBInstallDB(inst.Binary, ""), "scripts/mariadb-install-db"},
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
	for _, kind := range []string{discovery.Postgres, discovery.MariaDB} {
		t.Run(kind, func(t *testing.T) {
			prefix := upstreamPrefix(t, kind)
			insts, err := discovery.Select(kind+"@"+prefix, "")
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
	prefix := upstreamPrefix(t, discovery.Postgres)
	archive := filepath.Join(t.TempDir(), filepath.Base(prefix)+".tar.gz")
	if out, err := exec.Command("tar", "-czf", archive, "-C", filepath.Dir(prefix), filepath.Base(prefix)).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	insts, err := discovery.Select("postgres@"+archive, "")
	if err != nil {
		t.Fatal(err)
	}
	inst := insts[0]
	again, err := discovery.Select("postgres@"+archive, "")
	if err != nil || again[0].Binary != inst.Binary {
		t.Errorf("the archive was unpacked twice: %s, then %+v (%v)", inst.Binary, again, err)
	}
	if inst.Build != archive || inst.Name() != "postgres@"+result.Release("postgres", inst.Version)+"-"+filepath.Base(prefix) || !discovery.IsExecutable(inst.Binary) {
		t.Errorf("build from an archive: %+v named %s", inst, inst.Name())
	}
	unpackedDir := filepath.Dir(filepath.Dir(filepath.Dir(inst.Binary)))
	if err := discovery.RemoveUnpacked(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(unpackedDir); !os.IsNotExist(err) {
		t.Errorf("%s is still there after RemoveUnpacked: %v", unpackedDir, err)
	}
}
