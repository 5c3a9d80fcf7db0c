package discovery

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/fairbench/fairbench/internal/result"
)

// A build is a server the user built or unpacked (--engines postgres@/usr/local/pgsql,
// mysql@/opt/mysql-8.4.8-linux-glibc2.28-x86_64): laid out as upstream installs it, started as a
// throwaway server with the fairness profile as the packaged ones are, and named after its
// directory so that a build and the package of the same release can be compared.

// buildLayouts are where an upstream install keeps its server binary, by kind: PostgreSQL's
// bin/ (initdb beside it), MariaDB's bintar bin/ or sbin/ (mariadbd since 10.5), MySQL's bin/.
var buildLayouts = map[string][]string{
	Postgres: {"bin/postgres"},
	MariaDB:  {"bin/mariadbd", "sbin/mariadbd", "bin/mysqld", "sbin/mysqld"},
	MySQL:    {"bin/mysqld", "sbin/mysqld"},
}

// isBuildDir says whether an --engines release is a directory (it holds a slash): a build.
func isBuildDir(rel string) bool { return strings.Contains(rel, "/") }

// FromBuild is the installation in dir, an upstream install's prefix: its server binary found
// where that layout keeps it, its version read from the binary. Errors are one line naming what
// is missing and the fix.
func FromBuild(kind, dir string) (Installation, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Installation{}, err
	}
	st, err := os.Stat(abs)
	switch {
	case err == nil && st.Mode().IsRegular() && isArchiveName(abs):
		prefix, err := unpacked(abs)
		if err != nil {
			return Installation{}, selectErrorf("--engines %s: %v", engineArg(kind, dir), err)
		}
		inst, err := FromBuild(kind, prefix)
		inst.Build, inst.Origin = abs, "build "+abs+" (unpacked for this run)"
		return inst, err
	case err != nil || !st.IsDir():
		return Installation{}, selectErrorf("--engines %s: no such directory or archive: give the prefix a %s build was installed or unpacked into, or its .tar.xz/.tar.gz", engineArg(kind, dir), kind)
	}
	binary := ""
	for _, rel := range buildLayouts[kind] {
		if p := filepath.Join(abs, rel); IsExecutable(p) {
			binary = p
			break
		}
	}
	if binary == "" {
		return Installation{}, selectErrorf("--engines %s: no %s server there (looked for %s): give the install prefix, the directory that holds bin/", engineArg(kind, dir), kind, strings.Join(buildLayouts[kind], ", "))
	}
	if err := buildCompanions(kind, abs, binary); err != nil {
		return Installation{}, err
	}
	out, err := versionOutput("", binary)
	if lib := missingLibrary(out); lib != "" {
		return Installation{}, selectErrorf("--engines %s: %s needs the shared library %s, which this machine lacks: %s", engineArg(kind, dir), filepath.Base(binary), lib, libraryFix(lib))
	}
	if err != nil {
		return Installation{}, selectErrorf("--engines %s: %s --version failed (%s): is it a build for this machine?", engineArg(kind, dir), binary, firstLineOf(out, err))
	}
	got := buildKind(out)
	if got != kind {
		return Installation{}, selectErrorf("--engines %s: the server there says it is %s (%s): write %s", engineArg(kind, dir), orUnknown(got), strings.TrimSpace(firstLineOf(out, nil)), engineArg(orUnknown(got), dir))
	}
	marker := "Ver"
	if kind == Postgres {
		marker = "(PostgreSQL)"
	}
	version := parseVersion(out, marker)
	return Installation{Kind: kind, Version: version, Binary: binary, Origin: "build " + abs, Build: abs}, nil
}

// buildCompanions checks the tools a build's start needs beside its server: initdb for
// PostgreSQL, mariadb-install-db for MariaDB.
func buildCompanions(kind, dir, binary string) error {
	switch kind {
	case Postgres:
		if !IsExecutable(filepath.Join(filepath.Dir(binary), "initdb")) {
			return selectErrorf("--engines %s: bin/postgres has no bin/initdb beside it: give a complete install (make install), not the server alone", engineArg(kind, dir))
		}
	case MariaDB:
		if MariaDBInstallDB(binary, "") == "" {
			return selectErrorf("--engines %s: no mariadb-install-db in scripts/ or bin/: give a complete bintar or install", engineArg(kind, dir))
		}
	}
	return nil
}

// buildKind is what a server binary's --version says it is.
func buildKind(out string) string {
	switch {
	case strings.Contains(out, "PostgreSQL"):
		return Postgres
	case strings.Contains(out, "MariaDB"):
		return MariaDB
	case strings.Contains(out, "Ver"):
		return MySQL
	}
	return ""
}

func orUnknown(kind string) string {
	if kind == "" {
		return "not a server fairbench knows"
	}
	return kind
}

var missingLibRE = regexp.MustCompile(`error while loading shared libraries: ([^:\s]+)`)

// missingLibrary is the shared library the dynamic loader could not find, from its message.
func missingLibrary(out string) string {
	if m := missingLibRE.FindStringSubmatch(out); m != nil {
		return m[1]
	}
	return ""
}

