package reproduce

import (
	"fmt"

	"github.com/fairbench/fairbench/internal/result"
)

// The payments study ("Reserva", Nov 2025): one transfer is 4 round trips over 6 tables, the
// last one a server-side routine; every 20th operation deletes a recorded transfer; 64 clients,
// closed loop. Its PostgreSQL had a third of the InnoDB engines' memory (16 GB against 48 GB).
func init() {
	register(&Study{
		Name: "payments",
		// Its published ratios moved 2x between two runs three minutes apart here: rounds first.
		Repeat:  3,
		Title:   `payments benchmark "Reserva" (Nov 2025): transfers through a server-side routine`,
		Key:     "payments_reserva",
		Engines: []string{"postgres", "mariadb", "mysql"},
		ScaleRule: "small keeps the 64 clients, 50 banks, the routine transfer and a delete every 20th operation, and " +
			"shrinks 1,000,000 accounts to 100,000 and 2 hours to 30 s after a 10 s warm-up; full is 1,000,000 accounts for 2 hours",
		Runs:   paymentsRuns,
		Judge:  judgePayments,
		Charts: paymentsCharts,
	})
}

func paymentsSuite(sc Scale) string {
	accounts, time, warmup, threads := "100000", "30s", "10s", 64
	switch sc {
	case Full:
		accounts, time, warmup = "1000000", "120m", "60s"
	case tiny:
		accounts, time, warmup, threads = "2000", "2s", "1s", 8
	}
	return fmt.Sprintf(`name: payments-%s
description: The payments study as published - 64 clients, transfers through a server-side routine, a delete every 20th operation.
threads: %d
time: %s
warmup: %s
options:
  accounts: "%s"
  banks: "50"
  transfer: routine
  delete-every: "20"
steps:
  - workload: payments
`, sc, threads, time, warmup, accounts)
}

// paymentsFairPool is the buffer pool of the fair run (a whole GiB: InnoDB sizes its pool in
// whole chunks); the as-published run gives PostgreSQL a third of it, the study's 16 GB against 48 GB.
const paymentsFairPool = 1 << 30

func paymentsRuns(sc Scale) []Run {
	s := paymentsSuite(sc)
	return []Run{
		{Name: "fair", Suite: s, BufferPoolBytes: paymentsFairPool, MaxConnections: 200},
		{Name: "as-published", Engines: []string{"postgres"}, Suite: s, BufferPoolBytes: paymentsFairPool / 3 &^ (1<<20 - 1), MaxConnections: 200,
			AsPublished: "PostgreSQL with a third of the InnoDB engines' buffer pool (the study's 16 GB against 48 GB); MariaDB and MySQL as in the fair run"},
	}
}

func judgePayments(pub Published, got Measured) []Row {
	pairs := []struct{ key, a, b string }{
		{"postgres_over_mariadb", "postgres", "mariadb"},
		{"postgres_over_mysql", "postgres", "mysql"},
		{"mariadb_over_mysql", "mariadb", "mysql"},
	}
	var rows []Row
	for _, p := range pairs {
		want, _ := pub.Float("results.ratio." + p.key)
		rows = append(rows, tpsRatioRow(pub, got, "fair", "fair", p.a, p.b, want))
	}
	for _, p := range pairs[:2] {
		want, _ := pub.Float("results.ratio." + p.key)
		rows = append(rows, tpsRatioRow(pub, got, "as-published", "fair", p.a, p.b, want))
	}
	return rows
}

// tpsRatioRow compares engine a's transfers per second in run runA with engine b's in runB.
func tpsRatioRow(pub Published, got Measured, runA, runB, a, b string, want float64) Row {
	ra, rb := got.All(runA, a, "payments"), got.All(runB, b, "payments")
	// Rounds pair only within one comparison.
	g := ratioOf(got.Rule(runA, runB), ra, rb, func(r *result.Result) float64 { return r.TPS }, runA == runB)
	why := fmt.Sprintf("needs complete payments results of %s (%s run) and %s (%s run)", a, runA, b, runB)
	if g.OK {
		why = evidence(pub, got.Cores, first(ra), first(rb))
	}
	figure := fmt.Sprintf("transfers/s, %s / %s", a, b)
	if runA != runB {
		figure = fmt.Sprintf("transfers/s, %s (%s) / %s", a, runA, b)
	}
	return judgeGot(figure, runA, want, g, why)
}
