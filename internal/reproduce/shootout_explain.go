package reproduce

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/fairbench/fairbench/internal/document"
	"github.com/fairbench/fairbench/internal/interval"
	"github.com/fairbench/fairbench/internal/report"
	"github.com/fairbench/fairbench/internal/result"
)

// shootoutDefaults judges MySQL's read-write figure against PostgreSQL's with every engine as its
// package ships it: the study tuned only the buffer pools, so this is closer to how it ran than
// the fair profile.
func shootoutDefaults(pub Published, got Measured) Row {
	pubMy, _ := pub.Float("results.oltp_read_write.mysql.tps")
	pubPg, _ := pub.Float("results.oltp_read_write.postgres.tps")
	my, pg := got.All("defaults", "mysql", "oltp_read_write"), got.All("defaults", "postgres", "oltp_read_write")
	g := ratioOf(got.Rule("defaults"), my, pg, func(r *result.Result) float64 { return r.TPS }, true)
	why := "needs the defaults run's MySQL and PostgreSQL read-write results"
	if g.OK {
		why = evidence(pub, got.Cores, first(my), first(pg))
	}
	return judgeGot("read-write TPS, mysql / postgres, both as packaged (--profile defaults)", "defaults", pubMy/pubPg, g, why)
}

// gapLine is one configuration of MySQL's read-write run and where it puts MySQL against PostgreSQL.
type gapLine struct {
	config, settings string
	tps, ratio       float64 // MySQL's median TPS, and MySQL / PostgreSQL
	knob             bool
	// waits pools the sampled sessions of MySQL's runs in this configuration: where its time went.
	waits *result.Waits
	// effect is the knob's change of MySQL's TPS against the fair runs each flipped run followed,
	// with its interval; only a real effect is counted as one.
	effect interval.Effect
}

// explainShootoutGap is the section that explains the published read-write gap (MySQL at 0.15x
// PostgreSQL) by the settings that could cause it: the fair run, the binary log as published,
// the packages' defaults, and each knob alone. A knob's effect is measured against the fair
// MySQL run right before it (same server start order, same minute), then applied to the fair
// MySQL / PostgreSQL ratio: what that one setting would do to the headline figure.
func explainShootoutGap(pub Published, got Measured) []*document.Section {
	pubMy, _ := pub.Float("results.oltp_read_write.mysql.tps")
	pubPg, _ := pub.Float("results.oltp_read_write.postgres.tps")
	lines := shootoutGapLines(got)
	sec := &document.Section{ID: "gap", Heading: "MySQL's read-write gap, setting by setting"}
	if len(lines) == 0 {
		sec.Paras = []string{"No run measured MySQL's and PostgreSQL's read-write figures, so the gap is not explained here."}
		return []*document.Section{sec}
	}
	t := &document.Table{Header: []string{"MySQL configuration", "settings changed", "MySQL TPS", "MySQL / PostgreSQL", "share of the published gap", "where MySQL's time went"},
		Numeric: []bool{false, false, true, true, true, false}}
	t.Rows = append(t.Rows, document.Row("published (MySQL 8.4.8, sysbench 1.0.20)", "not stated; binary log on by default", fmt.Sprintf("%.0f", pubMy), fmt.Sprintf("%.2fx", pubMy/pubPg), "100%", "—"))
	fair := lines[0].ratio
	for _, l := range lines {
		eff := ""
		if l.knob {
			eff = " (" + l.effect.String() + ")"
		}
		t.Rows = append(t.Rows, document.Row(l.config, l.settings, fmt.Sprintf("%.0f%s", l.tps, eff), fmt.Sprintf("%.2fx", l.ratio), gapShare(fair, l.ratio, pubMy/pubPg),
			report.TopWaits(l.waits, 2)))
	}
	t.Foot = []string{"MySQL / PostgreSQL: the fair and as-published rows divide by the fair run's PostgreSQL, the defaults row by PostgreSQL's own defaults run. " +
		"A knob row is MySQL run again with that one setting flipped beside a fair MySQL run (after it in one round, before it in the next); its change against that run (in brackets) is applied to the fair ratio. " +
		"With repeats the change carries its 95% interval (each flipped run paired with the fair run of its round); it is within noise when the interval includes no change, and noise, never an effect, when the interval lies on the side the knob's physics rules out (commit without a log flush cannot slow MySQL). " +
		"Share of the published gap: how far the configuration moves the ratio from the fair one towards the published one, on a log scale (0% = no closer, 100% = all of it, above 100% = past it). " +
		"Where MySQL's time went: of its client sessions sampled over the configuration's rounds, the shares in the two server-side categories most sampled (on CPU = running with no wait the engine names; log flush = a commit writing or syncing the redo or binary log, or waiting for whoever does), then the share idle between statements, waiting for the client (16 client threads share this machine's cores with the server)."}
	sec.Tables = []*document.Table{t}
	sec.Paras = []string{gapSummary(lines, pubMy/pubPg)}
	return []*document.Section{sec}
}

