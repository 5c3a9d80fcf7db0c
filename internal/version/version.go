// Package version is fairbench's own version, recorded in every result.
package version

// Version is set at build time with -ldflags "-X github.com/fairbench/fairbench/internal/version.Version=..."
var Version = "0.1.0-dev"
