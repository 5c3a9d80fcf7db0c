package compare

import (
	"strings"
	"testing"

	"github.com/fairbench/fairbench/internal/engine/profile"
)

// --explain is user input: whatever it holds, ParseExplain returns valid, distinct knobs or one
// line naming the valid ones.
func FuzzParseExplain(f *testing.F) {
	for _, seed := range []string{"", "binlog", "binlog,doublewrite", " binlog , flush-method", "binlog,binlog", "turbo", ",", "buffer-pool,synchronous-commit,flush-method,doublewrite,binlog"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, v string) {
		knobs, err := ParseExplain(v)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error is not one line: %q", err)
			}
			return
		}
		seen := map[string]bool{}
		for _, k := range knobs {
			if _, err := profile.LookupKnob(k); err != nil || seen[k] {
				t.Fatalf("ParseExplain(%q) = %v: %q is unknown or repeated", v, knobs, k)
			}
			seen[k] = true
		}
	})
}
