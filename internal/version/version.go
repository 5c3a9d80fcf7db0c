// Package version is fairbench's own version, recorded in every result.
package version

import "runtime/debug"

// Version is set at build time with -ldflags "-X github.com/fairbench/fairbench/internal/version.Version=..."
var Version = "0.1.0-dev"

// commit is set by `make build` with -ldflags "-X .../version.commit=..." (git rev-parse).
var commit string

// Commit is the git commit fairbench was built from: the one `make build` sets, else the one the
// Go toolchain stamps into a binary built in a checkout (12 hex digits, "-dirty" when the tree
// had changes), or "" when unknown (a test binary, a build without VCS information). A history
// of runs across fairbench's own builds needs it: Version stays the same between releases.
func Commit() string {
	if commit != "" {
		return commit
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	var rev, dirty string
	for _, s := range info.Settings {
		switch {
		case s.Key == "vcs.revision":
			rev = s.Value
		case s.Key == "vcs.modified" && s.Value == "true":
			dirty = "-dirty"
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev == "" {
		return ""
	}
	return rev + dirty
}
