package payments

import (
	"slices"
	"strings"
	"testing"

	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/sqldb/fakeconn"
	"github.com/fairbench/fairbench/internal/workload"
	"github.com/fairbench/fairbench/internal/workload/workloadtest"
)

// fakeTables answers what a worker reads before and during a transfer as prepared tables of
// accounts would: the meta rows, the largest transfer id, two users, two cards.
func fakeTables(kind sqldb.Kind, accounts string) *fakeconn.Conn {
	c := fakeconn.New(kind)
	c.Rows["SELECT name, value FROM payments_meta"] = [][]string{{"accounts", accounts}, {"banks", "5"}}
	c.Rows["SELECT COALESCE(MAX(id), 0) FROM transfers"] = [][]string{{"0"}}
	c.Rows["SELECT u.id"] = [][]string{{"1", "a", "active"}, {"2", "b", "active"}}
	c.Rows["SELECT a.id"] = [][]string{{"1"}, {"2"}}
	return c
}

func newWorker(t *testing.T, c *fakeconn.Conn, set map[string]string) workload.Worker {
	t.Helper()
	wk, err := workloadtest.Worker(t, "payments", set, c, 5)
	if err != nil {
		t.Fatal(err)
	}
	return wk
}

// A transfer: two reads outside the transaction, then debit and credit in id order (so two
// opposite transfers cannot deadlock), the transfer row with the client's id, and COMMIT; the
// amount is the same text in all three, the sender never the receiver, and each id committed
// is acknowledged once.
func TestTransferShape(t *testing.T) {
	c := fakeTables(sqldb.Postgres, "100")
	wk := newWorker(t, c, map[string]string{"accounts": "100", "banks": "5"})
	var ids []int64
	for range 200 {
		sent, q := workloadtest.Transaction(t, wk, c)
		from, to := sent[1].Args[0].(int64), sent[1].Args[1].(int64)
		debit, credit := "UPDATE accounts SET balance = balance - CAST(? AS DECIMAL(15,2)) WHERE id = ? AND balance >= CAST(? AS DECIMAL(15,2))",
			"UPDATE accounts SET balance = balance + CAST(? AS DECIMAL(15,2)) WHERE id = ?"
		first, second := debit, credit
		if from > to {
			first, second = credit, debit
		}
		want := []string{sqlAuth, sqlCards, "BEGIN", first, second, sqlTransfer, "COMMIT"}
		var texts []string
		for _, s := range sent {
			texts = append(texts, s.SQL)
		}
		if !slices.Equal(texts, want) {
			t.Fatalf("statements %q\nwant %q", texts, want)
		}
		if from == to || from < 1 || to < 1 || from > 100 || to > 100 {
			t.Errorf("transfer from %d to %d among 100 accounts", from, to)
		}
		amount := sent[5].Args[3]
		if sent[3].Args[0] != amount || sent[4].Args[0] != amount {
			t.Errorf("the debit, the credit and the record carry different amounts: %+v", sent)
		}
		ids = append(ids, sent[5].Args[0].(int64))
		if q.Reads != 2 || q.Writes != 3 || q.Other() != 2 {
			t.Errorf("counted %+v, want 2 reads, 3 writes, 2 other", q)
		}
	}
	acks := wk.(interface{ Acks() *workload.Acks }).Acks()
	if !slices.Equal(acks.Committed, ids) {
		t.Errorf("acknowledged %d ids, sent %d, or another order", len(acks.Committed), len(ids))
	}
}

// Tables prepared with other accounts than the run's are refused before the run, naming the
// option to pass.
func TestAccountsChecked(t *testing.T) {
	_, err := workloadtest.Worker(t, "payments", map[string]string{"accounts": "100"}, fakeTables(sqldb.MariaDB, "500"), 1)
	if err == nil || !strings.Contains(err.Error(), "--accounts 500") {
		t.Errorf("500 accounts run as 100: %v", err)
	}
}
