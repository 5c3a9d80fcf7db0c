package discovery

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/fairbench/fairbench/internal/result"
)

// Choice is one entry of --engines: an engine kind and, optionally, a release ("17", "11.8");
// without one the newest installed release of the kind is meant.
type Choice struct {
	Kind, Release string
	// Dir is a build's directory (KIND@/opt/pgsql): started from there instead of a package.
	Dir string
}

func (c Choice) String() string {
	if c.Dir != "" {
		return c.Kind + "@" + c.Dir
	}
	if c.Release == "" {
		return c.Kind
	}
	return c.Kind + "@" + c.Release
}

// SelectError is an --engines value the user must fix; its message is one line that names what
// is installed and the command that installs more.
type SelectError struct{ Msg string }

func (e *SelectError) Error() string { return e.Msg }

func selectErrorf(format string, args ...any) error {
	return &SelectError{Msg: fmt.Sprintf(format, args...)}
}

// Installable are the releases scripts/install-engines.sh can install, by kind: the host's
// (Debian 12) and those of the trixie and sid roots.
var Installable = map[string][]string{
	Postgres: {"15", "17", "18"},
	MariaDB:  {"10.11", "11.8"},
	MySQL:    {"9.7"},
	// galera runs on the host's MariaDB only: its wsrep_sst_rsync and galera-4 are on the host.
	Galera: {"10.11"},
	// postgres-ha runs on the host's PostgreSQL, beside Debian 12's patroni and etcd-server.
	PostgresHA: {"15"},
}

var releaseSyntax = regexp.MustCompile(`^\d+(\.\d+)*$`)

// ParseEngines reads an --engines value: "all" (every installed kind, newest release each) or a
// comma list of KIND or KIND@RELEASE, e.g. "postgres@17,postgres@15,mariadb@11.8,mysql". It checks
// syntax only; Resolve matches the choices with what is installed.
func ParseEngines(v string) (choices []Choice, all bool, err error) {
	v = strings.TrimSpace(v)
	if strings.EqualFold(v, "all") {
		return nil, true, nil
	}
	for _, item := range strings.Split(v, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		kind, rel, hasRel := strings.Cut(item, "@")
		kind = strings.ToLower(kind)
		if hasRel && isBuildDir(rel) {
			if !slices.Contains(Kinds, kind) {
				return nil, false, selectErrorf("--engines %s: a build is one of %s, e.g. postgres@/usr/local/pgsql", item, strings.Join(Kinds, ", "))
			}
			choices = append(choices, Choice{Kind: kind, Dir: rel})
			continue
		}
		if kindIndex(kind) == len(Kinds)+len(ClusterKinds) {
			return nil, false, selectErrorf("unknown engine %q in --engines: use %s, each optionally with a version (postgres@17), or all", kind, strings.Join(append(Kinds, ClusterKinds...), ", "))
		}
		if hasRel && !releaseSyntax.MatchString(rel) {
			return nil, false, selectErrorf("--engines %s: a version is a number like %s@%s", item, kind, Installable[kind][0])
		}
		choices = append(choices, Choice{Kind: kind, Release: rel})
	}
	if len(choices) == 0 {
		return nil, false, selectErrorf("--engines is empty: name at least one of %s (a version with @, e.g. postgres@17), or all", strings.Join(Kinds, ", "))
	}
	return choices, false, nil
}

// Resolve picks the installation for each choice: the newest installed release of the kind
// that matches (a release matches itself and its point versions: "11" matches 11.8, "15.18"
// matches only 15.18). With all it is the newest of every installed kind. The same installation
// chosen twice is an error, as is a choice nothing installed matches.
func Resolve(choices []Choice, all bool, installed []Installation) ([]Installation, error) {
	if all {
		for _, k := range Kinds {
			choices = append(choices, Choice{Kind: k})
		}
	}
	var out []Installation
	seen := map[string]bool{}
	for _, c := range choices {
		inst, ok := newestMatch(c, installed)
		if c.Dir != "" {
			var err error
			if inst, err = FromBuild(c.Kind, c.Dir); err != nil {
				return nil, err
			}
			ok = true
		}
		if !ok {
			if all {
				continue
			}
			return nil, notInstalled(c, installed)
		}
		if seen[inst.Name()] {
			return nil, selectErrorf("%s is chosen twice in --engines (a bare name means the newest installed release): list each engine once", inst.Name())
		}
		seen[inst.Name()] = true
		out = append(out, inst)
	}
	if len(out) == 0 {
		return nil, selectErrorf("no database engines are installed: run scripts/install-engines.sh")
	}
	return out, nil
}

func newestMatch(c Choice, installed []Installation) (Installation, bool) {
	var best Installation
	ok := false
	for _, in := range installed {
		if in.Kind != c.Kind || !releaseMatches(c.Release, in) {
			continue
		}
		if !ok || result.CompareVersions(in.Version, best.Version) > 0 {
			best, ok = in, true
		}
	}
	return best, ok
}

func releaseMatches(want string, in Installation) bool {
	if want == "" {
		return true
	}
	rel := result.Release(in.Kind, in.Version)
	return rel == want || in.Version == want || strings.HasPrefix(rel+".", want+".") || strings.HasPrefix(in.Version, want+".")
}

// notInstalled is the one-line error for a choice nothing installed matches.
func notInstalled(c Choice, installed []Installation) error {
	var names []string
	for _, in := range installed {
		names = append(names, in.Name())
	}
	have := "none"
	if len(names) > 0 {
		have = strings.Join(names, ", ")
	}
	fix := "run scripts/install-engines.sh --versions all"
	switch {
	case c.Release == "":
		fix = "run scripts/install-engines.sh"
	case slices.Contains(Installable[c.Kind], c.Release):
		fix = "run scripts/install-engines.sh --versions " + c.String()
	case c.Kind == MySQL && c.Release == "8.4":
		fix = "MySQL 8.4 is in no Debian suite (installable: " + installableList() + "); give a build instead: unpack MySQL's 8.4 tarball for Linux (generic glibc) and pass --engines mysql@/opt/mysql-8.4.x-linux-glibc2.28-x86_64"
	default:
		fix = "installable: " + installableList() + "; " + fix + "; or give a build you have: --engines " + c.Kind + "@/path/to/its/prefix"
	}
	if os.Geteuid() != 0 && IsDir(RootsDir()) {
		fix += " (the engines in " + RootsDir() + " run under chroot: run fairbench as root)"
	}
	return selectErrorf("%s is not installed (installed: %s): %s", c, have, fix)
}

func installableList() string {
	var out []string
	for _, k := range Kinds {
		for _, r := range Installable[k] {
			out = append(out, k+"@"+r)
		}
	}
	return strings.Join(out, ", ")
}

// Select parses an --engines value and resolves it against what is installed here.
func Select(v, mysqlRoot string) ([]Installation, error) {
	choices, all, err := ParseEngines(v)
	if err != nil {
		return nil, err
	}
	return Resolve(choices, all, DiscoverWithClusters(mysqlRoot))
}
