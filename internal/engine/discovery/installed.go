// Package discovery finds the database servers installed on this machine (the host's packages,
// the Debian roots scripts/install-engines.sh builds, a user's own builds and archives) and
// resolves what --engines chooses among them: Installation, the kinds' names, and the clusters
// that can be started from what is there. Starting a server is internal/engine's.
package discovery

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fairbench/fairbench/internal/result"
)

// Kind names, used everywhere in fairbench.
const (
	Postgres = "postgres"
	MariaDB  = "mariadb"
	MySQL    = "mysql"
)

// Kinds lists every single-server kind in the order reports show them; --engines all means these.
var Kinds = []string{Postgres, MariaDB, MySQL}

// ClusterKinds are the clusters fairbench can start, named in --engines explicitly (never by all:
// each starts several servers).
var ClusterKinds = []string{Galera, PostgresHA}

// LegacyMySQLRoot is where older versions of scripts/install-engines.sh built the Debian sid
// root that MySQL runs from; it is now a link to the sid root under DefaultRootsDir, and still
// searched so that a machine set up before the per-suite roots keeps its MySQL.
const LegacyMySQLRoot = "/opt/fairbench/mysql-root"

// DefaultMySQLRoot is the Debian sid root that scripts/install-engines.sh builds for MySQL.
func DefaultMySQLRoot() string { return filepath.Join(RootsDir(), "sid") }

// mysqlRootEnv overrides DefaultMySQLRoot; the install script reads it too.
const mysqlRootEnv = "FAIRBENCH_MYSQL_ROOT"

// Installation is a server that can be started locally.
type Installation struct {
	Kind    string // postgres|mariadb|mysql
	Version string // e.g. "15.18", from the binary's --version
	Binary  string // path of the server binary (inside Root for chroot installs, as seen from the host)
	Root    string // chroot directory, "" when not chrooted
	Origin  string // where it comes from: "host", the root's Debian suite ("trixie root"), or "build DIR"
	// Build is the prefix directory of a build the user gave (--engines KIND@DIR); "" for the
	// packaged servers fairbench installs.
	Build string
}

func (i Installation) String() string {
	s := i.Kind + " " + i.Version + " (" + i.Binary
	if i.Root != "" {
		s += ", chroot " + i.Root
	}
	return s + ")"
}

// Name is the engine and release as --engines takes it: "postgres@17", "mariadb@11.8".
// A build is named after its directory too (BuildName).
func (i Installation) Name() string {
	if i.Build != "" {
		return i.BuildName()
	}
	return result.EngineName(i.Kind, i.Version)
}

// BinaryInRoot is the binary's path as the chrooted process sees it.
func (i Installation) BinaryInRoot() string { return i.InRoot(i.Binary) }

// InRoot maps a host path inside the root to the path the chrooted process sees.
func (i Installation) InRoot(hostPath string) string {
	if i.Root == "" {
		return hostPath
	}
	rel, err := filepath.Rel(i.Root, hostPath)
	if err != nil {
		return hostPath
	}
	return "/" + rel
}

// ResolveMySQLRoot returns the chroot directory Discover searches first for MySQL: the
// argument, else $FAIRBENCH_MYSQL_ROOT, else DefaultMySQLRoot.
func ResolveMySQLRoot(mysqlRoot string) string {
	if mysqlRoot != "" {
		return mysqlRoot
	}
	if env := os.Getenv(mysqlRootEnv); env != "" {
		return env
	}
	return DefaultMySQLRoot()
}

// Discover returns every installation that can be started here, one per engine@release, in
// Kinds order and by ascending version within a kind. Where two offer the same release, a root
// named with --mysql-root or $FAIRBENCH_MYSQL_ROOT wins, then the host, then the suite roots.
// Probing runs each candidate's --version (cached by binary), so it never starts a server.
func Discover(mysqlRoot string) []Installation {
	var cands []Installation
	explicit := mysqlRoot != "" || os.Getenv(mysqlRootEnv) != ""
	roots := rootDirs(mysqlRoot)
	if explicit && len(roots) > 0 && roots[0].explicit {
		cands = append(cands, discoverIn(roots[0])...)
		roots = roots[1:]
	}
	cands = append(cands, discoverPostgres(hostRoot)...)
	cands = append(cands, discoverMariaDB(hostRoot)...)
	cands = append(cands, discoverMySQL(hostRoot)...)
	for _, r := range roots {
		cands = append(cands, discoverIn(r)...)
	}
	return uniqueReleases(cands)
}

// uniqueReleases keeps the first installation of each engine@release and sorts the rest.
func uniqueReleases(cands []Installation) []Installation {
	var out []Installation
	seen := map[string]bool{}
	for _, in := range cands {
		if !seen[in.Name()] {
			seen[in.Name()] = true
			out = append(out, in)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Kind != b.Kind {
			return kindIndex(a.Kind) < kindIndex(b.Kind)
		}
		return result.CompareVersions(a.Version, b.Version) < 0
	})
	return out
}

func kindIndex(kind string) int {
	for i, k := range append(Kinds, ClusterKinds...) {
		if k == kind {
			return i
		}
	}
	return len(Kinds) + len(ClusterKinds)
}

// Find returns the newest installation of kind, or an error that tells the user how to get one.
func Find(kind, mysqlRoot string) (Installation, error) {
	insts, err := Select(kind, mysqlRoot)
	if err != nil {
		return Installation{}, err
	}
	return insts[0], nil
}

