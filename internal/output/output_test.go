package output

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A path is written only where nothing is there, or where fairbench wrote what is there
// (export --csv, history --html and report replaced any file).
func TestCheck(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ours := StartsWith("engine,engine_version,")
	mine := write("mine.csv", "engine,engine_version,workload\n")
	theirs := write("theirs.csv", "name,salary\n")
	link := filepath.Join(dir, "link.csv")
	if err := os.Symlink(mine, link); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ path, want string }{
		{filepath.Join(dir, "new.csv"), ""},
		{mine, ""},
		{theirs, "--csv " + theirs + " exists and is not a file fairbench wrote: choose another file name, or remove it first"},
		{link, "exists and is not a file fairbench wrote"},
		{dir, "is a directory"},
		{filepath.Join(dir, "no", "such", "dir.csv"), "cannot be written"},
	}
	for _, c := range cases {
		err := Check("--csv", c.path, ours)
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("Check(%s) = %v, want %q", c.path, err, c.want)
		}
	}
	if got, _ := os.ReadFile(theirs); string(got) != "name,salary\n" {
		t.Errorf("the user's file changed: %q", got)
	}
	if !Contains(`name="generator" content="fairbench"`)(write("page.html", `<head><meta name="generator" content="fairbench"></head>`)) {
		t.Error("a page with fairbench's mark was not taken for ours")
	}
}
