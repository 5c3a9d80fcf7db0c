package discovery

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// DefaultRootsDir is where scripts/install-engines.sh builds one minimal Debian root per suite
// (trixie/, sid/), each holding the server packages of that suite, run under chroot.
const DefaultRootsDir = "/opt/fairbench/roots"

// rootsDirEnv overrides DefaultRootsDir; the install script reads it too.
const rootsDirEnv = "FAIRBENCH_ROOTS"

// RootsDir is where the suite roots are: $FAIRBENCH_ROOTS, else DefaultRootsDir.
func RootsDir() string {
	if env := os.Getenv(rootsDirEnv); env != "" {
		return env
	}
	return DefaultRootsDir
}

// root is a place servers are installed: the host (dir "") or a Debian root run under chroot.
type root struct {
	dir      string // absolute, links resolved; "" for the host
	origin   string // "host", "trixie root"
	explicit bool   // named with --mysql-root or $FAIRBENCH_MYSQL_ROOT
}

var hostRoot = root{origin: "host"}

func (r root) installation(kind, version, binary string) Installation {
	return Installation{Kind: kind, Version: version, Binary: binary, Root: r.dir, Origin: r.origin}
}

// version runs the binary (a host path) with --version, inside the root when there is one.
func (r root) version(binary string) (string, error) {
	return cachedVersion(r.dir, Installation{Root: r.dir}.InRoot(binary), binary)
}

// discoverIn lists the servers of every kind in a root.
func discoverIn(r root) []Installation {
	var out []Installation
	out = append(out, discoverPostgres(r)...)
	out = append(out, discoverMariaDB(r)...)
	return append(out, discoverMySQL(r)...)
}

// rootDirs lists the roots to search: the MySQL root named by the user first, then every root
// under RootsDir, then the old MySQL root location, each once. chroot(2) needs root, so a
// process without it finds none (Select says why).
func rootDirs(mysqlRoot string) []root {
	if os.Geteuid() != 0 {
		return nil
	}
	explicit := mysqlRoot != "" || os.Getenv(mysqlRootEnv) != ""
	dirs := []string{ResolveMySQLRoot(mysqlRoot)}
	ents, _ := filepath.Glob(filepath.Join(RootsDir(), "*"))
	sort.Strings(ents)
	dirs = append(dirs, ents...)
	dirs = append(dirs, LegacyMySQLRoot)
	var out []root
	seen := map[string]bool{}
	for i, d := range dirs {
		real, err := filepath.EvalSymlinks(d)
		if err == nil {
			real, err = filepath.Abs(real)
		}
		// A root still being built is named DIR.tmp and renamed when complete.
		if err != nil || seen[real] || strings.HasSuffix(real, ".tmp") || !IsDir(filepath.Join(real, "usr")) {
			continue
		}
		seen[real] = true
		out = append(out, root{dir: real, origin: suiteOf(real) + " root", explicit: i == 0 && explicit})
	}
	return out
}

func IsDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// suiteOf names a root's Debian suite: sid says so in /etc/debian_version ("forky/sid"), a
// release in /etc/os-release's VERSION_CODENAME; else the directory's name.
func suiteOf(dir string) string {
	if b, err := os.ReadFile(filepath.Join(dir, "etc/debian_version")); err == nil && strings.Contains(string(b), "sid") {
		return "sid"
	}
	if b, err := os.ReadFile(filepath.Join(dir, "etc/os-release")); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "VERSION_CODENAME="); ok && strings.Trim(v, `"`) != "" {
				return strings.Trim(v, `"`)
			}
		}
	}
	return filepath.Base(dir)
}

// versionCache keeps each binary's --version answer for as long as the file is unchanged:
// discovery runs on every command and probing a chrooted mysqld costs a process start.
var versionCache = struct {
	sync.Mutex
	m map[string]versionEntry
}{m: map[string]versionEntry{}}

type versionEntry struct {
	mtime time.Time
	size  int64
	out   string
}

func cachedVersion(rootDir, inner, hostPath string) (string, error) {
	st, err := os.Stat(hostPath)
	if err != nil {
		return "", err
	}
	key := rootDir + "\x00" + inner
	versionCache.Lock()
	e, ok := versionCache.m[key]
	versionCache.Unlock()
	if ok && e.mtime.Equal(st.ModTime()) && e.size == st.Size() {
		return e.out, nil
	}
	out, err := versionOutput(rootDir, inner)
	if err != nil {
		return out, err
	}
	versionCache.Lock()
	versionCache.m[key] = versionEntry{st.ModTime(), st.Size(), out}
	versionCache.Unlock()
	return out, nil
}
