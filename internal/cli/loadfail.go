package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"syscall"

	"github.com/fairbench/fairbench/internal/sqldb"
)

// nearlyFull is free space below which a filesystem counts as full: less than a WAL segment or
// two (PostgreSQL's are 16 MiB), or under 1% of it up to 1 GiB (on a 4 TB disk 1% is 40 GB,
// room enough that a failed load there is not the disk's doing).
func nearlyFull(free, size uint64) bool { return free < 32<<20 || free < min(size/100, 1<<30) }

// diagnoseLoadFailure says why a load lost its connection, which the driver reports only as a
// closed or reset socket. Ctrl-C closes the connections itself: that is an interruption. A server
// that drops every connection mid-load has crashed or been stopped; PostgreSQL does that when its
// WAL cannot grow on a full disk (a PANIC, where a full table file is an error it answers with).
// When the server is a throwaway one on this machine (dataDir known) and its filesystem is full,
// that is the user's to fix: a DiskFullError, exit status 2.
func diagnoseLoadFailure(ctx context.Context, err error, dataDir string) error {
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return fmt.Errorf("prepare interrupted (%w): the data set is unfinished, and run and check refuse it until 'prepare --force' loads it again", err)
	}
	var full *sqldb.DiskFullError
	if !sqldb.IsConnectionLost(err) || errors.As(err, &full) {
		return err
	}
	if dataDir != "" {
		for _, dir := range []string{dataDir, filepath.Dir(dataDir)} {
			var st syscall.Statfs_t
			if syscall.Statfs(dir, &st) != nil {
				continue
			}
			free, size := st.Bavail*uint64(st.Bsize), st.Blocks*uint64(st.Bsize)
			if nearlyFull(free, size) {
				return &sqldb.DiskFullError{Err: fmt.Errorf("%d MiB free of %d MiB at %s, and the server dropped the connection mid-load: %w", free>>20, size>>20, dir, err)}
			}
			break
		}
	}
	return fmt.Errorf("the server dropped the connection during the load (%w): it crashed or was stopped; PostgreSQL stops itself when its WAL cannot grow on a full disk, so see the server's log and its free space", err)
}
