package sqldb

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// peer is the far end of a blocking connection: a loopback socket that answers only when told.
func peer(t *testing.T) (*blockingConn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	addr := ln.Addr().(*net.TCPAddr)
	c, err := dialBlocking(context.Background(), "127.0.0.1", addr.Port, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	far := <-accepted
	t.Cleanup(func() { c.Close(); far.Close() })
	return c.(*blockingConn), far
}

func TestBlockingConnDeadline(t *testing.T) {
	c, _ := peer(t)
	c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	start := time.Now()
	_, err := c.Read(make([]byte, 16))
	took := time.Since(start)
	var ne net.Error
	if !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("err = %v, want a net.Error timeout", err)
	}
	if took < 90*time.Millisecond || took > 3*time.Second { // a loaded machine may be slow to wake it
		t.Fatalf("read returned after %v, want about 100ms", took)
	}
	// A deadline in the past fails at once; clearing it lets reads wait again.
	c.SetDeadline(time.Unix(1, 0))
	if _, err := c.Write([]byte("x")); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("write past its deadline: %v", err)
	}
	c.SetDeadline(time.Time{})
	if _, err := c.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
}

func TestBlockingConnCloseUnblocksRead(t *testing.T) {
	c, _ := peer(t)
	done := make(chan error, 1)
	go func() {
		_, err := c.Read(make([]byte, 16))
		done <- err
	}()
	for deadline := time.Now().Add(5 * time.Second); !c.busy(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("a blocked read does not show as busy")
		}
	}
	c.Close()
	select {
	case err := <-done:
		if !errors.Is(err, net.ErrClosed) {
			t.Fatalf("read after Close: %v, want net.ErrClosed", err)
		}
	case <-time.After(time.Second):
		t.Fatal("Close did not end a blocked read")
	}
	if c.state.Load() != stateClosed|stateReleased {
		t.Fatalf("state %x: the descriptor was not released", c.state.Load())
	}
	if _, err := c.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("write after Close: %v", err)
	}
}

// TestRoundTrips: an answer counts once however many reads it takes, a request without an
// answer does not count, and requests sent together before one answer count once.
func TestRoundTrips(t *testing.T) {
	c, far := peer(t)
	exchange := func(requests []string, answer string, readSize int) {
		t.Helper()
		for _, r := range requests {
			if _, err := c.Write([]byte(r)); err != nil {
				t.Fatal(err)
			}
		}
		got := 0
		buf := make([]byte, 64)
		for _, r := range requests {
			got += len(r)
		}
		if _, err := io.ReadFull(far, buf[:got]); err != nil {
			t.Fatal(err)
		}
		if answer == "" {
			return
		}
		if _, err := far.Write([]byte(answer)); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(readerOf(c, readSize), make([]byte, len(answer))); err != nil {
			t.Fatal(err)
		}
	}
	exchange([]string{"q1"}, "answer-one", 3)
	exchange([]string{"close"}, "", 0)
	exchange([]string{"parse", "bind", "sync"}, "ok", 64)
	if got := c.wire.roundTrips.Load(); got != 2 {
		t.Fatalf("%d round trips, want 2", got)
	}
}

// readerOf reads from c at most n bytes per call, as a driver reading a header and then a body.
func readerOf(c *blockingConn, n int) io.Reader {
	return readerFunc(func(b []byte) (int, error) { return c.Read(b[:min(len(b), n)]) })
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(b []byte) (int, error) { return f(b) }
