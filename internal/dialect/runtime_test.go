package dialect

import (
	"context"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/testserver"
)

// A run-time setting is set and put back exactly, as another session sees it; one that needs a
// restart is refused and left alone.
func TestApplySetting(t *testing.T) {
	testserver.Integration(t)
	ctx := context.Background()
	for _, tc := range []struct{ kind, name, value, old, restart string }{
		// Not synchronous_commit: a server fairbench starts has it on its command line (below).
		{"postgres", "wal_writer_delay", "300ms", "250ms", "shared_buffers"},
		{"mariadb", "innodb_flush_log_at_trx_commit", "1", "2", "innodb_page_size"},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			admin, other := testserver.Conn(t, tc.kind), testserver.Conn(t, tc.kind)
			d := Of(admin)
			read := func() string {
				q := "SELECT current_setting('" + tc.name + "')"
				if tc.kind != "postgres" {
					q = "SELECT @@GLOBAL." + tc.name
				}
				var rows [][]string
				for range 30 { // another session takes a reload when it next goes idle
					rows, _ = other.Query(ctx, q)
					time.Sleep(50 * time.Millisecond)
				}
				return rows[0][0]
			}
			undoOld, err := d.ApplySetting(ctx, admin, tc.name, tc.old)
			if err != nil {
				t.Fatal(err)
			}
			defer undoOld(ctx)
			undo, err := d.ApplySetting(ctx, admin, tc.name, tc.value)
			if err != nil {
				t.Fatal(err)
			}
			if got := read(); got != tc.value {
				t.Errorf("%s applied: %s, want %s", tc.name, got, tc.value)
			}
			if err := undo(ctx); err != nil {
				t.Fatal(err)
			}
			if got := read(); got != tc.old {
				t.Errorf("%s restored: %s, want %s", tc.name, got, tc.old)
			}
			if _, err := d.ApplySetting(ctx, admin, tc.restart, "1"); !IsNotAtRunTime(err) {
				t.Errorf("%s: %v, want a setting that needs a restart", tc.restart, err)
			}
			if tc.kind == "postgres" {
				if _, err := d.ApplySetting(ctx, admin, "synchronous_commit", "off"); !IsNotAtRunTime(err) {
					t.Errorf("synchronous_commit, set on the server's command line: %v, want left alone", err)
				}
			}
		})
	}
}
