package engine

import "testing"

// integration skips a test that starts a real server in the unit layer (go test -short, make
// unit), as testserver.Integration does for every other package: this package's own tests
// cannot import testserver, which imports it.
func integration(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a real server: not in the unit layer (go test -short)")
	}
}

// Sizes the tests' profiles are written in.
const (
	mib = int64(1) << 20
	gib = int64(1) << 30
)
