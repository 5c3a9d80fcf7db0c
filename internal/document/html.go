package document

import (
	"bytes"
	"html/template"

	"github.com/fairbench/fairbench/internal/output"
)

// GeneratorMark is in every page fairbench writes, so that a page is replaced only where
// fairbench wrote it (internal/output).
const GeneratorMark = `<meta name="generator" content="fairbench">`

// pageStyleMark is a line of the page's own style, which pages written before GeneratorMark carry.
const pageStyleMark = "main { max-width: 1100px; margin: 0 auto; padding: 24px 32px 64px; background: #fff; }"

// WrotePage says whether the file at path is a page fairbench wrote.
func WrotePage(path string) bool {
	head := output.Head(path)
	return bytes.Contains(head, []byte(GeneratorMark)) || bytes.HasPrefix(head, []byte("<!DOCTYPE html>")) && bytes.Contains(head, []byte(pageStyleMark))
}

// The page carries its own CSS and no script or external reference: it must open the same from a
// mail attachment, an artifact store or a machine without network access.
const pageTemplate = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="fairbench">
<title>{{.Title}}</title>
<style>
body { font-family: -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color: #222; margin: 0; background: #fafafa; }
main { max-width: 1100px; margin: 0 auto; padding: 24px 32px 64px; background: #fff; }
h1 { font-size: 1.7em; margin-bottom: 0.2em; }
h2 { border-bottom: 2px solid #eee; padding-bottom: 0.2em; margin-top: 2em; }
h3 { margin-top: 1.5em; font-size: 1.1em; }
.date { color: #666; margin-top: 0; }
.summary { font-size: 1.05em; }
.legend span { display: inline-block; margin-right: 1.2em; }
.swatch { display: inline-block; width: 0.9em; height: 0.9em; border-radius: 2px; vertical-align: -0.1em; margin-right: 0.35em; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.92em; }
caption { text-align: left; font-weight: 600; padding: 0.3em 0; }
th, td { border: 1px solid #ddd; padding: 0.35em 0.7em; text-align: left; vertical-align: top; }
thead th { background: #f3f5f7; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.rowhead { font-weight: 600; background: #fcfcfc; }
td.best { font-weight: 700; background: #e7f5e9; color: #11632a; }
td.saturation { font-weight: 700; background: #fff3d6; color: #7a4a00; }
td.incomplete { color: #999; font-style: italic; }
td.failed { color: #b00020; font-weight: 600; background: #fdecee; }
.foot { color: #555; font-size: 0.88em; margin: 0.2em 0; }
.figs { display: grid; grid-template-columns: repeat(auto-fill, minmax(460px, 1fr)); gap: 16px 24px; }
.figs.wide { grid-template-columns: 1fr; }
figure { margin: 0.5em 0 1em; }
figure svg { width: 100%; height: auto; display: block; border: 1px solid #eee; }
figcaption { font-weight: 600; margin-bottom: 0.3em; }
pre { background: #f5f5f5; padding: 0.8em 1em; overflow-x: auto; border-radius: 4px; }
</style>
</head>
<body>
<main>
<h1>{{.Title}}</h1>
<p class="date">{{.Date}}</p>
<p class="summary">{{.Summary}}</p>
<p class="legend">{{range .Legend}}<span><span class="swatch" style="background: {{color .Color}}"></span>{{.Name}}</span>{{end}}</p>
{{range .Sections}}
<section id="{{.ID}}">
<h2>{{.Heading}}</h2>
{{range .Paras}}<p>{{.}}</p>
{{end}}{{range $t := .Tables}}<table>
{{if $t.Caption}}<caption>{{$t.Caption}}</caption>
{{end}}<thead><tr>{{range $i, $h := $t.Header}}<th{{if num $t.Numeric $i}} class="num"{{end}}>{{$h}}</th>{{end}}</tr></thead>
<tbody>
{{range $t.Rows}}<tr>{{range $i, $c := .}}<td{{with classes $c (num $t.Numeric $i)}} class="{{.}}"{{end}}>{{$c.Text}}</td>{{end}}</tr>
{{end}}</tbody>
</table>
{{range $t.Foot}}<p class="foot">{{.}}</p>
{{end}}{{end}}{{if .Bullets}}<ul>
{{range .Bullets}}<li>{{.}}</li>
{{end}}</ul>
{{end}}{{if .Code}}<pre><code>{{.Code}}</code></pre>
{{end}}{{range .Figures}}{{if .Title}}<h3>{{.Title}}</h3>
{{end}}<div class="figs{{if .Wide}} wide{{end}}">
{{range .Figures}}<figure>
<figcaption>{{.Title}}</figcaption>
{{.SVG}}
</figure>
{{end}}</div>
{{end}}</section>
{{end}}
</main>
</body>
</html>
`

var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"color": func(c string) template.CSS { return template.CSS(c) },
	"num": func(numeric []bool, i int) bool {
		return i < len(numeric) && numeric[i]
	},
	"classes": func(c Cell, numeric bool) string {
		var cls []byte
		add := func(s string) {
			if len(cls) > 0 {
				cls = append(cls, ' ')
			}
			cls = append(cls, s...)
		}
		if numeric && !c.Head {
			add("num")
		}
		if c.Head {
			add("rowhead")
		}
		if c.Best {
			add("best")
		}
		if c.Saturation {
			add("saturation")
		}
		if c.Incomplete {
			add("incomplete")
		}
		if c.Failed {
			add("failed")
		}
		return string(cls)
	},
}).Parse(pageTemplate))

// HTML renders the page as one self-contained HTML page: inline CSS and inline SVG charts, no
// scripts and nothing fetched from the network, so it can be mailed or archived as is.
func (d *Doc) HTML() ([]byte, error) {
	var b bytes.Buffer
	if err := page.Execute(&b, d); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
