// Package engine finds the database servers installed on this machine and
// starts throwaway instances of them with one shared fairness profile, so that
// PostgreSQL, MariaDB and MySQL are compared under the same memory, durability
// and connection settings rather than under each distribution's defaults.
package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Kind names, used everywhere in fairbench.
const (
	Postgres = "postgres"
	MariaDB  = "mariadb"
	MySQL    = "mysql"
)

// Kinds lists every kind in the order reports show them.
var Kinds = []string{Postgres, MariaDB, MySQL}

// DefaultMySQLRoot is where scripts/install-engines.sh builds the Debian sid
// root that MySQL runs from (MySQL is not packaged for Debian 12).
const DefaultMySQLRoot = "/opt/fairbench/mysql-root"

// mysqlRootEnv overrides DefaultMySQLRoot; the install script reads it too.
const mysqlRootEnv = "FAIRBENCH_MYSQL_ROOT"

// Installation is a server that can be started locally.
type Installation struct {
	Kind    string // postgres|mariadb|mysql
	Version string // e.g. "15.18", from the binary's --version
	Binary  string // path of the server binary (inside Root for chroot installs, as seen from the host)
	Root    string // chroot directory, "" when not chrooted
}

func (i Installation) String() string {
	s := i.Kind + " " + i.Version + " (" + i.Binary
	if i.Root != "" {
		s += ", chroot " + i.Root
	}
	return s + ")"
}

// pathInRoot is the binary's path as the chrooted process sees it.
func (i Installation) pathInRoot() string {
	if i.Root == "" {
		return i.Binary
	}
	rel, err := filepath.Rel(i.Root, i.Binary)
	if err != nil {
		return i.Binary
	}
	return "/" + rel
}

// ResolveMySQLRoot returns the chroot directory Discover uses for MySQL: the
// argument, else $FAIRBENCH_MYSQL_ROOT, else DefaultMySQLRoot.
func ResolveMySQLRoot(mysqlRoot string) string {
	if mysqlRoot != "" {
		return mysqlRoot
	}
	if env := os.Getenv(mysqlRootEnv); env != "" {
		return env
	}
	return DefaultMySQLRoot
}

// Discover returns at most one installation per kind, in Kinds order: the one
// Find would pick. Probing runs each candidate's --version, so it costs a few
// process starts but never starts a server.
func Discover(mysqlRoot string) []Installation {
	var out []Installation
	if in, ok := discoverPostgres(); ok {
		out = append(out, in)
	}
	if in, ok := discoverMariaDB(); ok {
		out = append(out, in)
	}
	if in, ok := discoverMySQL(mysqlRoot); ok {
		out = append(out, in)
	}
	return out
}

// Find returns the installation of kind that Start should use, or an error
// that tells the user how to get one.
func Find(kind, mysqlRoot string) (Installation, error) {
	switch kind {
	case Postgres:
		if in, ok := discoverPostgres(); ok {
			return in, nil
		}
		return Installation{}, errors.New("postgres is not installed (no postgres with initdb beside it on PATH or under /usr/lib/postgresql/*/bin): run scripts/install-engines.sh")
	case MariaDB:
		if in, ok := discoverMariaDB(); ok {
			return in, nil
		}
		return Installation{}, errors.New("mariadb is not installed (no mariadbd with mariadb-install-db): run scripts/install-engines.sh")
	case MySQL:
		if in, ok := discoverMySQL(mysqlRoot); ok {
			return in, nil
		}
		root := ResolveMySQLRoot(mysqlRoot)
		if isExecutable(filepath.Join(root, "usr/sbin/mysqld")) && os.Geteuid() != 0 {
			return Installation{}, fmt.Errorf("mysql in %s runs under chroot, which needs root: run fairbench as root", root)
		}
		return Installation{}, fmt.Errorf("mysql is not installed (not on PATH, no %s/usr/sbin/mysqld): run scripts/install-engines.sh (or pass --mysql-root DIR)", root)
	}
	return Installation{}, fmt.Errorf("unknown engine kind %q (want one of %s)", kind, strings.Join(Kinds, ", "))
}

func discoverPostgres() (Installation, bool) {
	var cands []string
	if p, err := exec.LookPath("postgres"); err == nil {
		cands = append(cands, p)
	}
	for _, pat := range []string{"/usr/lib/postgresql/*/bin/postgres", "/usr/pgsql-*/bin/postgres", "/usr/local/pgsql/bin/postgres"} {
		m, _ := filepath.Glob(pat)
		cands = append(cands, m...)
	}
	var found []Installation
	seen := map[string]bool{}
	for _, c := range cands {
		// Debian links postgres into /usr/local/bin; initdb has to come from
		// the same directory as the real binary, so resolve links first.
		real, err := filepath.EvalSymlinks(c)
		if err != nil || seen[real] || !isExecutable(real) {
			continue
		}
		seen[real] = true
		if !isExecutable(filepath.Join(filepath.Dir(real), "initdb")) {
			continue
		}
		out, err := versionOutput("", real)
		if err != nil || !strings.Contains(out, "PostgreSQL") {
			continue
		}
		found = append(found, Installation{Kind: Postgres, Version: parseVersion(out, "(PostgreSQL)"), Binary: real})
	}
	return newest(found)
}

