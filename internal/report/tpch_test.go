package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/fairbench/fairbench/internal/document"
	"github.com/fairbench/fairbench/internal/result"
)

// tpchRun is a minimal TPC-H result: a power test of the given seconds per query (Q1 first),
// or a throughput test when qph > 0.
func tpchRun(kind string, seconds []float64, failed map[int]string, qph float64) *result.Result {
	tp := &result.TPCH{Mode: "power", ScaleFactor: 1, AnswersChecked: "cross-engine"}
	if qph > 0 {
		tp.Mode, tp.Streams, tp.QueriesPerHour = "throughput", 2, qph
	}
	for i, s := range seconds {
		q := result.TPCHQuery{Query: i + 1, Seconds: s, Status: "ok"}
		if st, bad := failed[i+1]; bad {
			q.Seconds, q.Status = 0, st
		}
		tp.Queries = append(tp.Queries, q)
	}
	return &result.Result{Complete: true, Engine: result.Engine{Kind: kind}, Workload: result.Workload{Name: "tpch"}, Threads: 1, TPCH: tp}
}

func TestTPCHReport(t *testing.T) {
	fixtureRuns := func() []*result.Result {
		var out []*result.Result
		for i, s := range fixtureTPCH() {
			s.seed = int64(200 + i)
			out = append(out, makeTPCHResult(s))
		}
		return out
	}
	tests := []struct {
		name     string
		results  func() []*result.Result
		want     []string // in the TPC-H section of report.md
		notWant  []string // anywhere in report.md
		useCase  string
		pick     string
		winner   string
		whyParts []string
	}{
		{
			name:    "fixture: the fastest geometric mean has a wrong answer and a timeout",
			results: fixtureRuns,
			want: []string{
				"| Query | postgres | mysql | mariadb |",
				"| Q1 | 4.21 s (1.4×) | 8.00 s (2.7×) | **2.95 s (1.0×)** |",
				"| Q9 | **2.48 s (1.0×)** | 2.98 s (1.2×) | ✗ wrong answer |",
				"| Q18 | **3.85 s (1.0×)** | 10.0 s (2.6×) | ✗ timeout |",
				"| geometric mean | **0.830 s (1.0×)** | 1.28 s (1.5×) | 0.576 s (20 of 22 queries, not ranked) |",
				"| correct answers | 22/22 | 22/22 | 20/22 |",
				"| load time | 122 s | 112 s | 118 s |",
				"| answers checked | official SF1 answers | official SF1 answers | official SF1 answers |",
				"| scale factor | 1 | 1 | 1 |",
				"mariadb, Q9: wrong answer: row 3 differs",
			},
			notWant:  []string{"## Results", "## Scalability", "TPS vs", "✗ wrong answer (", "0 s (1.0×) | ✗"},
			useCase:  "Analytics (TPC-H SF 1)",
			pick:     "unconfirmed: postgres leads",
			whyParts: []string{"geomean 0.830 s vs 1.28 s (mysql)", "fastest on 8 of 22 queries", "not picked: mariadb (1 wrong answer, 1 timeout)"},
		},
		{
			name: "a single wrong answer keeps the fastest engine from being picked",
			results: func() []*result.Result {
				return []*result.Result{
					tpchRun("postgres", []float64{2, 4, 1}, nil, 0),
					tpchRun("mysql", []float64{1, 2, 0.5}, map[int]string{2: "wrong"}, 0),
				}
			},
			want:    []string{"| Q2 | 4.00 s (1.0×) | ✗ wrong answer |", "| correct answers | 3/3 | 2/3 |", "cross-engine"},
			useCase: "Analytics (TPC-H SF 1)",
			pick:    "postgres", winner: "postgres",
			whyParts: []string{"only engine with every answer correct: geomean 2.00 s", "fastest on 1 of 3 queries", "not picked: mysql (1 wrong answer)"},
		},
		{
			name: "no engine answered everything",
			results: func() []*result.Result {
				return []*result.Result{
					tpchRun("postgres", []float64{2, 4}, map[int]string{1: "error"}, 0),
					tpchRun("mariadb", []float64{1, 2}, map[int]string{1: "timeout", 2: "timeout"}, 0),
				}
			},
			want:     []string{"| Q1 | ✗ error | ✗ timeout |", "| geometric mean | 4.00 s (1 of 2 queries, not ranked) | — |"},
			useCase:  "Analytics (TPC-H SF 1)",
			pick:     "none (no engine answered every query correctly)",
			whyParts: []string{"postgres (1 error)", "mariadb (2 timeouts)"},
		},
		{
			name: "geometric means two noisy runs apart are undecided",
			results: func() []*result.Result {
				return inRounds(
					tpchRun("postgres", []float64{1, 1}, nil, 0),
					tpchRun("mysql", []float64{1.04, 1}, nil, 0),
					tpchRun("postgres", []float64{1.1, 1}, nil, 0),
					tpchRun("mysql", []float64{1, 1}, nil, 0),
				)
			},
			useCase:  "Analytics (TPC-H SF 1)",
			pick:     "undecided: postgres leads",
			whyParts: []string{"geomean 1.00 s vs 1.02 s (mysql): speed ratio 0.99× [0.64, 1.51] (95% interval, 2 rounds)", "includes 1 and reaches beyond ±5.0%"},
		},
		{
			name: "throughput test ranks queries per hour",
			results: func() []*result.Result {
				return inRounds(
					tpchRun("postgres", []float64{2, 4}, nil, 1800),
					tpchRun("mysql", []float64{1, 2}, nil, 3600),
					tpchRun("mariadb", []float64{1, 1}, map[int]string{2: "wrong"}, 9000),
					tpchRun("postgres", []float64{2, 4}, nil, 1810),
					tpchRun("mysql", []float64{1, 2}, nil, 3590),
					tpchRun("mariadb", []float64{1, 1}, map[int]string{2: "wrong"}, 9000),
				)
			},
			want: []string{
				"| queries per hour | 1,800 | **3,600** | 9,000 (not ranked) |",
				"| streams | 2 | 2 | 2 |",
				"| correct answers | 2/2 | 2/2 | 1/2 |",
			},
			notWant: []string{"| Q1 |", "| geometric mean"},
			useCase: "Analytics (TPC-H SF 1, throughput)",
			pick:    "mysql, 1.99× [1.89, 2.10] as fast, 2 rounds", winner: "mysql",
			whyParts: []string{"3,600 queries/h vs 1,800 (postgres)", "not picked: mariadb (1 wrong answer)"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := &Input{Results: tc.results()}
			out, err := Markdown(in)
			if err != nil {
				t.Fatal(err)
			}
			md := string(out)
			sec := mdSection(md, "TPC-H (analytical queries)")
			if sec == "" {
				t.Fatalf("report.md has no TPC-H section:\n%s", md)
			}
			for _, w := range tc.want {
				if !strings.Contains(sec, w) {
					t.Errorf("TPC-H section lacks %q:\n%s", w, sec)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(md, w) {
					t.Errorf("report.md contains %q:\n%s", w, md)
				}
			}

			ds := newModel(in).decisions()
			if len(ds) != 1 || !ds[0].TPCH {
				t.Fatalf("got decisions %+v, want one TPC-H decision", ds)
			}
			d := ds[0]
			if d.Pick != tc.pick {
				t.Errorf("Pick = %q, want %q (why: %s)", d.Pick, tc.pick, d.Why)
			}
			winner := ""
			if d.Winner != nil {
				winner = d.Winner.Name
			}
			if winner != tc.winner {
				t.Errorf("Winner = %q, want %q", winner, tc.winner)
			}
			for _, p := range tc.whyParts {
				if !strings.Contains(d.Why, p) {
					t.Errorf("Why = %q, want it to contain %q", d.Why, p)
				}
			}
			pick := document.MarkdownCell(tc.pick)
			if tc.winner != "" {
				pick = "**" + pick + "**"
			}
			row := "| " + tc.useCase + " | " + pick + " | " + document.MarkdownCell(d.Why) + " |"
			if !strings.Contains(mdSection(md, "Quick decision"), row) {
				t.Errorf("Quick decision lacks the row\n%s\n%s", row, mdSection(md, "Quick decision"))
			}

			page, err := HTML(in)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(page, []byte("chart not drawn")) {
				t.Error("a chart failed to draw")
			}
			for _, w := range []string{`<section id="tpch">`, `class="num failed"`} {
				if len(tc.want) > 0 && !bytes.Contains(page, []byte(w)) {
					t.Errorf("report.html lacks %q", w)
				}
			}
		})
	}
}

// TestTPCHChart checks the per-query chart: one bar group per query, a legend entry per engine,
// and a log axis only when the times span a wide range.
func TestTPCHChart(t *testing.T) {
	for _, tc := range []struct {
		name    string
		results []*result.Result
		log     bool
	}{
		{"wide range is logarithmic", []*result.Result{
			tpchRun("postgres", []float64{0.05, 12, 1}, nil, 0),
			tpchRun("mysql", []float64{0.08, 30, 2}, map[int]string{3: "wrong"}, 0),
		}, true},
		{"narrow range is linear", []*result.Result{
			tpchRun("postgres", []float64{1, 2, 3}, nil, 0),
			tpchRun("mysql", []float64{1.5, 2.5, 3.5}, nil, 0),
		}, false},
		{"one engine, one query", []*result.Result{tpchRun("mariadb", []float64{1}, nil, 0)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newModel(&Input{Results: tc.results})
			svg, err := tpchChart(m.TPCHSets[0])
			if err != nil {
				t.Fatal(err)
			}
			s := string(svg)
			if s == "" {
				t.Fatal("no chart")
			}
			for _, r := range tc.results {
				if !strings.Contains(s, ">"+r.Engine.Kind+"</text>") {
					t.Errorf("legend lacks %s", r.Engine.Kind)
				}
			}
			if !strings.Contains(s, ">Q1</text>") {
				t.Error("x axis lacks Q1")
			}
			if got := strings.Contains(s, "log scale"); got != tc.log {
				t.Errorf("log scale = %v, want %v", got, tc.log)
			}
		})
	}
}
