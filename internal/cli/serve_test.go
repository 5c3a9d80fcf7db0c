package cli

import (
	"bufio"
	"fmt"
	"io"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/engine"
	"github.com/fairbench/fairbench/internal/engine/discovery"
)

// serve must not keep saying "running" after its server died: it watches the server and ends
// with exit status 1, saying so.
func TestServeNoticesDeadServer(t *testing.T) {
	if _, err := discovery.Find(discovery.Postgres, ""); err != nil {
		t.Skip("PostgreSQL is not installed")
	}
	pr, pw := io.Pipe()
	var stderr strings.Builder
	done := make(chan int, 1)
	go func() {
		done <- Main([]string{"serve", "--engine", "postgres"}, pw, &stderr)
		pw.Close()
	}()
	dsn, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("serve printed no DSN: %v; stderr %s", err, stderr.String())
	}
	go io.Copy(io.Discard, pr)
	var srv *engine.Server
	for _, s := range engine.Running() {
		if strings.Contains(dsn, fmt.Sprintf("@127.0.0.1:%d/", s.Port)) {
			srv = s
		}
	}
	if srv == nil {
		t.Fatalf("serve's server %s is not among the running ones", dsn)
	}
	u, _ := url.Parse(srv.DSN)
	if pw, _ := u.User.Password(); pw == "" || strings.Contains(dsn, pw) || !strings.Contains(dsn, "password_file=") {
		t.Errorf("serve printed %s: want the password left out and password_file= given instead", dsn)
	}
	pids := srv.PIDs()
	if err := syscall.Kill(pids[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-done:
		last := strings.TrimSpace(stderr.String())
		last = last[strings.LastIndex(last, "\n")+1:]
		if code != 1 || !strings.Contains(last, "no longer running") {
			t.Errorf("serve after its server was killed: exit %d, last line %q; want 1 and 'no longer running'", code, last)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("serve kept running after its server died")
	}
}
