package version

import "testing"

func TestCommit(t *testing.T) {
	defer func(c string) { commit = c }(commit)
	for _, c := range []struct{ set, want string }{
		{"1152e8cb0989", "1152e8cb0989"},
		{"1152e8cb0989-dirty", "1152e8cb0989-dirty"},
		{"", ""}, // a test binary carries no VCS stamp
	} {
		commit = c.set
		if got := Commit(); got != c.want {
			t.Errorf("commit %q: Commit() = %q, want %q", c.set, got, c.want)
		}
	}
}
