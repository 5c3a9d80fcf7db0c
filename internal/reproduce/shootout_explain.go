package reproduce

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/fairbench/fairbench/internal/document"
	"github.com/fairbench/fairbench/internal/result"
)

// shootoutDefaults judges MySQL's read-write figure against PostgreSQL's with every engine as its
// package ships it: the study tuned only the buffer pools, so this is closer to how it ran than
// the fair profile.
func shootoutDefaults(pub Published, got Measured) Row {
	pubMy, _ := pub.Float("results.oltp_read_write.mysql.tps")
	pubPg, _ := pub.Float("results.oltp_read_write.postgres.tps")
	my, pg := got.Find("defaults", "mysql", "oltp_read_write"), got.Find("defaults", "postgres", "oltp_read_write")
	ok := my != nil && pg != nil && pg.TPS > 0
	ratio, why := 0.0, "needs the defaults run's MySQL and PostgreSQL read-write results"
	if ok {
		ratio, why = my.TPS/pg.TPS, evidence(pub, got.Cores, my, pg)
	}
	return judgeRatio("read-write TPS, mysql / postgres, both as packaged (--profile defaults)", "defaults", pubMy/pubPg, ratio, ok, why)
}

// gapLine is one configuration of MySQL's read-write run and where it puts MySQL against PostgreSQL.
type gapLine struct {
	config, settings string
	tps, ratio       float64 // MySQL's TPS, and MySQL / PostgreSQL
	effect           float64 // the knob's change of MySQL's TPS against the fair run beside it
	knob             bool
	noise            float64 // how far two runs of the same fair MySQL differed: smaller effects are not told apart
}

// minKnobNoise is the smallest change a knob row calls an effect, as compare's knob table does.
const minKnobNoise = 0.05

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
	t := &document.Table{Header: []string{"MySQL configuration", "settings changed", "MySQL TPS", "MySQL / PostgreSQL", "share of the published gap"},
		Numeric: []bool{false, false, true, true, true}}
	t.Rows = append(t.Rows, document.Row("published (MySQL 8.4.8, sysbench 1.0.20)", "not stated; binary log on by default", fmt.Sprintf("%.0f", pubMy), fmt.Sprintf("%.2fx", pubMy/pubPg), "100%"))
	fair := lines[0].ratio
	for _, l := range lines {
		eff := ""
		if l.knob {
			eff = fmt.Sprintf(" (%+.0f%%)", l.effect*100)
			if math.Abs(l.effect) <= l.noise {
				eff = fmt.Sprintf(" (%+.0f%%, within noise)", l.effect*100)
			}
		}
		t.Rows = append(t.Rows, document.Row(l.config, l.settings, fmt.Sprintf("%.0f%s", l.tps, eff), fmt.Sprintf("%.2fx", l.ratio), gapShare(fair, l.ratio, pubMy/pubPg)))
	}
	t.Foot = []string{"MySQL / PostgreSQL: the fair and as-published rows divide by the fair run's PostgreSQL, the defaults row by PostgreSQL's own defaults run. " +
		"A knob row is MySQL run again with that one setting flipped right after a fair MySQL run; its change against that run (in brackets) is applied to the fair ratio. " +
		"A change no larger than 5% or than the difference between the two fair MySQL runs (the fair run's and the knob runs' own) is within noise. " +
		"Share of the published gap: how far the configuration moves the ratio from the fair one towards the published one, on a log scale (0% = no closer, 100% = all of it, above 100% = past it)."}
	sec.Tables = []*document.Table{t}
	sec.Paras = []string{gapSummary(lines, pubMy/pubPg)}
	return []*document.Section{sec}
}

// shootoutGapLines lists the configurations measured, the fair one first.
func shootoutGapLines(got Measured) []gapLine {
	pg := got.Find("fair", "postgres", "oltp_read_write")
	my := got.Find("fair", "mysql", "oltp_read_write")
	if pg == nil || my == nil || pg.TPS == 0 {
		return nil
	}
	lines := []gapLine{{config: "fair profile", settings: "binary log off, the fair profile's settings", tps: my.TPS, ratio: my.TPS / pg.TPS}}
	if bin := got.Find("as-published", "mysql", "oltp_read_write"); bin != nil {
		lines = append(lines, gapLine{config: "as published: binary log on", settings: "log_bin ON, sync_binlog 1", tps: bin.TPS, ratio: bin.TPS / pg.TPS})
	}
	dMy, dPg := got.Find("defaults", "mysql", "oltp_read_write"), got.Find("defaults", "postgres", "oltp_read_write")
	if dMy != nil && dPg != nil && dPg.TPS > 0 {
		lines = append(lines, gapLine{config: "both as packaged (--profile defaults)", settings: "every setting the package's own", tps: dMy.TPS, ratio: dMy.TPS / dPg.TPS})
	}
	base := got.Find("knobs", "mysql", "oltp_read_write")
	if base == nil || base.TPS == 0 {
		return lines
	}
	// The knob runs' own fair MySQL and the fair run's are the same configuration: how far they
	// differ is what this machine's drift does to one figure.
	noise := max(minKnobNoise, math.Abs(base.TPS/my.TPS-1))
	for _, knob := range knobsIn(got.Runs["knobs"]) {
		r := got.FindFlipped("knobs", "mysql", "oltp_read_write", knob)
		if r == nil {
			continue
		}
		eff := r.TPS/base.TPS - 1
		lines = append(lines, gapLine{config: knob + " flipped", settings: flippedSettings(base, r), tps: r.TPS, ratio: lines[0].ratio * (1 + eff),
			effect: eff, knob: true, noise: noise})
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
	noise := 0.0
	for i := range lines[1:] {
		l := &lines[i+1]
		if !l.knob {
			b += fmt.Sprintf(" %s: %.2fx (%s of the gap).", strings.ToUpper(l.config[:1])+l.config[1:], l.ratio, gapShare(fair.ratio, l.ratio, published))
			continue
		}
		noise = l.noise
		if l.effect < -l.noise && (biggest == nil || l.effect < biggest.effect) {
			biggest = l
		}
	}
	switch {
	case noise == 0:
	case biggest != nil:
		b += fmt.Sprintf(" Of the knobs flipped one at a time, %s costs MySQL the most (%+.0f%%), which alone would put it at %.2fx.", strings.TrimSuffix(biggest.config, " flipped"), biggest.effect*100, biggest.ratio)
	default:
		b += " No knob flipped alone cost MySQL more than the noise."
	}
	if noise > minKnobNoise {
		b += fmt.Sprintf(" Two runs of the same fair MySQL differed by %.0f%% here, so smaller effects are not told apart from the machine's drift.", noise*100)
	}
	return b
}
