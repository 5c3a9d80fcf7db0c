package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/document"
	"github.com/fairbench/fairbench/internal/result"
)

// rampRun is a minimal ramp result: steps of {threads, TPS, p99 ms}, saturated at steps[sat].
func rampRun(kind, workload string, steps [][3]float64, sat int, stopped string, sloMS float64, complete bool) *result.Result {
	rp := &result.Ramp{Add: 4, EveryS: 10, Max: 24, SLOMS: sloMS, StoppedBecause: stopped}
	sum := 0.0
	for _, st := range steps {
		rp.Steps = append(rp.Steps, result.RampStep{Threads: int(st[0]), TPS: st[1], P95MS: st[2] * 0.8, P99MS: st[2]})
		sum += st[1]
	}
	rp.SaturationThreads, rp.SaturationTPS = rp.Steps[sat].Threads, rp.Steps[sat].TPS
	r := &result.Result{
		Complete:  complete,
		Engine:    result.Engine{Kind: kind},
		Workload:  result.Workload{Name: workload},
		Label:     "ramp",
		Threads:   rp.Steps[len(rp.Steps)-1].Threads,
		DurationS: float64(10 * len(steps)),
		TPS:       sum / float64(len(steps)),
		Ramp:      rp,
	}
	if !complete {
		r.Error = "server went away"
	}
	return r
}

// inRounds gives runs start times in the order given, as a comparison's rounds would: the
// decision pairs the k-th run of each engine.
func inRounds(rs ...*result.Result) []*result.Result {
	for i, r := range rs {
		r.StartedAt = time.Date(2026, 11, 27, 0, i, 0, 0, time.UTC)
	}
	return rs
}

// mdSection returns one "## heading" section of a Markdown report, "" when there is none.
func mdSection(md, heading string) string {
	i := strings.Index(md, "\n## "+heading+"\n")
	if i < 0 {
		return ""
	}
	rest := md[i+1:]
	if j := strings.Index(rest[3:], "\n## "); j >= 0 {
		return rest[:j+3]
	}
	return rest
}

