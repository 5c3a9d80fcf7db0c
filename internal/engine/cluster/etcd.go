package cluster

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/fairbench/fairbench/internal/engine"
	"github.com/fairbench/fairbench/internal/engine/discovery"
)

// etcdProc is a one-member etcd on two loopback ports, a throwaway like the servers: its data
// directory lies in a run dir of its own under the work dir (removed by stop), and an owner
// record lets a later fairbench reap it if this one is killed outright.
type etcdProc struct {
	runDir       string
	client, peer int
	cmd          *exec.Cmd
	done         chan struct{}
	record       string

	stopOnce sync.Once
	stopErr  error
}

// auxiliaries are the etcds running, which engine.StopAll stops after the servers: a Patroni
// node shutting down still talks to its etcd.
var auxiliaries = struct {
	sync.Mutex
	procs map[*etcdProc]struct{}
}{procs: map[*etcdProc]struct{}{}}

func init() { engine.AfterServers(stopAuxiliaries) }

// Addr is the client address Patroni talks to.
func (e *etcdProc) Addr() string { return "127.0.0.1:" + strconv.Itoa(e.client) }

// startEtcd starts etcd and waits until it answers /health. On failure nothing is left.
func startEtcd(ctx context.Context, workDir string) (_ *etcdProc, err error) {
	e := &etcdProc{}
	auxiliaries.Lock()
	auxiliaries.procs[e] = struct{}{}
	auxiliaries.Unlock()
	defer func() {
		if err != nil {
			_ = e.stop()
			err = fmt.Errorf("start etcd: %w", err)
		}
	}()
	if !discovery.IsExecutable(discovery.EtcdBinary) {
		return nil, fmt.Errorf("%s is missing: run scripts/install-engines.sh (it installs etcd-server)", discovery.EtcdBinary)
	}
	base, err := filepath.Abs(orTemp(workDir))
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(base, 0o755); err != nil {
		return nil, err
	}
	if e.runDir, err = os.MkdirTemp(base, "fairbench-etcd-"); err != nil {
		return nil, err
	}
	for _, p := range []*int{&e.client, &e.peer} {
		if *p, err = engine.ReservePort(); err != nil {
			return nil, err
		}
	}
	if err := e.launch(); err != nil {
		return nil, err
	}
	return e, e.waitHealthy(ctx)
}

func orTemp(dir string) string {
	if dir == "" {
		return os.TempDir()
	}
	return dir
}

// launch starts etcd in its own process group, logging to etcd.log in its run dir.
func (e *etcdProc) launch() error {
	peerURL := "http://127.0.0.1:" + strconv.Itoa(e.peer)
	clientURL := "http://" + e.Addr()
	e.cmd = exec.Command(discovery.EtcdBinary,
		"--name=fairbench", "--data-dir="+filepath.Join(e.runDir, "data"),
		"--listen-client-urls="+clientURL, "--advertise-client-urls="+clientURL,
		"--listen-peer-urls="+peerURL, "--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=fairbench="+peerURL, "--initial-cluster-state=new",
		// A token of its own, so it can never join another fairbench's etcd.
		"--initial-cluster-token="+filepath.Base(e.runDir))
	e.cmd.Env = discovery.ChildEnv()
	e.cmd.Dir = e.runDir
	e.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	log, err := os.Create(filepath.Join(e.runDir, "etcd.log"))
	if err != nil {
		return err
	}
	defer log.Close()
	e.cmd.Stdout, e.cmd.Stderr = log, log
	if err := e.cmd.Start(); err != nil {
		return err
	}
	e.done = make(chan struct{})
	go func() { _ = e.cmd.Wait(); close(e.done) }()
	// Named for the reaper, as a server is, so that a later fairbench ends it if this one is
	// killed outright.
	e.record, err = engine.RecordHelper("etcd", e.cmd.Process.Pid, e.client, e.runDir)
	return err
}

func (e *etcdProc) waitHealthy(ctx context.Context) error {
	deadline := time.Now().Add(engine.ReadyTimeout)
	client := &http.Client{Timeout: 2 * time.Second}
	for {
		resp, err := client.Get("http://" + e.Addr() + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("/health: %s", resp.Status)
		}
		select {
		case <-e.done:
			return fmt.Errorf("etcd exited during start-up; log:\n%s", engine.TailFile(filepath.Join(e.runDir, "etcd.log"), 20))
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("etcd not healthy within %s: %v", engine.ReadyTimeout, err)
		}
	}
}

// stop ends etcd (SIGTERM, SIGKILL after StopTimeout) and removes its run dir and record. Idempotent.
func (e *etcdProc) stop() error {
	e.stopOnce.Do(func() {
		var errs []error
		if e.cmd != nil && e.cmd.Process != nil {
			_ = syscall.Kill(-e.cmd.Process.Pid, syscall.SIGTERM)
			select {
			case <-e.done:
			case <-time.After(engine.StopTimeout):
				_ = syscall.Kill(-e.cmd.Process.Pid, syscall.SIGKILL)
				<-e.done
				errs = append(errs, fmt.Errorf("etcd did not stop within %s; killed it", engine.StopTimeout))
			}
		}
		if e.runDir != "" {
			if err := os.RemoveAll(e.runDir); err != nil {
				errs = append(errs, err)
			}
		}
		if e.record != "" {
			if err := os.Remove(e.record); err != nil && !os.IsNotExist(err) {
				errs = append(errs, err)
			}
		}
		for _, p := range []int{e.client, e.peer} {
			if p != 0 {
				engine.ReleasePort(p)
			}
		}
		auxiliaries.Lock()
		delete(auxiliaries.procs, e)
		auxiliaries.Unlock()
		e.stopErr = errors.Join(errs...)
	})
	return e.stopErr
}

// stopAuxiliaries stops every etcd still running; engine.StopAll calls it once the servers are
// down.
func stopAuxiliaries() error {
	auxiliaries.Lock()
	list := make([]*etcdProc, 0, len(auxiliaries.procs))
	for e := range auxiliaries.procs {
		list = append(list, e)
	}
	auxiliaries.Unlock()
	var errs []error
	for _, e := range list {
		errs = append(errs, e.stop())
	}
	return errors.Join(errs...)
}
