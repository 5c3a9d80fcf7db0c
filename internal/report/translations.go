package report

import "github.com/fairbench/fairbench/internal/document"

// translationsTable lists, per engine column, the fairness settings its release took under
// another name or in another form (result.Server.Translations): the parity audit shows how each
// release got the profile's meaning, so that a renamed or dropped setting is never a silent skip.
// nil when no result recorded a translation.
func (m *model) translationsTable() *document.Table {
	t := &document.Table{Caption: "Settings each release took in another form (renamed or dropped there)",
		Header: []string{"Engine", "Setting", "Given as", "Why"}}
	seen := map[string]bool{}
	for _, v := range m.Variants {
		for _, r := range m.Results {
			if r.Server == nil || m.variantOf(r) != v {
				continue
			}
			for _, tr := range r.Server.Translations {
				key := v.Name + "\x00" + tr.Setting + "\x00" + tr.As
				if seen[key] {
					continue
				}
				seen[key] = true
				t.Rows = append(t.Rows, []document.Cell{{Text: v.Name, Head: true}, {Text: tr.Setting}, {Text: tr.As}, {Text: tr.Why}})
			}
		}
	}
	if len(t.Rows) == 0 {
		return nil
	}
	return t
}
