package report

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func TestGolden(t *testing.T) {
	for _, tc := range []struct {
		golden  string
		render  func(*Input) ([]byte, error)
		fixture func(testing.TB) *Input
	}{
		{"report.md.golden", Markdown, fixture},
		{"report.html.golden", HTML, fixture},
		// Single servers beside the clusters made of them: cluster rows, node rows, node charts.
		{"cluster.md.golden", Markdown, clusterFixture},
		{"cluster.html.golden", HTML, clusterFixture},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			got, err := tc.render(tc.fixture(t))
			if err != nil {
				t.Fatal(err)
			}
			again, err := tc.render(tc.fixture(t))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, again) {
				t.Fatal("two renderings of the same input differ: output is not deterministic")
			}
			checkGolden(t, tc.golden, got)
		})
	}
}

// firstDiff shows the first differing line, which is what a reader of a failed golden test needs.
func firstDiff(want, got []byte) string {
	wl := bytes.Split(want, []byte("\n"))
	gl := bytes.Split(got, []byte("\n"))
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g []byte
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if !bytes.Equal(w, g) {
			if len(w) > 300 {
				w = append(w[:300:300], "…"...)
			}
			if len(g) > 300 {
				g = append(g[:300:300], "…"...)
			}
			return "line " + itoa(i+1) + ":\n- " + string(w) + "\n+ " + string(g)
		}
	}
	return "(no line differs)"
}

// checkGolden compares got with testdata/NAME, or rewrites it under -update.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/report -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the rendering (run go test ./internal/report -update after checking the change):\n%s", path, firstDiff(want, got))
	}
}
