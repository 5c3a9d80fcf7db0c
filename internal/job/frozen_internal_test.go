package job

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/testserver"
)

// freeze stops a real PostgreSQL (SIGSTOP) until the test ends.
func freeze(t *testing.T) {
	pids := testserver.Server(t, "postgres").PIDs()
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGSTOP)
	}
	t.Cleanup(func() {
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGCONT)
		}
	})
}

// A server frozen when the measured window opens: the instruments' first read gives up within
// instrumentLimit (the clients start inside the window, so it must not wait longer), sampling
// does not start, and both figures say why they are missing.
func TestInstrumentsOnAFrozenServer(t *testing.T) {
	j := &Job{Target: testserver.Database(t, "postgres"), WaitEvery: 100 * time.Millisecond}
	in := j.instrument(context.Background())
	if in == nil {
		t.Fatal("no instruments on a live server")
	}
	freeze(t)
	began := time.Now()
	in.begin()
	in.finish()
	if took := time.Since(began); took > instrumentLimit+time.Second {
		t.Errorf("the instruments took %v on a frozen server, want about %v", took, instrumentLimit)
	}
	if in.sampler != nil || in.waits == nil || !strings.Contains(in.waits.Error, "did not answer") {
		t.Errorf("sampler %v, waits %+v: want no sampling and the reason", in.sampler, in.waits)
	}
	if in.stmts == nil || in.stmts.Error == "" {
		t.Errorf("statements %+v: want the read's error", in.stmts)
	}
	go in.conn.Close()
}

// A server that accepts the connection and then stops answering: the first question ends
// within connect_timeout with a line saying so, as a connect would.
func TestFirstAnswerFromAFrozenServer(t *testing.T) {
	tg := testserver.Database(t, "postgres")
	tg.ConnectTimeout = time.Second
	j := &Job{Target: tg}
	began := time.Now()
	err := j.firstAnswer(context.Background(), func(ctx context.Context, c sqldb.Conn) error {
		freeze(t)
		_, err := sqldb.ServerVersion(ctx, c)
		return err
	})
	if took := time.Since(began); took > 3*time.Second {
		t.Errorf("took %v, want about connect_timeout (1s)", took)
	}
	if err == nil || !strings.Contains(err.Error(), "did not answer within 1s (connect_timeout)") {
		t.Errorf("error %v: want the silence named with connect_timeout", err)
	}
}
