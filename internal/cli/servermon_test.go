package cli

import (
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/engine/discovery"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/testserver"
)

const nodeExporterBin = "/usr/bin/prometheus-node-exporter"

// startNodeExporter runs Debian's node_exporter on a loopback port for the test.
func startNodeExporter(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(nodeExporterBin); err != nil {
		if strings.Contains(os.Getenv("FAIRBENCH_REQUIRE_ENGINES"), "postgres") {
			t.Fatalf("%s missing: run scripts/install-engines.sh", nodeExporterBin)
		}
		t.Skip("prometheus-node-exporter is not installed")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cmd := exec.Command(nodeExporterBin, "--web.listen-address="+addr, "--collector.disable-defaults",
		"--collector.cpu", "--collector.meminfo", "--collector.diskstats")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	url := "http://" + addr + "/metrics"
	for deadline := time.Now().Add(10 * time.Second); ; {
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			return url
		}
		if time.Now().After(deadline) {
			t.Fatalf("node_exporter did not answer on %s", addr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func readResult(t *testing.T, path string) *result.Result {
	t.Helper()
	r, err := result.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// run --target DSN reads the engine's counters as compare does, takes host figures from the
// server's cgroup when the DSN is a throwaway server fairbench runs on this machine, from
// node_exporter when given one, and otherwise marks them not measured.
func TestRunByDSNServerFigures(t *testing.T) {
	tg := testserver.Database(t, "postgres")
	dsn := withPassword(tg, tg.Password)
	if code, _, stderr := run("prepare", "--target", dsn, "--workload", "oltp_read_write", "--tables", "1", "--table-size", "1000"); code != 0 {
		t.Fatalf("prepare: %s", stderr)
	}
	url := startNodeExporter(t)
	dir := t.TempDir()
	args := []string{"run", "--target", dsn, "--workload", "oltp_read_write", "--tables", "1", "--table-size", "1000", "--threads", "2", "--time", "2s"}

	out := filepath.Join(dir, "node.json")
	if code, _, stderr := run(append(args, "--node-exporter", url, "--out", out)...); code != 0 {
		t.Fatalf("run --node-exporter: exit %d: %s", code, stderr)
	}
	r := readResult(t, out)
	if r.Server == nil || r.Server.Counters["wal_bytes"] <= 0 || r.Server.PerTxn["wal_bytes"] <= 0 {
		t.Fatalf("no engine counters in a run by DSN: %+v", r.Server)
	}
	s := r.Server
	if !strings.HasPrefix(s.CPUSource, "node_exporter "+url) || s.CPUPct <= 0 || s.MemLoadMB <= 0 || s.DiskDevice == "" {
		t.Errorf("host figures from node_exporter missing: %+v", s)
	}
	if len(r.Intervals) == 0 || r.Intervals[0].ServerMemMB <= 0 {
		t.Errorf("intervals lack node_exporter's figures: %+v", r.Intervals)
	}

	// The same server is a throwaway one this test process runs: its cgroup is found by port.
	out = filepath.Join(dir, "local.json")
	if code, _, stderr := run(append(args, "--out", out)...); code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	s = readResult(t, out).Server
	if os.Geteuid() == 0 && (!strings.HasPrefix(s.CPUSource, "cgroup v") || !strings.HasPrefix(s.MemorySource, "cgroup v") || s.MemLoadMB <= 0) {
		t.Errorf("a local throwaway server's run by DSN did not use its cgroup: %+v", s)
	}

	code, _, stderr := run(append(args, "--node-exporter", "http://127.0.0.1:1/metrics")...)
	if code != 2 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, "node_exporter") {
		t.Errorf("unreachable node_exporter: exit %d, stderr %q; want one line and exit 2", code, stderr)
	}
	if code, _, stderr := run("cleanup", "--target", dsn, "--workload", "oltp_read_write", "--tables", "1"); code != 0 {
		t.Errorf("cleanup: %s", stderr)
	}
}

// run --target of a throwaway server whose data directory is on a loop device fairbench made for
// it: the disk figures are the device's, the cgroup's beside them, and the summary says so.
func TestRunByDSNOwnDevice(t *testing.T) {
	srv, dev := testserver.OnDevice(t, discovery.MariaDB)
	common := []string{"--target", srv.DSN, "--workload", "oltp_insert", "--tables", "1", "--table-size", "1000"}
	if code, _, stderr := run(append([]string{"prepare"}, common...)...); code != 0 {
		t.Fatalf("prepare: %s", stderr)
	}
	out := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := run(append([]string{"run"}, append(common, "--threads", "2", "--time", "2s", "--out", out)...)...)
	if code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	s := readResult(t, out).Server
	name := strings.TrimPrefix(dev.Path, "/dev/")
	if !strings.HasPrefix(s.DiskSource, "block device "+name+", this server's alone") || s.DiskWriteBytes <= 0 {
		t.Errorf("disk figures not from %s: %+v", name, s)
	}
	if s.DiskCgroup == nil || !strings.HasPrefix(s.DiskCgroup.Source, "cgroup v") || s.DiskCgroup.WriteBytes > s.DiskWriteBytes {
		t.Errorf("the cgroup's figures beside the device's: %+v", s.DiskCgroup)
	}
	if !strings.Contains(stdout, "disk source:") || !strings.Contains(stdout, "block device "+name) {
		t.Errorf("run's summary does not name the device as the disk source:\n%s", stdout)
	}
}
