package result

import (
	"regexp"
	"strconv"
	"strings"
)

var releaseRE = regexp.MustCompile(`\d+(?:\.\d+)+`)

// Release is the part of a server version that names a release users choose between: the major
// version for PostgreSQL 10 and later ("17" from "17.6"), major.minor for the MySQL family and
// older PostgreSQL ("10.11" from "10.11.19-MariaDB-0+deb12u1", "9.7" from "9.7.4"). version may be
// a binary's --version or what SELECT version() answers. "" when no version number is found.
func Release(kind, version string) string {
	if i := strings.Index(version, "PostgreSQL"); i >= 0 {
		version = version[i:]
	}
	v := releaseRE.FindString(version)
	if v == "" {
		return ""
	}
	parts := strings.Split(v, ".")
	// postgres-ha runs PostgreSQL and names its release the same way.
	if (kind == "postgres" || kind == "postgres-ha") && len(parts[0]) >= 2 {
		return parts[0]
	}
	return parts[0] + "." + parts[1]
}

// EngineName names an engine and its release the way --engines takes it: "postgres@17",
// "mariadb@11.8". Without a version number it is the kind alone.
func EngineName(kind, version string) string {
	if r := Release(kind, version); r != "" {
		return kind + "@" + r
	}
	return kind
}

// Name is what reports call the engine: the user's name for a server or build of theirs, else
// its EngineName.
func (e Engine) Name() string {
	if e.Alias != "" {
		return e.Alias
	}
	return EngineName(e.Kind, e.Version)
}

// Translation records how one fairness setting reached a server version that renamed, dropped or
// changed it: Setting is the profile's name, As what the version was given instead, Why the reason.
type Translation struct {
	Setting string `json:"setting"`
	As      string `json:"as"`
	Why     string `json:"why"`
}

// VersionNumber is the whole version number in a server's version text: "15.18" of
// "PostgreSQL 15.18 (Debian 15.18-1.pgdg120+1) on x86_64...", "10.11.19" of
// "10.11.19-MariaDB-0+deb12u1", "17beta1" of a pre-release. The text itself when it holds none.
func VersionNumber(version string) string {
	if i := strings.Index(version, "PostgreSQL"); i >= 0 {
		version = version[i:]
	}
	if v := releaseRE.FindString(version); v != "" {
		return v
	}
	// Pre-releases have no dot: "PostgreSQL 17beta1 on x86_64".
	if v := preReleaseRE.FindString(version); v != "" {
		return v
	}
	return strings.TrimSpace(version)
}

var preReleaseRE = regexp.MustCompile(`\b\d+(?:alpha|beta|rc|devel)\d*`)

// CompareVersions orders dotted version numbers numerically ("10.11" > "10.9"); a part that is
// not a number counts as 0.
func CompareVersions(a, b string) int {
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
