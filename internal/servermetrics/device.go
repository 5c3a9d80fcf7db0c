package servermetrics

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/throttle"
)

// deviceWatch follows a block device that holds the server's data and nothing else's (a loop
// device fairbench made for it): the device's own counters are then the server's I/O with
// nothing left out, where a cgroup misses what the kernel writes on the server's behalf (on
// cgroup v1 background writeback; on ext4 the journal commits that every fsync changing a file's
// metadata causes, written by jbd2).
type deviceWatch struct {
	name       string // "loop3"
	base, last throttle.IOStats
	read       func(name string) (throttle.IOStats, error) // throttle.BlockStats; a fake in unit tests
}

func newDeviceWatch(name string) *deviceWatch {
	return &deviceWatch{name: name, read: throttle.BlockStats}
}

// DiskSourceDevice is disk_source for figures from a block device of the server's own.
func DiskSourceDevice(name string) string {
	return fmt.Sprintf("block device %s, this server's alone (/sys/block/%s/stat: every byte that reached the device, "+
		"the kernel's writeback and the filesystem journal included)", name, name)
}

// start moves the start of the device's figures to now.
func (w *deviceWatch) start() error {
	st, err := w.read(w.name)
	if err != nil {
		return fmt.Errorf("reading %s's counters: %w", w.name, err)
	}
	w.base, w.last = st, st
	return nil
}

func sub(a, b throttle.IOStats) throttle.IOStats {
	return throttle.IOStats{ReadBytes: a.ReadBytes - b.ReadBytes, WriteBytes: a.WriteBytes - b.WriteBytes,
		ReadOps: a.ReadOps - b.ReadOps, WriteOps: a.WriteOps - b.WriteOps}
}

// interval puts the device's change since the last reading in the interval's disk figures, over
// whatever a cgroup put there.
func (w *deviceWatch) interval(iv *result.Interval) error {
	st, err := w.read(w.name)
	if err != nil {
		return fmt.Errorf("reading %s's counters: %w", w.name, err)
	}
	d := sub(st, w.last)
	iv.ServerDiskReadBytes, iv.ServerDiskWriteBytes = d.ReadBytes, d.WriteBytes
	iv.ServerDiskReadOps, iv.ServerDiskWriteOps = d.ReadOps, d.WriteOps
	w.last = st
	return nil
}

// finish makes the device's figures the server's disk figures; those a cgroup already put there
// move to DiskCgroup, the secondary source.
func (w *deviceWatch) finish(srv *result.Server) error {
	st, err := w.read(w.name)
	if err != nil {
		return fmt.Errorf("reading %s's counters: %w", w.name, err)
	}
	if strings.HasPrefix(srv.DiskSource, "cgroup ") {
		srv.DiskCgroup = &result.DiskIO{ReadBytes: srv.DiskReadBytes, WriteBytes: srv.DiskWriteBytes,
			ReadOps: srv.DiskReadOps, WriteOps: srv.DiskWriteOps, Source: srv.DiskSource}
	}
	d := sub(st, w.base)
	srv.DiskReadBytes, srv.DiskWriteBytes = d.ReadBytes, d.WriteBytes
	srv.DiskReadOps, srv.DiskWriteOps = d.ReadOps, d.WriteOps
	srv.DiskDevice = strings.TrimSpace(deviceNumber(w.name) + " " + w.name)
	srv.DiskSource = DiskSourceDevice(w.name)
	return nil
}

// deviceNumber is "MAJ:MIN" of the block device named name, "" if unknown.
func deviceNumber(name string) string {
	b, _ := os.ReadFile(filepath.Join("/sys/block", name, "dev"))
	return strings.TrimSpace(string(b))
}
