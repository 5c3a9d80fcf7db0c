package job

import (
	"context"
	"path/filepath"
	"strconv"

	"github.com/docker/go-units"
	"golang.org/x/sys/unix"

	"github.com/fairbench/fairbench/internal/dialect"
	"github.com/fairbench/fairbench/internal/engine"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/workload"
)

// checkSpace refuses a data set that cannot fit: where the workload can say how much it takes
// at the least (workload.Traits.MinDataBytes) and the server runs on this machine, a load that
// would fill the server's disk is refused before it starts ("--table-size 2147483647" would
// otherwise be taken). A server elsewhere, or one whose directory this user may not read, is not
// checked: its free space is not known here.
func (j *Job) checkSpace(ctx context.Context, c sqldb.Conn) error {
	need := j.Workload.Traits().MinDataBytes
	if need == 0 {
		return nil
	}
	free, dir, ok := dataDirFree(ctx, c, j.Target)
	if !ok {
		return nil
	}
	if need > free {
		return workload.Refusef("%s's data set needs at least %s and the server's data directory %s has %s free: "+
			"give it a smaller size (--table-size, --tables, --scale, --warehouses, --sf) or the server more space",
			j.Spec.Name, units.BytesSize(float64(need)), dir, units.BytesSize(float64(free)))
	}
	return nil
}

// dataDirFree is the free space under the server's data directory, for a server listening on this
// machine. The directory is the server's own name for it, read through the server process's root
// (/proc/PID/root): a server in a chroot (fairbench's MySQL from a Debian root) or a container
// names a path inside it.
func dataDirFree(ctx context.Context, c sqldb.Conn, t sqldb.Target) (free int64, dir string, ok bool) {
	l, found := engine.FindListening(t.Host, t.Port)
	if !found || l.PID == 0 {
		return 0, "", false
	}
	if dir = dialect.Of(c).DataDirectory(ctx, c); dir == "" {
		return 0, "", false
	}
	var st unix.Statfs_t
	if unix.Statfs(filepath.Join("/proc", strconv.Itoa(l.PID), "root", dir), &st) != nil {
		return 0, "", false
	}
	return int64(st.Bavail) * int64(st.Bsize), dir, true
}
