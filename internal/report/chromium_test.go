package report

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// FAIRBENCH_REPORT_SHOT names a file to keep the screenshot of the fixture report in, for people
// to look at; without it the screenshot goes in the test's own temporary directory. (A fixed
// name in /tmp, written as root, would follow a link another user planted there.)

func findChromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium"
	}
	return ""
}

// TestChromiumRendersReport opens the report in a real browser: a page that parses in Go
// templates can still render as nothing, so the DOM and a screenshot are checked.
func TestChromiumRendersReport(t *testing.T) {
	bin := findChromium()
	if bin == "" {
		t.Skip("chromium is not installed")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	page, err := HTML(fixture(t))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	htmlPath := filepath.Join(dir, "report.html")
	if err := os.WriteFile(htmlPath, page, 0o644); err != nil {
		t.Fatal(err)
	}
	// Chromium's helper processes can still be writing the profile as the test ends, which
	// would fail t.TempDir's cleanup; this directory is removed best effort instead.
	profile, err := os.MkdirTemp("", "fairbench-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(profile)

	chromium := func(extra ...string) ([]byte, error) {
		args := []string{
			"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
			"--disable-background-networking", "--disable-component-update", "--disable-sync",
			"--user-data-dir=" + profile,
		}
		args = append(args, extra...)
		args = append(args, "file://"+htmlPath)
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.WaitDelay = 5 * time.Second
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Logf("chromium stderr:\n%s", stderr.String())
			return nil, err
		}
		return stdout.Bytes(), nil
	}

	dom, err := chromium("--dump-dom")
	if err != nil {
		t.Fatalf("chromium --dump-dom: %v", err)
	}
	s := string(dom)
	for _, want := range []string{
		"<table", "oltp_read_write, 16 threads", "oltp_point_select, 16 threads",
		">TPS</td>", ">p95 ms</td>", ">p99 ms</td>", ">2,450</td>", ">41,800</td>",
		"<svg", ">seconds</text>",
		// The ramp's own section, its marked saturation steps and its chart.
		"Saturation (ramp)", "postgres: saturates at 24 threads, 3,120 TPS (stopped: max threads 24)",
		`class="num saturation">3,120</td>`, `class="num saturation">2,380</td>`, ">saturation point</text>", ">SLO 50 ms</text>",
		"oltp_read_write (ramp)",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("rendered DOM lacks %q", want)
		}
	}
	for _, eng := range []string{"postgres", "mysql", "mariadb"} {
		if !strings.Contains(s, ">"+eng+"</th>") || !strings.Contains(s, ">"+eng+"</text>") {
			t.Errorf("rendered DOM lacks %s as a table column and chart legend entry", eng)
		}
	}

	shot := filepath.Join(dir, "shot.png")
	if _, err := chromium("--screenshot="+shot, "--window-size=1280,2000", "--hide-scrollbars"); err != nil {
		t.Fatalf("chromium --screenshot: %v", err)
	}
	png, err := os.ReadFile(shot)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
		t.Fatal("screenshot is not a PNG")
	}
	// A blank or unstyled page compresses to a few kilobytes; tables and charts do not.
	if len(png) <= 20<<10 {
		t.Errorf("screenshot is %d bytes, want more than 20 KB: the page rendered (almost) empty", len(png))
	}
	shotPath := os.Getenv("FAIRBENCH_REPORT_SHOT")
	if shotPath == "" {
		shotPath = filepath.Join(dir, "report-shot.png")
	}
	if err := os.WriteFile(shotPath, png, 0o644); err != nil {
		t.Logf("could not keep the screenshot at %s: %v", shotPath, err)
	} else {
		t.Logf("screenshot: %s", shotPath)
	}
}
