package waits

import (
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/dialect"
	"github.com/fairbench/fairbench/internal/result"
)

func TestDescribeStall(t *testing.T) {
	se := func(cat, ev string, n int) []dialect.Session {
		out := make([]dialect.Session, n)
		for i := range out {
			out[i] = dialect.Session{ID: int64(i), Category: cat, Event: ev}
		}
		return out
	}
	join := func(parts ...[]dialect.Session) []dialect.Session {
		var out []dialect.Session
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	every := 100 * time.Millisecond
	for _, tc := range []struct {
		name     string
		sessions []dialect.Session
		age      time.Duration
		want     string
	}{
		{"stopped answering", se(result.WaitOnCPU, "active", 2), 2500 * time.Millisecond,
			"the server last answered the wait sampler 2.5 s before: it stopped answering"},
		{"working on the statements", join(se(result.WaitDataRead, "IO:DataFileRead", 9), se(result.WaitOnCPU, "active (no wait event)", 3), se(result.WaitClient, "idle", 4)),
			80 * time.Millisecond,
			"the server's view of the clients' sessions 0.1 s before: in a statement: 3 cpu (active (no wait event)), 9 data_read (IO:DataFileRead); 4 idle"},
		{"the commonest event of a category named", join(se(result.WaitLatch, "LWLock:BufferMapping", 1), se(result.WaitLatch, "Lock:relation", 2)),
			50 * time.Millisecond,
			"the server's view of the clients' sessions 0.1 s before: in a statement: 3 latch (Lock:relation); 0 idle"},
		{"all idle: the clients, not the server", se(result.WaitClient, "Sleep", 12), 100 * time.Millisecond,
			"the server's view of the clients' sessions 0.1 s before: none in a statement; 12 idle"},
	} {
		if got := describeStall(tc.sessions, tc.age, every); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}
