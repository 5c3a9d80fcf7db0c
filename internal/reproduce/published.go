package reproduce

import (
	_ "embed"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// publishedYAML is the studies' published figures, shipped in the binary so a reproduction
// works anywhere (the file's header names where they come from).
//
//go:embed published.yaml
var publishedYAML []byte

// Published is one study's entry of published.yaml, read by path.
type Published struct {
	Key  string
	tree map[string]any
}

// LoadPublished returns the entry of one study.
func LoadPublished(key string) (Published, error) {
	var all map[string]any
	if err := yaml.Unmarshal(publishedYAML, &all); err != nil {
		return Published{}, fmt.Errorf("published.yaml: %v", err)
	}
	tree, ok := all[key].(map[string]any)
	if !ok {
		return Published{}, fmt.Errorf("published.yaml has no study %q", key)
	}
	return Published{Key: key, tree: tree}, nil
}

// Get walks a dotted path ("results.oltp_read_write.postgres.tps").
func (p Published) Get(path string) (any, bool) {
	var cur any = p.tree
	for _, k := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[k]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// Float reads a number at path.
func (p Published) Float(path string) (float64, bool) {
	v, ok := p.Get(path)
	if !ok {
		return 0, false
	}
	switch n := v.(type) {
	case int:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

// String reads a text at path.
func (p Published) String(path string) string {
	v, _ := p.Get(path)
	s, _ := v.(string)
	return s
}

// Floats reads a list of numbers at path; null entries (no figure) are NaN-free: ok[i] says
// whether entry i was given.
func (p Published) Floats(path string) (vals []float64, ok []bool) {
	v, _ := p.Get(path)
	list, _ := v.([]any)
	for _, e := range list {
		switch n := e.(type) {
		case int:
			vals, ok = append(vals, float64(n)), append(ok, true)
		case float64:
			vals, ok = append(vals, n), append(ok, true)
		default:
			vals, ok = append(vals, 0), append(ok, false)
		}
	}
	return vals, ok
}