func discoverPostgres(r root) []Installation {
	var cands []string
	if r.dir == "" {
		if p, err := exec.LookPath("postgres"); err == nil {
			cands = append(cands, p)
		}
	}
	for _, pat := range []string{"/usr/lib/postgresql/*/bin/postgres", "/usr/pgsql-*/bin/postgres", "/usr/local/pgsql/bin/postgres"} {
		m, _ := filepath.Glob(r.dir + pat)
		cands = append(cands, m...)
	}
	var found []Installation
	seen := map[string]bool{}
	for _, c := range cands {
		// Debian links postgres into /usr/local/bin; initdb has to come from
		// the same directory as the real binary, so resolve links first.
		real, err := filepath.EvalSymlinks(c)
		if err != nil || seen[real] || !IsExecutable(real) {
			continue
		}
		seen[real] = true
		if !IsExecutable(filepath.Join(filepath.Dir(real), "initdb")) {
			continue
		}
		out, err := r.version(real)
		if err != nil || !strings.Contains(out, "PostgreSQL") {
			continue
		}
		found = append(found, r.installation(Postgres, parseVersion(out, "(PostgreSQL)"), real))
	}
	return found
}

func discoverMariaDB(r root) []Installation {
	var cands []string
	for _, name := range []string{"mariadbd", "mysqld"} {
		if r.dir == "" {
			if p, err := exec.LookPath(name); err == nil {
				cands = append(cands, p)
			}
		}
		cands = append(cands, r.dir+"/usr/sbin/"+name)
	}
	var found []Installation
	seen := map[string]bool{}
	for _, c := range cands {
		real, err := filepath.EvalSymlinks(c)
		if err != nil || seen[real] || !IsExecutable(real) {
			continue
		}
		seen[real] = true
		if MariaDBInstallDB(real, r.dir) == "" {
			continue
		}
		out, err := r.version(real)
		if err != nil || !strings.Contains(out, "MariaDB") {
			continue
		}
		found = append(found, r.installation(MariaDB, parseVersion(out, "Ver"), real))
	}
	return found
}

// MariaDBInstallDB finds the bootstrap script that belongs to a mariadbd
// binary, preferring the one in the same installation prefix. In a root
// (rootDir != "") only the root's own script will do.
func MariaDBInstallDB(binary, rootDir string) string {
	prefix := filepath.Dir(filepath.Dir(binary))
	var cands []string
	for _, name := range []string{"mariadb-install-db", "mysql_install_db"} {
		cands = append(cands, filepath.Join(prefix, "bin", name), filepath.Join(prefix, "scripts", name))
	}
	for _, name := range []string{"mariadb-install-db", "mysql_install_db"} {
		if rootDir != "" {
			cands = append(cands, filepath.Join(rootDir, "usr/bin", name))
		} else if p, err := exec.LookPath(name); err == nil {
			cands = append(cands, p)
		}
	}
	for _, c := range cands {
		if IsExecutable(c) {
			return c
		}
	}
	return ""
}

func discoverMySQL(r root) []Installation {
	var cands []string
	if r.dir == "" {
		if p, err := exec.LookPath("mysqld"); err == nil {
			cands = append(cands, p)
		}
	}
	cands = append(cands, r.dir+"/usr/sbin/mysqld")
	var found []Installation
	seen := map[string]bool{}
	for _, c := range cands {
		real, err := filepath.EvalSymlinks(c)
		if err != nil || seen[real] || !IsExecutable(real) {
			continue
		}
		seen[real] = true
		out, err := r.version(real)
		// Debian's MariaDB installs mysqld as a link to mariadbd; that must not
		// pass for MySQL or the comparison would pit MariaDB against itself.
		if err != nil || strings.Contains(out, "MariaDB") || !strings.Contains(out, "Ver") {
			continue
		}
		found = append(found, r.installation(MySQL, parseVersion(out, "Ver"), real))
	}
	return found
}

// versionOutput runs binary --version, chrooted into root when root != "".
func versionOutput(root, binary string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "--version")
	cmd.Env = ChildEnv()
	if root != "" {
		// exec does not look absolute paths up on the host, so the path
		// resolves inside the root once the child has chrooted.
		cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: root}
		cmd.Dir = "/"
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

var versionRE = regexp.MustCompile(`\d+(?:\.\d+)+`)

// parseVersion returns the first dotted number after marker, e.g. "15.18"
// from "postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)".
func parseVersion(out, marker string) string {
	if i := strings.Index(out, marker); i >= 0 {
		out = out[i+len(marker):]
	}
	return versionRE.FindString(out)
}

// MajorMinor returns the first two components of a version, 0 when absent.
func MajorMinor(v string) (int, int) {
	parts := strings.Split(v, ".")
	var ma, mi int
	if len(parts) > 0 {
		ma, _ = strconv.Atoi(parts[0])
	}
	if len(parts) > 1 {
		mi, _ = strconv.Atoi(parts[1])
	}
	return ma, mi
}

func IsExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0
}

// ChildEnv is the environment every child gets. It is minimal on purpose:
// the caller's locale, LD_PRELOAD or MYSQL_HOME would otherwise leak into
// one engine and not the others, and host paths mean nothing in the chroot.
func ChildEnv() []string {
	env := []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C", "LANG=C"}
	if tz, ok := os.LookupEnv("TZ"); ok {
		env = append(env, "TZ="+tz)
	}
	return env
}
