package fakeconn

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/fairbench/fairbench/internal/sqldb"
)

func TestRecordsAndAnswers(t *testing.T) {
	ctx := context.Background()
	c := New(sqldb.MariaDB)
	c.Rows["SELECT name"] = [][]string{{"a"}, {"b"}}
	c.Fail["DELETE"] = errors.New("refused")
	st, err := c.Prepare(ctx, "SELECT name FROM t WHERE id = ?")
	if err != nil {
		t.Fatal(err)
	}
	buf := []byte("x")
	if n, err := st.Query(ctx, 7, buf); n != 2 || err != nil {
		t.Errorf("Query: %d rows, %v; want the 2 given", n, err)
	}
	buf[0] = 'y' // the caller reuses its buffer: the record keeps what was sent
	if err := c.Exec(ctx, "DELETE FROM t"); err == nil || err.Error() != "refused" {
		t.Errorf("Exec: %v, want the given error", err)
	}
	if err := c.Exec(ctx, "DELETE FROM t"); err != nil {
		t.Errorf("a failure is given once: %v", err)
	}
	if rows, _ := c.Query(ctx, "SELECT 1"); rows != nil {
		t.Errorf("an unanswered Query has rows: %v", rows)
	}
	sent := c.Sent()
	if len(sent) != 4 || sent[3].Op != "query" || sent[0].Op != "stmt.query" || !slices.Equal(sent[0].Args, []any{7, "x"}) {
		t.Errorf("sent %+v", sent)
	}
	if got := c.Shapes(2); !slices.Equal(got, []string{"SELECT name", "DELETE FROM", "DELETE FROM", "SELECT 1"}) {
		t.Errorf("shapes %q", got)
	}
	closed := 0
	c.OnClose = func() { closed++ }
	c.Close()
	c.Close()
	if _, err := st.Exec(ctx); !errors.Is(err, ErrClosed) || closed != 1 || !c.Closed() {
		t.Errorf("after Close: %v, OnClose called %d times", err, closed)
	}
	select {
	case <-c.Done():
	default:
		t.Error("Done is open after Close")
	}
}