func discoverMariaDB() (Installation, bool) {
	var cands []string
	for _, name := range []string{"mariadbd", "mysqld"} {
		if p, err := exec.LookPath(name); err == nil {
			cands = append(cands, p)
		}
		cands = append(cands, "/usr/sbin/"+name)
	}
	var found []Installation
	seen := map[string]bool{}
	for _, c := range cands {
		real, err := filepath.EvalSymlinks(c)
		if err != nil || seen[real] || !isExecutable(real) {
			continue
		}
		seen[real] = true
		if mariadbInstallDB(real) == "" {
			continue
		}
		out, err := versionOutput("", real)
		if err != nil || !strings.Contains(out, "MariaDB") {
			continue
		}
		found = append(found, Installation{Kind: MariaDB, Version: parseVersion(out, "Ver"), Binary: real})
	}
	return newest(found)
}

// mariadbInstallDB finds the bootstrap script that belongs to a mariadbd
// binary, preferring the one in the same installation prefix.
func mariadbInstallDB(binary string) string {
	prefix := filepath.Dir(filepath.Dir(binary))
	var cands []string
	for _, name := range []string{"mariadb-install-db", "mysql_install_db"} {
		cands = append(cands, filepath.Join(prefix, "bin", name), filepath.Join(prefix, "scripts", name))
	}
	for _, name := range []string{"mariadb-install-db", "mysql_install_db"} {
		if p, err := exec.LookPath(name); err == nil {
			cands = append(cands, p)
		}
	}
	for _, c := range cands {
		if isExecutable(c) {
			return c
		}
	}
	return ""
}

func discoverMySQL(mysqlRoot string) (Installation, bool) {
	var native []Installation
	seen := map[string]bool{}
	var cands []string
	if p, err := exec.LookPath("mysqld"); err == nil {
		cands = append(cands, p)
	}
	cands = append(cands, "/usr/sbin/mysqld")
	for _, c := range cands {
		real, err := filepath.EvalSymlinks(c)
		if err != nil || seen[real] || !isExecutable(real) {
			continue
		}
		seen[real] = true
		out, err := versionOutput("", real)
		// Debian's MariaDB installs mysqld as a link to mariadbd; that must not
		// pass for MySQL or the comparison would pit MariaDB against itself.
		if err != nil || strings.Contains(out, "MariaDB") || !strings.Contains(out, "Ver") {
			continue
		}
		native = append(native, Installation{Kind: MySQL, Version: parseVersion(out, "Ver"), Binary: real})
	}

	var chrooted []Installation
	root := ResolveMySQLRoot(mysqlRoot)
	bin := filepath.Join(root, "usr/sbin/mysqld")
	// chroot(2) needs root; an installation that cannot be started is not
	// "found" (Find explains the reason instead).
	if os.Geteuid() == 0 && isExecutable(bin) {
		if abs, err := filepath.Abs(root); err == nil {
			root = abs
			bin = filepath.Join(root, "usr/sbin/mysqld")
		}
		if out, err := versionOutput(root, "/usr/sbin/mysqld"); err == nil && !strings.Contains(out, "MariaDB") {
			chrooted = append(chrooted, Installation{Kind: MySQL, Version: parseVersion(out, "Ver"), Binary: bin, Root: root})
		}
	}

	// A root the user named explicitly wins over whatever is on PATH.
	explicit := mysqlRoot != "" || os.Getenv(mysqlRootEnv) != ""
	if explicit && len(chrooted) > 0 {
		return chrooted[0], true
	}
	// Otherwise the newest; on a tie native sorts first, so it is preferred.
	return newest(append(native, chrooted...))
}

// versionOutput runs binary --version, chrooted into root when root != "".
func versionOutput(root, binary string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "--version")
	cmd.Env = serverEnv()
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

// compareVersions orders dotted versions numerically ("10.11" > "10.9").
func compareVersions(a, b string) int {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) || i < len(bs); i++ {
		var x, y int
		if i < len(as) {
			x, _ = strconv.Atoi(as[i])
		}
		if i < len(bs) {
			y, _ = strconv.Atoi(bs[i])
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}

// majorMinor returns the first two components of a version, 0 when absent.
func majorMinor(v string) (int, int) {
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

// newest picks the highest version; stable so earlier candidates win ties.
func newest(found []Installation) (Installation, bool) {
	if len(found) == 0 {
		return Installation{}, false
	}
	sort.SliceStable(found, func(i, j int) bool { return compareVersions(found[i].Version, found[j].Version) > 0 })
	return found[0], true
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0
}

// serverEnv is the environment every child gets. It is minimal on purpose:
// the caller's locale, LD_PRELOAD or MYSQL_HOME would otherwise leak into
// one engine and not the others, and host paths mean nothing in the chroot.
func serverEnv() []string {
	env := []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C", "LANG=C"}
	if tz, ok := os.LookupEnv("TZ"); ok {
		env = append(env, "TZ="+tz)
	}
	return env
}