// shootoutGapLines lists the configurations measured, the fair one first; each figure is the
// median of the run's rounds.
func shootoutGapLines(got Measured) []gapLine {
	tps := func(rs []*result.Result) float64 {
		return medianOf(result.Figures(rs, func(r *result.Result) float64 { return r.TPS }))
	}
	fairMy := got.All("fair", "mysql", "oltp_read_write")
	pg, my := tps(got.All("fair", "postgres", "oltp_read_write")), tps(fairMy)
	if pg == 0 || my == 0 {
		return nil
	}
	lines := []gapLine{{config: "fair profile", settings: "binary log off, the fair profile's settings", tps: my, ratio: my / pg, waits: result.PoolWaits(fairMy)}}
	if binMy := got.All("as-published", "mysql", "oltp_read_write"); tps(binMy) > 0 {
		lines = append(lines, gapLine{config: "as published: binary log on", settings: "log_bin ON, sync_binlog 1", tps: tps(binMy), ratio: tps(binMy) / pg,
			waits: result.PoolWaits(binMy)})
	}
	if defMy, dPg := got.All("defaults", "mysql", "oltp_read_write"), tps(got.All("defaults", "postgres", "oltp_read_write")); tps(defMy) > 0 && dPg > 0 {
		lines = append(lines, gapLine{config: "both as packaged (--profile defaults)", settings: "every setting the package's own", tps: tps(defMy), ratio: tps(defMy) / dPg,
			waits: result.PoolWaits(defMy)})
	}
	base := got.All("knobs", "mysql", "oltp_read_write")
	if tps(base) == 0 {
		return lines
	}
	for _, knob := range knobsIn(got.Runs["knobs"]) {
		flipped := got.AllFlipped("knobs", "mysql", "oltp_read_write", knob)
		if len(flipped) == 0 {
			continue
		}
		// Each flipped run against the plain run of its round: rounds added for other open
		// effects ran the plain runs more often.
		f, b := result.PairByRound(flipped, base)
		runTPS := func(r *result.Result) float64 { return r.TPS }
		eff := got.Rule("knobs").EffectOf(result.Figures(f, runTPS), result.Figures(b, runTPS), flipped[0].FlipExpect)
		lines = append(lines, gapLine{config: knob + " flipped", settings: flippedSettings(base[0], flipped[0]), tps: tps(flipped),
			ratio: lines[0].ratio * (1 + eff.Change), effect: eff, knob: true, waits: result.PoolWaits(flipped)})
	}
	return lines
}

// knobsIn lists the knobs flipped in a run's results, in the order the results name them.
func knobsIn(rs []*result.Result) []string {
	var out []string
	for _, r := range rs {
		if k := strings.Join(r.Flipped, ","); k != "" && !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return knobRank(out[i]) < knobRank(out[j]) })
	return out
}

func knobRank(k string) int {
	for i, name := range shootoutKnobs {
		if name == k {
			return i
		}
	}
	return len(shootoutKnobs)
}

// flippedSettings lists the applied settings a knob changed: "log_bin OFF → ON".
func flippedSettings(base, r *result.Result) string {
	if base.Server == nil || r.Server == nil {
		return ""
	}
	var parts []string
	for k, v := range r.Server.Profile {
		if base.Server.Profile[k] != v {
			parts = append(parts, fmt.Sprintf("%s %s → %s", k, orDefault(base.Server.Profile[k]), v))
		}
	}
	for k, v := range base.Server.Profile {
		if _, ok := r.Server.Profile[k]; !ok {
			parts = append(parts, fmt.Sprintf("%s %s → (default)", k, v))
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

func orDefault(v string) string {
	if v == "" {
		return "(default)"
	}
	return v
}

// gapShare is how much of the way from the fair ratio to the published one a configuration goes,
// in log terms (a halving counts the same wherever it starts).
func gapShare(fair, ratio, published float64) string {
	if fair <= 0 || ratio <= 0 || published <= 0 || math.Abs(math.Log(published/fair)) < 0.05 {
		return "—"
	}
	share := math.Round(100 * math.Log(ratio/fair) / math.Log(published/fair))
	return fmt.Sprintf("%.0f%%", share+0) // +0 turns -0 into 0
}

// gapSummary says in one paragraph what the table shows.
func gapSummary(lines []gapLine, published float64) string {
	fair := lines[0]
	b := fmt.Sprintf("Published: MySQL at %.2fx PostgreSQL's read-write TPS. Fair here: %.2fx.", published, fair.ratio)
	var biggest *gapLine
	knobs, within := 0, 0
	for i := range lines[1:] {
		l := &lines[i+1]
		if !l.knob {
			b += fmt.Sprintf(" %s: %.2fx (%s of the gap).", strings.ToUpper(l.config[:1])+l.config[1:], l.ratio, gapShare(fair.ratio, l.ratio, published))
			continue
		}
		knobs++
		if !l.effect.Real {
			within++
		}
		if l.effect.Real && l.effect.Change < 0 && (biggest == nil || l.effect.Change < biggest.effect.Change) {
			biggest = l
		}
	}
	switch {
	case knobs == 0:
	case biggest != nil:
		b += fmt.Sprintf(" Of the knobs flipped one at a time, %s costs MySQL the most (%s), which alone would put it at %.2fx.", strings.TrimSuffix(biggest.config, " flipped"), biggest.effect, biggest.ratio)
	default:
		b += " No knob flipped alone cost MySQL more than the noise."
	}
	if within > 0 {
		b += fmt.Sprintf(" %d of %d knob effects are not told apart from the machine's drift (their 95%% intervals include no change, or lie on the side the knob's physics rules out).", within, knobs)
	}
	return b
}
