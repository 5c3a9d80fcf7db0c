package compare

import (
	"fmt"
	"strings"

	"github.com/fairbench/fairbench/internal/engine/profile"
)

// ParseExplain reads --explain: a comma list of knob names, each at most once.
func ParseExplain(v string) ([]string, error) {
	if strings.TrimSpace(v) == "" {
		return nil, nil
	}
	var out []string
	seen := map[string]bool{}
	for _, name := range strings.Split(v, ",") {
		name = strings.TrimSpace(name)
		if _, err := profile.LookupKnob(name); err != nil {
			return nil, err
		}
		if seen[name] {
			return nil, fmt.Errorf("knob %s is listed twice in --explain", name)
		}
		seen[name] = true
		out = append(out, name)
	}
	return out, nil
}

// checkExplain refuses a knob that would flip nothing on the engines compared.
func checkExplain(knobs, engines []string) error {
	for _, name := range knobs {
		k, err := profile.LookupKnob(name)
		if err != nil {
			return err
		}
		applies := false
		for _, e := range engines {
			applies = applies || k.AppliesTo(e)
		}
		if !applies {
			return fmt.Errorf("knob %s in --explain applies only to %s, and none of them is in --engines", name, strings.Join(k.Engines, ", "))
		}
	}
	return nil
}

type explainRun struct {
	knob string
	inst Contender
}

// explainRuns lists, knob by knob, the engines each knob applies to.
func explainRuns(knobs []string, insts []Contender) []explainRun {
	var out []explainRun
	for _, name := range knobs {
		k, err := profile.LookupKnob(name)
		if err != nil {
			continue
		}
		for _, inst := range insts {
			if k.AppliesTo(inst.Kind) {
				out = append(out, explainRun{knob: name, inst: inst})
			}
		}
	}
	return out
}

// profileText names a profile and its flipped knobs for progress lines.
func profileText(p profile.Profile) string {
	s := p.Name()
	if len(p.Flip) > 0 {
		s += " with " + strings.Join(p.Flip, ", ") + " flipped"
	}
	return s
}