func TestRampReport(t *testing.T) {
	const rw = "oltp_read_write"
	steps := func(tps ...float64) [][3]float64 {
		out := make([][3]float64, len(tps))
		for i, v := range tps {
			out[i] = [3]float64{float64(4 * (i + 1)), v, float64(5 * (i + 1))}
		}
		return out
	}
	fixtureRuns := func() []*result.Result {
		var out []*result.Result
		for i, s := range fixtureRamps() {
			s.seed = int64(100 + i)
			out = append(out, makeRampResult(t, s))
		}
		return out
	}
	tests := []struct {
		name     string
		results  func() []*result.Result
		want     []string // in the Saturation section of report.md
		notWant  []string // anywhere in report.md
		wantMD   []string // elsewhere in report.md
		useCase  string   // the decision row's first cell
		pick     string
		winner   string
		whyParts []string
	}{
		{
			name:    "fixture ramps: SLO, max threads, throughput stopped rising",
			results: fixtureRuns,
			want: []string{
				"| Threads | postgres TPS | postgres p99 ms | mysql TPS | mysql p99 ms | mariadb TPS | mariadb p99 ms |",
				"| 16 | 2,690 | 13.50 | **2,380** | **31.20** | 2,610 | 17.90 |",
				"| 20 | 2,980 | 18.90 | 2,450 | 58.60 | **2,640** | **27.50** |",
				"| 24 | **3,120** | **26.40** | — | — | 2,590 | 41.30 |",
				"postgres: saturates at 24 threads, 3,120 TPS (stopped: max threads 24)",
				"mysql: saturates at 16 threads, 2,380 TPS (stopped: p99 above SLO 50 ms)",
				"mariadb: saturates at 20 threads, 2,640 TPS (stopped: throughput stopped rising)",
				"Ramp: from 4 threads, adding 4 every 10 s up to 24, p99 SLO 50 ms.",
			},
			// Ramps only: no fixed-thread sections.
			notWant: []string{"## Results", "## Scalability", "## Server side"},
			wantMD:  []string{"mariadb 11.4.3 on oltp_read_write in ramp runs: from 4 threads, adding 4 every 10 s up to 24, p99 SLO 50 ms."},
			useCase: "Mixed OLTP (reads + writes) · oltp_read_write (ramp)",
			// One ramp each: a lead, no verdict.
			pick:     "unconfirmed: postgres leads",
			whyParts: []string{"saturates at 24 threads with 3,120 TPS vs 2,640 (mariadb at 20 threads)", "a single run measures no noise"},
		},
		{
			name: "ramps are never compared with fixed runs of the same workload",
			results: func() []*result.Result {
				return []*result.Result{
					run("postgres", rw, 8, 5000, true), run("mysql", rw, 8, 1000, true),
					rampRun("postgres", rw, steps(900, 1800, 2000, 1900), 2, "throughput stopped rising", 0, true),
					rampRun("mysql", rw, steps(1000, 2000, 2800, 3000), 3, "max threads", 0, true),
				}
			},
			want: []string{
				"| 12 | **2,000** | **15.00** | 2,800 | 15.00 |",
				"| 16 | 1,900 | 20.00 | **3,000** | **20.00** |",
				"postgres: saturates at 12 threads, 2,000 TPS (stopped: throughput stopped rising)",
				"Ramp: from 4 threads, adding 4 every 10 s up to 24.",
			},
			// The ramps' thread counts stay out of the Results and Scalability tables.
			notWant: []string{"## Scalability", "oltp_read_write, 16 threads", "oltp_read_write, 12 threads"},
			wantMD: []string{
				"| oltp_read_write, 8 threads | TPS | **5,000** | 1,000 |",
				"| Mixed OLTP (reads + writes) · oltp_read_write | unconfirmed: postgres leads | 5,000 TPS vs 1,000 (mysql)",
				"| postgres | oltp_read_write | 4–16 | ramp |",
				"Ramp runs on oltp_read_write: from 4 threads",
				"Ramp runs are not in this table",
			},
			useCase:  "Mixed OLTP (reads + writes) · oltp_read_write (ramp)",
			pick:     "unconfirmed: mysql leads",
			whyParts: []string{"saturates at 16 threads with 3,000 TPS vs 2,000 (postgres at 12 threads)"},
		},
		{
			name: "two noisy ramps each are undecided",
			results: func() []*result.Result {
				return inRounds(
					rampRun("postgres", rw, steps(1000, 2000, 2900), 2, "max threads", 50, true),
					rampRun("mariadb", rw, steps(1000, 2000, 3000, 2950), 2, "throughput stopped rising", 50, true),
					rampRun("postgres", rw, steps(1000, 2000, 3100), 2, "max threads", 50, true),
					rampRun("mariadb", rw, steps(1000, 2000, 2950, 2900), 2, "throughput stopped rising", 50, true),
				)
			},
			useCase: "Mixed OLTP (reads + writes) · oltp_read_write (ramp)",
			pick:    "undecided: postgres leads",
			whyParts: []string{
				"saturates at 12 threads with 3,000 TPS vs 2,975 (mariadb at 12 threads): ratio 1.01× [0.59, 1.71] (95% interval, 2 rounds)",
				"includes 1 and reaches beyond ±5.0%",
			},
		},
		{
			name: "repeated ramps that agree decide",
			results: func() []*result.Result {
				return inRounds(
					rampRun("postgres", rw, steps(1000, 2000, 2900), 2, "max threads", 50, true),
					rampRun("mariadb", rw, steps(1000, 2000, 2000, 1950), 1, "throughput stopped rising", 50, true),
					rampRun("postgres", rw, steps(1000, 2000, 2950), 2, "max threads", 50, true),
					rampRun("mariadb", rw, steps(1000, 2010, 2000, 1950), 1, "throughput stopped rising", 50, true),
					rampRun("postgres", rw, steps(1000, 2000, 2920), 2, "max threads", 50, true),
					rampRun("mariadb", rw, steps(1000, 2005, 2000, 1950), 1, "throughput stopped rising", 50, true),
				)
			},
			useCase: "Mixed OLTP (reads + writes) · oltp_read_write (ramp)",
			pick:    "postgres, 1.46× [1.44, 1.48], 3 rounds", winner: "postgres",
			whyParts: []string{"saturates at 12 threads with 2,920 TPS vs 2,005 (mariadb at 8 threads)", "p99 there"},
		},
		{
			name: "an incomplete ramp is shown but never wins",
			results: func() []*result.Result {
				return []*result.Result{
					rampRun("postgres", rw, steps(1000, 2000), 1, "max threads", 50, true),
					rampRun("mysql", rw, steps(1500, 5000), 1, "", 50, false),
				}
			},
			want: []string{
				"mysql (incomplete): saturates at 8 threads, 5,000 TPS: server went away",
				"(incomplete): no ramp of this engine finished",
			},
			useCase:  "Mixed OLTP (reads + writes) · oltp_read_write (ramp)",
			pick:     "postgres",
			winner:   "postgres",
			whyParts: []string{"only complete ramp: saturates at 8 threads with 2,000 TPS, p99 10.00 ms", "mysql not ranked (incomplete)"},
		},
		{
			name: "unknown workload and a fractional SLO",
			results: func() []*result.Result {
				return []*result.Result{
					rampRun("postgres", "ycsb_a", steps(100, 180, 150), 1, "p99 above SLO", 12.5, true),
					rampRun("mysql", "ycsb_a", steps(90, 120, 130), 2, "max threads", 12.5, true),
				}
			},
			want: []string{
				"**ycsb_a**",
				"postgres: saturates at 8 threads, 180 TPS (stopped: p99 above SLO 12.5 ms)",
				"mysql: saturates at 12 threads, 130 TPS (stopped: max threads 24)",
			},
			useCase:  "ycsb_a (ramp)",
			pick:     "unconfirmed: postgres leads",
			whyParts: []string{"saturates at 8 threads with 180 TPS vs 130 (mysql at 12 threads)"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := &Input{Results: tc.results()}
			mdb, err := Markdown(in)
			if err != nil {
				t.Fatal(err)
			}
			md := string(mdb)
			sat := mdSection(md, "Saturation (ramp)")
			if sat == "" {
				t.Fatalf("report.md has no Saturation (ramp) section:\n%s", md)
			}
			for _, w := range tc.want {
				if !strings.Contains(sat, w) {
					t.Errorf("Saturation section lacks %q:\n%s", w, sat)
				}
			}
			for _, w := range tc.wantMD {
				if !strings.Contains(md, w) {
					t.Errorf("report.md lacks %q:\n%s", w, md)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(md, w) {
					t.Errorf("report.md contains %q:\n%s", w, md)
				}
			}

			var ramps []decision
			for _, d := range newModel(in).decisions() {
				if d.Ramp {
					ramps = append(ramps, d)
				}
			}
			if len(ramps) != 1 {
				t.Fatalf("got %d ramp decisions, want 1", len(ramps))
			}
			d := ramps[0]
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
			for _, w := range []string{`<section id="saturation">`, ">saturation point</text>", `saturation">`} {
				if !bytes.Contains(page, []byte(w)) {
					t.Errorf("report.html lacks %q", w)
				}
			}
		})
	}
}
