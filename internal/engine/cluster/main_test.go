package cluster

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/fairbench/fairbench/internal/engine"
	"github.com/fairbench/fairbench/internal/sqldb"
)

// The reaping test's child: it starts a postgres-ha cluster, prints what it started and waits to
// be killed (reapChildCluster). Every server a test started is stopped, also when one fails.
func TestMain(m *testing.M) {
	if os.Getenv("FAIRBENCH_REAP_CHILD") != "" {
		reapChildCluster()
	}
	code := m.Run()
	_ = engine.StopAll()
	os.Exit(code)
}

func integration(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a real cluster: not in the unit layer (go test -short)")
	}
}

const mib = int64(1) << 20

// workDir is a directory for a test's servers, checked empty (everything removed) at its end.
func workDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "fairbench-clustertest-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(d, 0o755); err != nil { // the servers' users reach their run dirs through it
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if ents, _ := os.ReadDir(d); len(ents) != 0 {
			t.Errorf("work dir %s not empty after Stop: %v", d, ents)
		}
		os.RemoveAll(d)
	})
	return d
}

// skipUnlessRequired skips a test of a cluster kind that is not installed, or fails it where
// FAIRBENCH_REQUIRE_ENGINES names the kind (CI, after the install script).
func skipUnlessRequired(t *testing.T, kind, missing string) {
	t.Helper()
	if slices.Contains(strings.Split(os.Getenv("FAIRBENCH_REQUIRE_ENGINES"), ","), kind) {
		t.Fatalf("%s required but %s is missing: run scripts/install-engines.sh", kind, missing)
	}
	t.Skipf("%s: %s is missing", kind, missing)
}

// startReapChild runs this test binary as a fairbench that starts a postgres-ha cluster in dir and
// prints what it started, the line returned; the caller kills it.
func startReapChild(t *testing.T, dir string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "FAIRBENCH_REAP_CHILD=1", "FAIRBENCH_REAP_DIR="+dir)
	cmd.Stderr = os.Stderr
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child did not start its cluster: %v", err)
	}
	return cmd, line
}

// alive says whether process pid runs (a zombie, dead but not yet waited for, does not).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the command's closing parenthesis: "PID (comm) S ...".
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// nodeConn connects to one node alone, through its own DSN.
func nodeConn(ctx context.Context, t *testing.T, s *engine.Server) sqldb.Conn {
	t.Helper()
	target, err := sqldb.ParseTarget(s.DSN)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := sqldb.Open(ctx, target)
	if err != nil {
		t.Fatal(err)
	}
	return conn
}
