package report

import (
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/result"
)

// targetsFixture is compare --targets over three servers their owner configured: pg15 and maria
// durable, mysql97 with innodb_flush_log_at_trx_commit=2, each in three rounds of a read-only
// and a read-write workload.
func targetsFixture(t testing.TB) *Input {
	in := &Input{Environment: &result.Environment{Command: "fairbench compare --targets pg15=…,maria=…,mysql97=…"}}
	servers := []struct{ name, kind, version string }{
		{"pg15", "postgres", "15.14"}, {"maria", "mariadb", "10.11.14-MariaDB"}, {"mysql97", "mysql", "9.7.0"},
	}
	tps := map[string]float64{"pg15": 1000, "maria": 800, "mysql97": 1200}
	seed := int64(1)
	for round := range 3 {
		for _, s := range servers {
			for _, w := range []string{"oltp_point_select", "oltp_read_write"} {
				r := makeResult(t, runSpec{kind: s.kind, version: s.version, workload: w, threads: 8, tps: tps[s.name] * (1 + 0.01*float64(round)), complete: true, seed: seed})
				seed++
				if w == "oltp_point_select" {
					r.Queries.Write, r.Queries.Read = 0, r.Queries.Total
				}
				r.Engine.Alias, r.Engine.AsConfigured, r.Profile = s.name, true, "as configured"
				r.Server.Settings = maps.Clone(defaultsSettings[s.kind])
				r.Server.Settings["max_connections"] = "151"
				r.Server.Settings["shared_buffers"] = "128MB"
				if s.kind == "mysql" {
					r.Server.Settings["innodb_flush_log_at_trx_commit"] = "2"
					r.Server.Settings["log_bin"] = "OFF"
				}
				in.Results = append(in.Results, r)
			}
		}
	}
	return in
}

// A difference in durability is named before the verdicts, with the write picks it bears on and
// not the read-only one; the columns are the servers' own names; no upgrade row joins them.
func TestTargetsDifferenceBeforeVerdict(t *testing.T) {
	md, err := Markdown(targetsFixture(t))
	if err != nil {
		t.Fatal(err)
	}
	text := string(md)
	decision := text[strings.Index(text, "## Quick decision"):]
	table := strings.Index(decision, "| Use case |")
	warn := strings.Index(decision, "⚠ Before the verdicts: durability (commit waits for the log flush):")
	if warn < 0 || warn > table {
		t.Fatalf("the durability difference is not named before the picks:\n%s", decision[:min(len(decision), 2500)])
	}
	line := decision[warn : strings.Index(decision[warn:], "\n")+warn]
	if !strings.Contains(line, "innodb_flush_log_at_trx_commit=2 on mysql97") || !strings.Contains(line, "commits that survive a crash on one and not on the other") || !strings.Contains(line, "oltp_read_write") || strings.Contains(line, "oltp_point_select") {
		t.Errorf("the difference should bear on the write pick only: %s", line)
	}
	for _, row := range strings.Split(decision[table:], "\n") {
		switch {
		case strings.Contains(row, "· oltp_point_select |") && strings.Contains(row, "durability"):
			t.Errorf("a read-only pick is cleared of a durability difference: %s", row)
		case strings.Contains(row, "· oltp_read_write |") && !strings.Contains(row, "not on equal terms: durability and WAL / redo size differ"):
			t.Errorf("the write pick does not say which difference it is not on equal terms in: %s", row)
		}
	}
	for _, want := range []string{"| pg15 |", "mysql97", "maria", "pg15 15.14 (your server, as its owner configured it)", "Profile: as configured"} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks the server name %q", want)
		}
	}
	if strings.Contains(text, "Upgrade ") {
		t.Errorf("servers named by their owner were joined by an upgrade row")
	}
}

// A round that failed (the server froze, the run marked incomplete) does not feed the pick, and
// the pick says which round of which engine was left out and why.
func TestRoundsLeftOut(t *testing.T) {
	in := &Input{Environment: &result.Environment{Command: "fairbench compare --repeat 4"}}
	seed := int64(1)
	for round := range 4 {
		for _, kind := range []string{"postgres", "mariadb"} {
			tps := map[string]float64{"postgres": 1000, "mariadb": 700}[kind] * (1 + 0.01*float64(round))
			complete := !(kind == "mariadb" && round == 1)
			r := makeResult(t, runSpec{kind: kind, workload: "oltp_read_write", threads: 8, tps: tps, complete: complete, seed: seed})
			seed++
			r.StartedAt = r.StartedAt.Add(time.Duration(round) * time.Minute)
			if !complete {
				r.Error = "the server did not answer for 12 s: froze\nsecond line"
			}
			in.Results = append(in.Results, r)
		}
	}
	md, err := Markdown(in)
	if err != nil {
		t.Fatal(err)
	}
	want := "mariadb's round 2 (incomplete: the server did not answer for 12 s: froze) left out of the pick"
	if !strings.Contains(string(md), want) {
		t.Errorf("the pick does not say which round was left out, and why; want %q in:\n%s", want, string(md)[:min(3000, len(md))])
	}
}
