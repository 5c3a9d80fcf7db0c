package engine

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"

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
	if st, err := os.Stat(abs); err != nil || !st.IsDir() {
		if strings.HasSuffix(abs, ".tar.xz") || strings.HasSuffix(abs, ".tar.gz") || strings.HasSuffix(abs, ".tgz") {
			return Installation{}, selectErrorf("--engines %s@%s: an archive is not started as it is: unpack it (tar -xf %s -C /opt) and give the directory it makes", kind, dir, dir)
		}
		return Installation{}, selectErrorf("--engines %s@%s: no such directory: give the prefix a %s build was installed or unpacked into", kind, dir, kind)
	}
	binary := ""
	for _, rel := range buildLayouts[kind] {
		if p := filepath.Join(abs, rel); isExecutable(p) {
			binary = p
			break
		}
	}
	if binary == "" {
		return Installation{}, selectErrorf("--engines %s@%s: no %s server there (looked for %s): give the install prefix, the directory that holds bin/", kind, dir, kind, strings.Join(buildLayouts[kind], ", "))
	}
	if err := buildCompanions(kind, abs, binary); err != nil {
		return Installation{}, err
	}
	out, err := versionOutput("", binary)
	if lib := missingLibrary(out); lib != "" {
		return Installation{}, selectErrorf("--engines %s@%s: %s needs the shared library %s, which this machine lacks: %s", kind, dir, filepath.Base(binary), lib, libraryFix(lib))
	}
	if err != nil {
		return Installation{}, selectErrorf("--engines %s@%s: %s --version failed (%s): is it a build for this machine?", kind, dir, binary, firstLineOf(out, err))
	}
	got := buildKind(out)
	if got != kind {
		return Installation{}, selectErrorf("--engines %s@%s: the server there says it is %s (%s): write %s@%s", kind, dir, orUnknown(got), strings.TrimSpace(firstLineOf(out, nil)), orUnknown(got), dir)
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
		if !isExecutable(filepath.Join(filepath.Dir(binary), "initdb")) {
			return selectErrorf("--engines %s@%s: bin/postgres has no bin/initdb beside it: give a complete install (make install), not the server alone", kind, dir)
		}
	case MariaDB:
		if mariadbInstallDB(binary, "") == "" {
			return selectErrorf("--engines %s@%s: no mariadb-install-db in scripts/ or bin/: give a complete bintar or install", kind, dir)
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
	return result.EngineName(i.Kind, i.Version) + "-" + fileSafeName(filepath.Base(i.Build))
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
