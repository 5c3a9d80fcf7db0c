package cli

import (
	"io"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/fairbench/fairbench/internal/suite"
	"github.com/fairbench/fairbench/internal/workloadfile"
)

// readmeBlocks are the README's fenced blocks of one language, in order.
func readmeBlocks(t *testing.T, lang string) []string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile("(?s)```" + lang + "\n(.*?)```")
	var out []string
	for _, m := range re.FindAllStringSubmatch(string(b), -1) {
		out = append(out, m[1])
	}
	return out
}

// readmeCommands are the shell blocks' commands, continuation lines joined and comments dropped.
func readmeCommands(t *testing.T) []string {
	var out []string
	for _, block := range readmeBlocks(t, "sh") {
		block = strings.ReplaceAll(block, "\\\n", " ")
		for _, line := range strings.Split(block, "\n") {
			if i := strings.Index(line, " #"); i >= 0 {
				line = line[:i]
			}
			if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
				out = append(out, line)
			}
		}
	}
	return out
}

// shellWords splits a command line as the shell does for the README's commands: words apart by
// blanks, single quotes keeping a word together.
func shellWords(line string) []string {
	var words []string
	var w strings.Builder
	quoted, inWord := false, false
	for _, r := range line {
		switch {
		case r == '\'':
			quoted, inWord = !quoted, true
		case (r == ' ' || r == '\t') && !quoted:
			if inWord {
				words = append(words, w.String())
				w.Reset()
			}
			inWord = false
		default:
			w.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words
}

// Every fairbench command the README shows names a subcommand that exists, with flags it takes
// and as many arguments as it accepts; every make target it names is in the Makefile; its suite
// and workload file examples parse. The commands' running is what the rest of the tests cover;
// this keeps the guide from drifting away from the command line.
func TestReadmeCommands(t *testing.T) {
	makefile, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, line := range readmeCommands(t) {
		words := shellWords(line)
		switch words[0] {
		case "make":
			for _, target := range words[1:] {
				if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(target) + `:`).Match(makefile) {
					t.Errorf("%q: the Makefile has no target %s", line, target)
				}
			}
		case "bin/fairbench":
			seen++
			root := newRoot(io.Discard, io.Discard)
			cmd, rest, err := root.Find(words[1:])
			if err != nil || cmd == root {
				t.Errorf("%q: no such command: %v", line, err)
				continue
			}
			if err := cmd.ParseFlags(rest); err != nil {
				t.Errorf("%q: %v", line, err)
				continue
			}
			if err := cmd.ValidateArgs(cmd.Flags().Args()); err != nil {
				t.Errorf("%q: %v", line, err)
			}
		}
	}
	t.Logf("%d fairbench commands checked", seen)
	if seen < 10 {
		t.Errorf("found %d fairbench commands in the README: the tour has more", seen)
	}
	for _, y := range readmeBlocks(t, "yaml") {
		var err error
		if strings.Contains(y, "\ntables:") {
			_, err = workloadfile.Parse([]byte(y), "README.md")
		} else {
			_, err = suite.Parse([]byte(y), "README.md")
		}
		if err != nil {
			t.Errorf("the README's example does not parse: %v\n%s", err, y)
		}
	}
}
