// Package report turns a directory of fairbench results into a comparison report: report.md for
// reading anywhere and report.html, one self-contained page that adds charts. Both are rendered
// from the same document model so the two formats can never disagree on a figure.
package report

import (
	"path/filepath"

	"github.com/fairbench/fairbench/internal/output"

	"github.com/fairbench/fairbench/internal/result"
)

// Input is everything a report is rendered from.
type Input struct {
	Results     []*result.Result
	Environment *result.Environment // may be nil
}

// Load reads DIR/results/*.json (or, without results/, the shard results in DIR itself) and
// DIR/environment.json if present.
func Load(dir string) (*Input, error) {
	results, err := readResults(dir)
	if err != nil {
		return nil, err
	}
	if results, err = mergeShards(results); err != nil {
		return nil, err
	}
	env, err := result.ReadEnvironment(dir)
	if err != nil {
		return nil, err
	}
	return &Input{Results: results, Environment: env}, nil
}

// Markdown renders the report as Markdown.
func Markdown(in *Input) ([]byte, error) {
	d, err := build(in)
	if err != nil {
		return nil, err
	}
	return d.Markdown(), nil
}

// HTML renders the report as one self-contained HTML page: inline CSS and inline SVG charts,
// no scripts and nothing fetched from the network, so it can be mailed or archived as is.
func HTML(in *Input) ([]byte, error) {
	d, err := build(in)
	if err != nil {
		return nil, err
	}
	return d.HTML()
}

// WroteMarkdown says whether the file at path is a report.md that WriteDir wrote.
var WroteMarkdown = output.StartsWith("# fairbench report")

// WriteDir renders report.md and report.html into dir atomically.
func WriteDir(dir string, in *Input) error {
	// Render both before writing either so a failure cannot leave a new report.md beside an
	// old report.html.
	md, err := Markdown(in)
	if err != nil {
		return err
	}
	page, err := HTML(in)
	if err != nil {
		return err
	}
	if err := result.WriteFileAtomic(filepath.Join(dir, "report.md"), md); err != nil {
		return err
	}
	return result.WriteFileAtomic(filepath.Join(dir, "report.html"), page)
}
