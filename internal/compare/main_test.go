package compare

import (
	"testing"

	"github.com/fairbench/fairbench/internal/testserver"
)

// TestMain stops every server the tests started, and the data directory templates that the
// MySQL family's servers are copied from, which outlive a server and end with the process.
func TestMain(m *testing.M) { testserver.Main(m) }
