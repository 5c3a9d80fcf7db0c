// Package output is the one rule for a file that a command writes at a path the user gave
// (run --out, merge --out, export --csv, history --html, report DIR): a file already there is
// replaced only where fairbench wrote it, so a mistyped path never destroys a user's file, and
// the directory must take a new file before any work starts.
package output

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Ours says whether the file at path is one that fairbench wrote, of the kind about to replace it.
type Ours func(path string) bool

// Check refuses, in one line that names flag and path, a path that is a directory, a file there
// that fairbench did not write (or a link, a device: anything but a regular file), and a
// directory that cannot take a new file.
func Check(flag, path string, ours Ours) error {
	if st, err := os.Lstat(path); err == nil {
		switch {
		case st.IsDir():
			return fmt.Errorf("%s %s is a directory: give a file name in it", flag, path)
		case !st.Mode().IsRegular() || !ours(path):
			return fmt.Errorf("%s %s exists and is not a file fairbench wrote: choose another file name, or remove it first", flag, path)
		}
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".fairbench-write-check-*")
	if err != nil {
		return fmt.Errorf("%s %s cannot be written (%v): choose a file in an existing, writable directory", flag, path, errors.Unwrap(err))
	}
	f.Close()
	return os.Remove(f.Name())
}

// headBytes is how much of a file its kind is told from.
const headBytes = 8 << 10

// Head is the first bytes of the file at path (nil where it cannot be read).
func Head(path string) []byte {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, headBytes))
	return b
}

// StartsWith is an Ours for a kind of file told by its first bytes.
func StartsWith(prefixes ...string) Ours {
	return func(path string) bool {
		head := Head(path)
		for _, p := range prefixes {
			if bytes.HasPrefix(head, []byte(p)) {
				return true
			}
		}
		return false
	}
}

// Contains is an Ours for a kind of file told by a mark in its first bytes.
func Contains(mark string) Ours {
	return func(path string) bool { return bytes.Contains(Head(path), []byte(mark)) }
}
