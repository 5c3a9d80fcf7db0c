package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fairbench/fairbench/internal/document"
	"github.com/fairbench/fairbench/internal/result"
)

// xmlnsAttr matches the namespace declarations go-chart puts on <svg>: URIs that name a
// namespace, never fetched.
var xmlnsAttr = regexp.MustCompile(`xmlns(:[a-z]+)?="http://www\.w3\.org/[^"]*"`)

func TestHTMLSelfContained(t *testing.T) {
	page, err := HTML(fixture(t))
	if err != nil {
		t.Fatal(err)
	}
	s := string(page)
	stripped := xmlnsAttr.ReplaceAllString(s, "")
	for _, bad := range []string{"http://", "https://", "<script", "<link", "<img", "<iframe", "src=", "url(", "@import"} {
		if strings.Contains(strings.ToLower(stripped), bad) {
			i := strings.Index(strings.ToLower(stripped), bad)
			t.Errorf("page contains %q, so it is not self-contained: …%s…", bad, stripped[max(0, i-80):min(len(stripped), i+80)])
		}
	}
	if n := strings.Count(s, "<svg"); n < 13 {
		t.Errorf("page has %d <svg> charts, want at least 13 (5 per workload, a scalability chart and 2 ramp charts)", n)
	}
	// Axis names, tick labels and the legend are SVG text nodes.
	for _, want := range []string{">seconds</text>", ">percentile</text>", ">99.9%</text>", ">threads</text>", ">TPS</text>", ">latency ms</text>", ">2,000</text>"} {
		if !strings.Contains(s, want) {
			t.Errorf("page lacks axis text %q", want)
		}
	}
	for _, eng := range []string{"postgres", "mysql", "mariadb"} {
		if n := strings.Count(s, ">"+eng+"</text>"); n < 13 {
			t.Errorf("legend entry %q appears in %d charts, want every chart", eng, n)
		}
	}
	if !strings.Contains(s, `class="num best"`) {
		t.Error("no best value marked with the best class")
	}
}

// TestSameFacts checks that the figures of the Markdown report all appear in the HTML one.
func TestSameFacts(t *testing.T) {
	in := fixture(t)
	md, err := Markdown(in)
	if err != nil {
		t.Fatal(err)
	}
	page, err := HTML(in)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(md), "\n") {
		if !strings.HasPrefix(line, "| ") {
			continue
		}
		for _, c := range strings.Split(strings.Trim(line, "| "), " | ") {
			c = strings.Trim(c, "*")
			c = strings.NewReplacer(`\|`, "|", `\*`, "*", `\[`, "[", `\]`, "]", "&lt;", "<", "&gt;", ">").Replace(c)
			if c == "" || strings.HasPrefix(c, "---") {
				continue
			}
			esc := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "'", "&#39;", `"`, "&#34;", "+", "&#43;").Replace(c)
			if !bytes.Contains(page, []byte(">"+esc+"<")) {
				t.Errorf("table cell %q of report.md is not a cell of report.html", c)
			}
		}
	}
}

func TestRobustInputs(t *testing.T) {
	base := func() *result.Result {
		r := run("postgres", "oltp_read_write", 4, 100, true)
		r.LatencyMS.P99 = 10
		return r
	}
	tests := []struct {
		name    string
		results func(t *testing.T) []*result.Result
		wantSVG bool
	}{
		{"no intervals no histogram", func(t *testing.T) []*result.Result { return []*result.Result{base()} }, false},
		{"single interval point", func(t *testing.T) []*result.Result {
			r := base()
			r.Intervals = []result.Interval{{T: 10, TPS: 100, P99MS: 10}}
			return []*result.Result{r}
		}, true},
		{"interval at time zero", func(t *testing.T) []*result.Result {
			r := base()
			r.Intervals = []result.Interval{{T: 0, TPS: 100}}
			return []*result.Result{r}
		}, true},
		{"all zero", func(t *testing.T) []*result.Result {
			r := base()
			r.TPS, r.QPS, r.LatencyMS = 0, 0, result.Latency{}
			r.Intervals = []result.Interval{{T: 1}, {T: 2}, {T: 3}}
			r2 := run("mysql", "oltp_read_write", 4, 1, true)
			r2.TPS = 0
			r2.Intervals = []result.Interval{{T: 1}, {T: 2}}
			return []*result.Result{r, r2}
		}, true},
		{"corrupt and empty histograms", func(t *testing.T) []*result.Result {
			r := base()
			r.Histogram = "not base64!"
			r2 := run("mysql", "oltp_read_write", 4, 90, true)
			empty, _ := encodeHistogram(t, 1, 0, 1)
			r2.Histogram = empty
			return []*result.Result{r, r2}
		}, false},
		{"sweep where one engine has one point", func(t *testing.T) []*result.Result {
			return []*result.Result{
				run("postgres", "oltp_read_write", 1, 100, true), run("postgres", "oltp_read_write", 8, 500, true),
				run("mysql", "oltp_read_write", 8, 450, true),
			}
		}, true},
		{"only incomplete", func(t *testing.T) []*result.Result {
			r := base()
			r.Complete, r.Error = false, "killed"
			r.Intervals = []result.Interval{{T: 1, TPS: 50}, {T: 2, TPS: 60}}
			return []*result.Result{r}
		}, true},
		{"ramp with no steps, ramp with one step", func(t *testing.T) []*result.Result {
			r := rampRun("postgres", "oltp_read_write", [][3]float64{{4, 100, 5}}, 0, "time", 0, false)
			r2 := rampRun("mysql", "oltp_read_write", [][3]float64{{4, 100, 5}}, 0, "", 0, true)
			r2.Ramp.Steps, r2.Ramp.SaturationThreads, r2.Ramp.SaturationTPS = nil, 0, 0
			return []*result.Result{r, r2}
		}, true},
		{"unknown engine and workload, nil entry", func(t *testing.T) []*result.Result {
			r := run("cockroach", "ycsb_a", 2, 10, true)
			r.Label = "<b>&label|x"
			return []*result.Result{nil, r, base()}
		}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := &Input{Results: tc.results(t)}
			md, err := Markdown(in)
			if err != nil {
				t.Fatal(err)
			}
			page, err := HTML(in)
			if err != nil {
				t.Fatal(err)
			}
			// The headline chart needs no histogram nor interval; the others are what is tested.
			charts := bytes.Count(page, []byte("<svg")) - bytes.Count(page, []byte("<figcaption>Each engine against the best"))
			if got := charts > 0; got != tc.wantSVG {
				t.Errorf("page has a chart: %v, want %v", got, tc.wantSVG)
			}
			if bytes.Contains(page, []byte("chart not drawn")) {
				t.Errorf("a chart failed to draw:\n%s", page)
			}
			if bytes.Contains(md, []byte("<b>")) || bytes.Contains(page, []byte("<b>")) {
				t.Error("a label was written unescaped")
			}
		})
	}
}

