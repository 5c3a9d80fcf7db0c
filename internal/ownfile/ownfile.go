// Package ownfile tells whether a path on this machine is this user's own: fairbench runs as
// root, and its reapers kill processes and remove what a record or owner file names, so they
// trust only records in directories that no other local user could have made or written to.
package ownfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// PrivateDir says why dir is not this user's own directory closed to others' writes (not a link,
// owned by this user, no group or other write bit), or nil if it is.
func PrivateDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.IsDir():
		return fmt.Errorf("%s is not a directory (a link or a file someone else made): remove it", dir)
	case !ok || int(st.Uid) != os.Geteuid():
		return fmt.Errorf("%s belongs to uid %d, not to this user (%d): someone else made it; remove it", dir, st.Uid, os.Geteuid())
	case fi.Mode().Perm()&0o022 != 0:
		return fmt.Errorf("%s can be written by others (mode %04o): remove it", dir, fi.Mode().Perm())
	}
	return nil
}

// MakePrivateDir makes dir with mode 0700 where it is missing, its parent too unless the parent
// is a system directory (the temp dir, /run), and checks both with PrivateDir.
func MakePrivateDir(dir string) error {
	for _, d := range []string{filepath.Dir(dir), dir} {
		if d == os.TempDir() || d == "/run" || d == "/" {
			continue
		}
		if err := os.Mkdir(d, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
			return err
		}
		if err := PrivateDir(d); err != nil {
			return err
		}
	}
	return nil
}

// Regular says whether path is a regular file (not a link) that belongs to this user.
func Regular(path string) bool {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}
