package sqldb_test

import (
	"context"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/fairbench/fairbench/internal/engine/discovery"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/testserver"
)

// The MySQL driver logs I/O errors to stderr ("[mysql] packets.go:58 unexpected EOF") beside the
// error it returns, a stray line a user saw. A connection its server kills leaves nothing on
// file descriptor 2 (where the driver's own logger, made at its init, writes): fairbench reports
// the returned error, once.
func TestNoDriverLinesOnStderr(t *testing.T) {
	for _, kind := range []string{discovery.MariaDB, discovery.MySQL} {
		t.Run(kind, func(t *testing.T) {
			tg := testserver.Database(t, kind)
			ctx := context.Background()
			victim, err := sqldb.Open(ctx, tg)
			if err != nil {
				t.Fatal(err)
			}
			defer victim.Close()
			admin, err := sqldb.Open(ctx, tg)
			if err != nil {
				t.Fatal(err)
			}
			defer admin.Close()
			rows, err := victim.Query(ctx, "SELECT CONNECTION_ID()")
			if err != nil {
				t.Fatal(err)
			}
			stderr := captureStderr(t)
			if err := admin.Exec(ctx, "KILL "+rows[0][0]); err != nil {
				t.Fatal(err)
			}
			_, err = victim.Query(ctx, "SELECT 1")
			out := stderr()
			if err == nil {
				t.Fatal("a statement on a killed connection succeeded")
			}
			if strings.Contains(out, "[mysql]") || strings.Contains(out, ".go:") {
				t.Errorf("the driver wrote to stderr: %q (the error returned: %v)", out, err)
			}
		})
	}
}

// captureStderr points file descriptor 2 at a pipe until the returned function is called, which
// puts it back and returns what was written.
func captureStderr(t *testing.T) func() string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved, err := syscall.Dup(2)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Dup3(int(w.Fd()), 2, 0); err != nil {
		t.Fatal(err)
	}
	return func() string {
		_ = syscall.Dup3(saved, 2, 0)
		syscall.Close(saved)
		w.Close()
		b, _ := io.ReadAll(r)
		r.Close()
		return string(b)
	}
}