func TestCorruptHistogramIsNoted(t *testing.T) {
	r := run("postgres", "oltp_read_write", 4, 100, true)
	r.Histogram = "AAAA"
	page, err := HTML(&Input{Results: []*result.Result{r}})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(page, []byte("latency histogram not readable")) {
		t.Error("an unreadable histogram is not mentioned")
	}
}

func TestEmptyInput(t *testing.T) {
	for _, in := range []*Input{nil, {}, {Results: []*result.Result{nil}}} {
		if _, err := Markdown(in); err == nil {
			t.Error("Markdown of no results succeeded")
		}
		if _, err := HTML(in); err == nil {
			t.Error("HTML of no results succeeded")
		}
	}
}

func TestFormat(t *testing.T) {
	tests := []struct{ got, want string }{
		{fmtRate(1234.4), "1,234"},
		{fmtRate(987), "987"},
		{fmtRate(41800), "41,800"},
		{fmtRate(12.34), "12.3"},
		{fmtRate(3.254), "3.25"},
		{fmtMS(12.3), "12.30"},
		{fmtMS(1234.5), "1,234.50"},
		{document.Fixed(-0.001, 2), "0.00"},
		{document.Fixed(-1234567.891, 1), "-1,234,567.9"},
		{fmtInt(1000000), "1,000,000"},
		{fmtInt(999), "999"},
		{fmtPct(0.0567), "5.7%"},
		{joinAnd([]string{"a", "b", "c"}), "a, b and c"},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

func TestEngineOrderAndLabels(t *testing.T) {
	rs := []*result.Result{
		run("zeta", "w", 1, 1, true),
		run("mariadb", "w", 1, 1, true),
		run("alpha", "w", 1, 1, true),
		run("mysql", "w", 1, 1, true),
		run("mysql", "w", 1, 1, true),
		run("postgres", "w", 1, 1, true),
		// Sweep steps named by label fold into the engine.
		run("postgres", "w", 2, 1, true),
	}
	rs[3].Label, rs[4].Label = "binlog-on", "binlog-off"
	rs[5].Label, rs[6].Label = "t1", "t2"
	m := newModel(&Input{Results: rs})
	var names []string
	for _, v := range m.Variants {
		names = append(names, v.Name)
	}
	want := "postgres, mysql (binlog-off), mysql (binlog-on), mariadb, alpha, zeta"
	if got := strings.Join(names, ", "); got != want {
		t.Errorf("engine order = %q, want %q", got, want)
	}
}

func TestLoadAndWriteDir(t *testing.T) {
	in := fixture(t)
	dir := t.TempDir()
	for i, r := range in.Results {
		if err := result.Write(filepath.Join(dir, "results", "run-"+itoa(100+i)+".json"), r); err != nil {
			t.Fatal(err)
		}
	}
	env, err := json.Marshal(in.Environment)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "environment.json"), env, 0o644); err != nil {
		t.Fatal(err)
	}
	loaded, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(loaded.Results) != len(in.Results) || loaded.Environment == nil || loaded.Environment.Command != in.Environment.Command {
		t.Fatalf("Load returned %d results and environment %+v", len(loaded.Results), loaded.Environment)
	}
	out := t.TempDir()
	if err := WriteDir(out, loaded); err != nil {
		t.Fatal(err)
	}
	for name, render := range map[string]func(*Input) ([]byte, error){"report.md": Markdown, "report.html": HTML} {
		want, err := render(in)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s written from loaded results differs from the one rendered in memory", name)
		}
	}
	entries, _ := os.ReadDir(out)
	if len(entries) != 2 {
		t.Errorf("WriteDir left %d files, want report.md and report.html only", len(entries))
	}

	if err := os.Remove(filepath.Join(dir, "environment.json")); err != nil {
		t.Fatal(err)
	}
	loaded, err = Load(dir)
	if err != nil {
		t.Fatalf("Load without environment.json: %v", err)
	}
	if loaded.Environment != nil {
		t.Error("Environment set without environment.json")
	}
	if _, err := Load(t.TempDir()); err == nil {
		t.Error("Load of a directory without results succeeded")
	}
}
