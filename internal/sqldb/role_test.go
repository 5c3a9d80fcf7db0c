package sqldb

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// A node of a host list that answers but is not what target_session_attrs asks for (a replica
// when read-write is wanted) gets a line that says so, not "does not speak PostgreSQL's
// protocol", and counts as a lost connection the runner retries on the next host.
func TestWrongRoleNode(t *testing.T) {
	for _, c := range []struct {
		attrs string
		cause error
	}{
		{"read-write", pgconn.ErrReadOnlyConnection},
		{"read-only", pgconn.ErrReadWriteConnection},
		{"standby", pgconn.ErrPrimaryConnection},
		{"primary", pgconn.ErrStandbyConnection},
	} {
		t.Run(c.attrs, func(t *testing.T) {
			tg, err := ParseTarget("postgres://u:pw@127.0.0.1:5433,127.0.0.1:5434/db?target_session_attrs=" + c.attrs)
			if err != nil {
				t.Fatal(err)
			}
			got := describeConnectError(context.Background(), tg, time.Second, fmt.Errorf("ValidateConnect failed: %w", c.cause))
			msg := got.Error()
			if !strings.Contains(msg, "target_session_attrs="+c.attrs) || !strings.Contains(msg, "127.0.0.1:5433") || strings.Contains(msg, "protocol") {
				t.Errorf("message %q: want the node and what target_session_attrs asked for", msg)
			}
			if !IsConnectionLost(got) || !errors.Is(got, c.cause) {
				t.Errorf("%v: want a lost connection wrapping %v", got, c.cause)
			}
		})
	}
}
