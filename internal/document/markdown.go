package document

import (
	"bytes"
	"strings"
)

// Markdown renders the page as Markdown: every table and fact, no charts.
func (d *Doc) Markdown() []byte {
	var b bytes.Buffer
	b.WriteString("# " + mdText(d.Title) + "\n\n")
	if d.Date != "" {
		b.WriteString("_" + mdText(d.Date) + "_\n\n")
	}
	b.WriteString(mdText(d.Summary) + "\n")
	for _, s := range d.Sections {
		if s.HTMLOnly && len(s.Figures) > 0 {
			b.WriteString("\nCharts of these results are in report.html.\n")
			break
		}
	}
	for _, s := range d.Sections {
		if s.HTMLOnly {
			continue
		}
		b.WriteString("\n## " + mdText(s.Heading) + "\n")
		for _, p := range s.Paras {
			b.WriteString("\n" + mdText(p) + "\n")
		}
		for _, t := range s.Tables {
			writeMDTable(&b, t)
		}
		if len(s.Bullets) > 0 {
			b.WriteString("\n")
			for _, item := range s.Bullets {
				b.WriteString("- " + mdText(item) + "\n")
			}
		}
		if s.Code != "" {
			fence := "```"
			for strings.Contains(s.Code, fence) {
				fence += "`"
			}
			b.WriteString("\n" + fence + "sh\n" + s.Code + "\n" + fence + "\n")
		}
	}
	return b.Bytes()
}

// Markdown writes the table alone as Markdown, after a blank line: for command output that is
// one table rather than a page.
func (t *Table) Markdown() []byte {
	var b bytes.Buffer
	writeMDTable(&b, t)
	return b.Bytes()
}

func writeMDTable(b *bytes.Buffer, t *Table) {
	if t.Caption != "" {
		b.WriteString("\n**" + mdText(t.Caption) + "**\n")
	}
	b.WriteString("\n|")
	for _, h := range t.Header {
		b.WriteString(" " + mdCell(h) + " |")
	}
	b.WriteString("\n|")
	for i := range t.Header {
		if i < len(t.Numeric) && t.Numeric[i] {
			b.WriteString("---:|")
		} else {
			b.WriteString("---|")
		}
	}
	b.WriteString("\n")
	for _, row := range t.Rows {
		b.WriteString("|")
		for _, c := range row {
			txt := mdCell(c.Text)
			if (c.Best || c.Saturation) && txt != "" {
				txt = "**" + txt + "**"
			}
			b.WriteString(" " + txt + " |")
		}
		b.WriteString("\n")
	}
	for _, f := range t.Foot {
		b.WriteString("\n" + mdText(f) + "\n")
	}
}

// mdText escapes the characters that would turn page text into Markdown markup; values such
// as labels and error messages come from users and servers.
func mdText(s string) string {
	return mdEscaper.Replace(s)
}

var mdEscaper = strings.NewReplacer(
	`\`, `\\`, "*", `\*`, "`", "\\`", "<", "&lt;", ">", "&gt;", "[", `\[`, "]", `\]`, "\n", " ",
)

// MarkdownCell is s as a Markdown table cell writes it.
func MarkdownCell(s string) string { return mdCell(s) }

func mdCell(s string) string {
	return strings.ReplaceAll(mdText(s), "|", `\|`)
}