// libraryPackages are the Debian packages of the libraries upstream tarballs need and a minimal
// machine may lack (MySQL's generic Linux builds link libaio and libnuma).
var libraryPackages = map[string]string{
	"libaio.so.1":      "libaio1t64 (Debian 13; libaio1 before)",
	"libnuma.so.1":     "libnuma1",
	"libncurses.so.6":  "libncurses6",
	"libtinfo.so.6":    "libtinfo6",
	"libssl.so.3":      "libssl3t64 (Debian 13; libssl3 before)",
	"libcrypto.so.3":   "libssl3t64 (Debian 13; libssl3 before)",
	"libicu":           "libicu-dev's runtime, libicu72 or newer",
	"liblz4.so.1":      "liblz4-1",
	"libzstd.so.1":     "libzstd1",
	"libpmem.so.1":     "libpmem1",
	"libldap-2.5.so.0": "libldap-2.5-0",
}

func libraryFix(lib string) string {
	for name, pkg := range libraryPackages {
		if strings.HasPrefix(lib, name) {
			if name == "libaio.so.1" {
				// Debian 13 renamed the library file too; an upstream tarball still asks for the old name.
				return "apt-get install " + strings.Fields(pkg)[0] + " (on Debian 13 also link libaio.so.1t64 to libaio.so.1)"
			}
			return "apt-get install " + strings.Fields(pkg)[0]
		}
	}
	return "install the package that provides it (apt-file search " + lib + ")"
}

func firstLineOf(out string, err error) string {
	out = strings.TrimSpace(out)
	if out == "" && err != nil {
		return err.Error()
	}
	line, _, _ := strings.Cut(out, "\n")
	return line
}

// BuildName is a build's name in --engines lists, results and reports: the engine and release
// and the directory's name, "postgres@17-pgsql", so that it stands beside the package's
// "postgres@17".
func (i Installation) BuildName() string {
	base := filepath.Base(i.Build)
	for _, ext := range []string{".tar.xz", ".tar.gz", ".tgz", ".tar.zst", ".tar"} {
		base = strings.TrimSuffix(base, ext)
	}
	return result.EngineName(i.Kind, i.Version) + "-" + fileSafeName(base)
}

func fileSafeName(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			return r
		}
		return '_'
	}, s)
}

// isArchiveName says whether a path names a tarball, as upstream ships its builds.
func isArchiveName(p string) bool {
	for _, ext := range []string{".tar.xz", ".tar.gz", ".tgz", ".tar.zst", ".tar"} {
		if strings.HasSuffix(p, ext) {
			return true
		}
	}
	return false
}

// unpackedBuilds are the archives unpacked by this process, by path: each once, however often
// --engines is resolved, and all removed by RemoveUnpacked.
var unpackedBuilds = struct {
	sync.Mutex
	dirs map[string]string // archive -> the directory it was unpacked into
}{dirs: map[string]string{}}

// unpacked unpacks an archive into a directory of its own (unpredictable name, readable by the
// servers' own users) and returns the build's prefix: the one directory the archive holds, or
// the directory itself. An archive tar cannot read is refused in one line.
func unpacked(archive string) (string, error) {
	unpackedBuilds.Lock()
	defer unpackedBuilds.Unlock()
	dir, ok := unpackedBuilds.dirs[archive]
	if !ok {
		var err error
		if dir, err = os.MkdirTemp("", "fairbench-build-"); err != nil {
			return "", err
		}
		// The server runs as postgres or mysql, which must reach its binary and files.
		if err := os.Chmod(dir, 0o755); err != nil {
			os.RemoveAll(dir)
			return "", err
		}
		// GNU tar keeps members inside the directory (it drops leading / and refuses ..);
		// ownership is this process's, whatever the archive says.
		out, err := exec.Command("tar", "-xf", archive, "-C", dir, "--no-same-owner").CombinedOutput()
		if err != nil {
			os.RemoveAll(dir)
			return "", fmt.Errorf("not an archive tar can unpack (%s): give a build's .tar.xz or .tar.gz, or the directory it unpacks into", firstLineOf(string(out), err))
		}
		unpackedBuilds.dirs[archive] = dir
	}
	ents, err := os.ReadDir(dir)
	if err == nil && len(ents) == 1 && ents[0].IsDir() {
		return filepath.Join(dir, ents[0].Name()), nil
	}
	return dir, err
}

// RemoveUnpacked removes every archive this process unpacked; the command line calls it on its
// way out, also after a failure or Ctrl-C.
func RemoveUnpacked() error {
	unpackedBuilds.Lock()
	defer unpackedBuilds.Unlock()
	var errs []error
	for archive, dir := range unpackedBuilds.dirs {
		errs = append(errs, os.RemoveAll(dir))
		delete(unpackedBuilds.dirs, archive)
	}
	return errors.Join(errs...)
}

// engineArg is KIND@DIR as the user gave it, quoted where the directory's name holds a character
// that would break the one-line message it appears in (a newline, a control character).
func engineArg(kind, dir string) string {
	if strings.IndexFunc(dir, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
		dir = strconv.Quote(dir)
	}
	return kind + "@" + dir
}
