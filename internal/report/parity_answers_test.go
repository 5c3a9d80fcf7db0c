package report

import (
	"strings"
	"testing"

	"github.com/fairbench/fairbench/internal/result"
)

// The answers table shows each read statement's answer per engine and names those that differ.
func TestAnswersAudit(t *testing.T) {
	const w = "shop.yaml"
	same := result.Answer{Transaction: "browse", Statement: 1, SQL: "SELECT ...", Rows: 10, Checksum: "aaaa"}
	pg := run("postgres", w, 8, 1000, true)
	pg.Dataset = &result.Dataset{Answers: []result.Answer{same, {Transaction: "sorted", Statement: 1, SQL: "SELECT w", Rows: 5, Checksum: "bbbb"}}}
	my := run("mysql", w, 8, 900, true)
	my.Dataset = &result.Dataset{Answers: []result.Answer{same, {Transaction: "sorted", Statement: 1, SQL: "SELECT w", Rows: 5, Checksum: "cccc"}}}
	tb := newModel(&Input{Results: []*result.Result{pg, my}}).answersAudit()
	if tb == nil || len(tb.Rows) != 2 {
		t.Fatalf("answers table %+v, want two statements", tb)
	}
	foot := strings.Join(tb.Foot, " ")
	if !strings.Contains(foot, "Answers differ: sorted #1.") || strings.Contains(foot, "browse #1") {
		t.Errorf("foot %q: want sorted #1 named as differing, browse #1 not", foot)
	}
	if tb := newModel(&Input{Results: []*result.Result{run("postgres", w, 8, 1, true)}}).answersAudit(); tb != nil {
		t.Errorf("a comparison without answers got a table: %+v", tb)
	}
}
