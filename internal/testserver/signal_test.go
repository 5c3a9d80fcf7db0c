package testserver

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

func TestMain(m *testing.M) { Main(m) }

// childEnv makes the test binary, run again by TestInterruptStopsServers, the interrupted one;
// its value is the file the child writes its server's data directory into.
const childEnv = "FAIRBENCH_TESTSERVER_CHILD"

// The child: starts the shared PostgreSQL, says where its data is, and waits to be interrupted.
func TestChildHoldsAServer(t *testing.T) {
	report := os.Getenv(childEnv)
	if report == "" {
		t.Skip("run by TestInterruptStopsServers")
	}
	srv := Server(t, "postgres")
	// Whole or not at all: the parent polls for it.
	if err := os.WriteFile(report+".part", []byte(srv.DataDir), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(report+".part", report); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Minute)
}

// Ctrl-C on a test binary stops the servers it started and removes their data, as the end of
// the binary does: nothing is left for the next start's reaper.
func TestInterruptStopsServers(t *testing.T) {
	if os.Getenv(childEnv) != "" {
		t.Skip("the child")
	}
	if _, err := find("postgres"); err != nil {
		t.Skip("no PostgreSQL here")
	}
	report := filepath.Join(t.TempDir(), "datadir")
	cmd := exec.Command(os.Args[0], "-test.run=^TestChildHoldsAServer$")
	cmd.Env = append(os.Environ(), childEnv+"="+report)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var dir string
	for deadline := time.Now().Add(2 * time.Minute); dir == "" && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		b, _ := os.ReadFile(report)
		dir = string(b)
	}
	if dir == "" {
		t.Fatal("the child started no server within 2 minutes")
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("the interrupted child did not exit")
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s is still there after the interrupt (%v)", dir, err)
	}
}
