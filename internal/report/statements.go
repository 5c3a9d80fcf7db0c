package report

import (
	"fmt"
	"strings"

	"github.com/fairbench/fairbench/internal/document"
	"github.com/fairbench/fairbench/internal/result"
)

// statementsShown is how many statements per engine and workload the report lists.
const statementsShown = 3

// pooledStatements adds up runs' statement accounts (a step's rounds) by text, most server time first, with
// the server's statement time, the clients' time (threads × seconds) and the engine's own active
// time (-1 where a run has none) over the runs that have accounts.
func pooledStatements(runs []*result.Result) (all []result.StatementAccount, totalMS, clientMS, activeMS float64) {
	byText := map[string]*result.StatementAccount{}
	for _, r := range runs {
		st := r.Statements
		if st == nil || st.Error != "" {
			continue
		}
		totalMS += st.TotalMS
		clientMS += float64(r.Threads) * r.DurationS * 1000
		if us, ok := activeUS(r); ok && activeMS >= 0 {
			activeMS += float64(us) / 1000
		} else {
			activeMS = -1
		}
		for _, a := range st.Top {
			p := byText[a.Text]
			if p == nil {
				p = &result.StatementAccount{Text: a.Text}
				byText[a.Text] = p
			}
			p.Calls += a.Calls
			p.Rows += a.Rows
			p.TotalMS += a.TotalMS
		}
	}
	for _, p := range byText {
		p.MeanMS = p.TotalMS / float64(p.Calls)
		all = append(all, *p)
	}
	result.SortStatements(all)
	return all, totalMS, clientMS, activeMS
}

func activeUS(r *result.Result) (int64, bool) {
	if r.Server == nil {
		return 0, false
	}
	us, ok := r.Server.Counters[result.CounterActiveUS]
	return us, ok
}

// statementsSection is "Statements on the server": per workload and engine, the statements that
// took the most server time, and how much of the clients' time the server spent executing
// statements beside the share the wait sampling found busy (not idle, not sending).
func (m *model) statementsSection() *document.Section {
	t := &document.Table{Header: []string{"Workload", "Engine", "statement (as the engine normalizes it)", "calls", "mean ms", "share of server time"},
		Numeric: []bool{false, false, false, true, true, true}}
	check := &document.Table{Header: []string{"Workload", "Engine", "statements' server time, % of the clients' time",
		"engine's active time, % of the clients' time", "sessions busy in the wait sampling, %"},
		Numeric: []bool{false, false, true, true, true}}
	for _, b := range m.instrumentBlocks() {
		for i, runs := range b.runs {
			all, totalMS, clientMS, activeMS := pooledStatements(runs)
			if len(all) == 0 || totalMS <= 0 {
				continue
			}
			w, name := b.label, b.names[i]
			for _, a := range all[:min(statementsShown, len(all))] {
				t.Rows = append(t.Rows, document.Row(w, name, shorten(a.Text, 90), fmt.Sprint(a.Calls),
					document.Fixed(a.MeanMS, 3), document.Fixed(100*a.TotalMS/totalMS, 0)+"%"))
			}
			busy := "—"
			if pw := result.PoolWaits(runs); pw != nil {
				busy = document.Fixed(100*(1-pw.Share(result.WaitClient)-pw.Share(result.WaitNetwork)), 0) + "%"
			}
			active := "—"
			if activeMS >= 0 {
				active = document.Fixed(100*activeMS/clientMS, 0) + "%"
			}
			check.Rows = append(check.Rows, document.Row(w, name, document.Fixed(100*totalMS/clientMS, 0)+"%", active, busy))
		}
	}
	if len(t.Rows) == 0 {
		return nil
	}
	paras := []string{statementsIntro}
	if note := lateAccounts(m.instrumentBlocks()); note != "" {
		paras = append(paras, note)
	}
	return &document.Section{ID: "statements", Heading: "Statements on the server", Paras: paras, Tables: []*document.Table{t, check}}
}

// lateShare is the part of a window the accounts' first read may take before the report says so.
const lateShare = 0.05

// lateAccounts names the run whose accounts' first read came back latest after its window
// opened, when that was over lateShare of the window: its accounts miss the transactions the
// clients ended meanwhile, so its calls and server time fall short of the window's.
func lateAccounts(blocks []instrumentBlock) string {
	worst, name, label := 0.0, "", ""
	for _, b := range blocks {
		for i, runs := range b.runs {
			for _, r := range runs {
				if st := r.Statements; st != nil && st.Error == "" && r.DurationS > 0 && st.LateMS/(1000*r.DurationS) > worst {
					worst, name, label = st.LateMS/(1000*r.DurationS), b.names[i], b.label
				}
			}
		}
	}
	if worst <= lateShare {
		return ""
	}
	return fmt.Sprintf("On %s (%s) the accounts' first read was answered %s%% of a window after it opened, the machine busy: "+
		"that run's accounts miss the statements of that part of the window.", name, label, document.Fixed(100*worst, 0))
}

const statementsIntro = "The server's own account of each statement over the measured window (pg_stat_statements; the performance " +
	"schema's statement digests), the difference between the window's start and end, the headline step's rounds added up. " +
	"The second table sets the server's statement time, as a share of the clients' time (threads × seconds), beside the " +
	"engine's own time in running statements for the database's sessions (PostgreSQL's pg_stat_database.active_time; " +
	"MySQL and MariaDB keep none apart from the same timers) and the share of session samples that were busy on the " +
	"server: three ways of measuring the same thing, which come close where they measure the same span. They do not on PostgreSQL for writes: pg_stat_statements times the executor, not the " +
	"commit that follows an autocommit statement (its WAL flush, which the sampling counts as log_flush), while MySQL's and " +
	"MariaDB's statement timers include the commit. The rest of the clients' time is the round trip and the client's own work."

// shorten keeps a statement to n characters on one line.
func shorten(s string, n int) string {
	s = strings.Join(strings.Fields(strings.ReplaceAll(s, "`", "")), " ") // MySQL's digests quote every name
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
