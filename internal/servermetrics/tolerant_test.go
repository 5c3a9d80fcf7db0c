package servermetrics

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/sqldb/fakeconn"
)

// A server of another product of the protocol, without the view the settings come from: a
// tolerant monitor records them as not available and the run goes on; a plain one (a server
// fairbench started, where a missing view is a fault) fails; a server that does not answer fails
// either way.
func TestTolerantMonitor(t *testing.T) {
	ctx := context.Background()
	noView := errors.New(`relation "pg_settings" does not exist`)
	for _, tc := range []struct {
		name     string
		tolerant bool
		down     bool
		wantErr  bool
	}{
		{"tolerant", true, false, false},
		{"plain", false, false, true},
		{"tolerant, server down", true, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := fakeconn.New(sqldb.Postgres)
			c.Fail["pg_settings"] = noView
			if tc.down {
				c.Fail["SELECT 1"] = errors.New("connection reset by peer")
			}
			m := NewMonitor(c, nil)
			if tc.tolerant {
				m = m.Tolerant()
			}
			err := m.Start(ctx)
			if (err != nil) != tc.wantErr {
				t.Fatalf("Start: %v, want error %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			if err := m.MeasureStart(ctx); err != nil {
				t.Fatalf("MeasureStart: %v", err)
			}
			srv, err := m.Finish(ctx, 100)
			if err != nil {
				t.Fatalf("Finish: %v", err)
			}
			if len(srv.NotAvailable) == 0 || !strings.Contains(strings.Join(srv.NotAvailable, "; "), `relation "pg_settings" does not exist`) {
				t.Errorf("not available: %q", srv.NotAvailable)
			}
		})
	}
}
