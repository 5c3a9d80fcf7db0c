package tpch

import (
	"context"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/testserver"
	"github.com/fairbench/fairbench/internal/workload"
)

// A query that runs for minutes: a triple cross join of the catalog's columns, the same text on
// every engine, which no planner shortcuts.
const longQuery = "SELECT count(*) FROM information_schema.columns a, information_schema.columns b, information_schema.columns c"

// Ctrl-C in the middle of a query stops it on the server, not only in fairbench: the session
// cancels it from a new connection, the query ends as interrupted within a second or two, and
// its own connection answers the next statement at once, which it could not while the server
// still ran the query. A server fairbench did not start would otherwise go on running it.
func TestInterruptCancelsTheRunningQuery(t *testing.T) {
	testserver.Integration(t)
	for _, kind := range testserver.Kinds() {
		t.Run(kind, func(t *testing.T) {
			tg := testserver.Database(t, kind)
			env := &workload.Env{Connect: func(ctx context.Context) (sqldb.Conn, error) { return sqldb.Open(ctx, tg) }}
			interrupt, ctrlC := context.WithCancel(context.Background())
			defer ctrlC()
			conn, err := env.Connect(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			s, err := newSession(interrupt, conn, env, time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			time.AfterFunc(500*time.Millisecond, ctrlC)
			began := time.Now()
			o := s.run(context.Background(), 1, []string{longQuery})
			took := time.Since(began)
			if !o.interrupted || o.status != StatusError || took > 5*time.Second {
				t.Fatalf("after Ctrl-C at 0.5 s: status %s (%s), interrupted %v, returned after %v", o.status, o.detail, o.interrupted, took)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if _, err := conn.Query(ctx, "SELECT 1"); err != nil {
				t.Fatalf("the session's connection after the cancel: %v", err)
			}
		})
	}
}
