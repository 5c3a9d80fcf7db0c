package servermetrics

import (
	"runtime"
	"strings"
	"time"

	"github.com/fairbench/fairbench/internal/cgroup"
	"github.com/fairbench/fairbench/internal/result"
)

// groupWatch follows a server through its cgroup: the kernel's own accounting of every process
// in it, so nothing is lost to processes that come and go between samples, shared memory is
// counted once, and disk figures are what the block layer was asked to read and write.
type groupWatch struct {
	g         *cgroup.Group
	disk      string // the data directory's disk ("MAJ:MIN"); "" sums every device
	journaled bool   // the data directory's filesystem has a jbd2 journal

	base, last                  cgroup.Stats
	baseAt, lastAt              time.Time
	idle                        cgroup.Stats
	loadMem, loadAnon, loadFile int64
	peakReset                   bool
}

func newGroupWatch(g *cgroup.Group, disk string) *groupWatch {
	if disk != "" {
		_ = g.CountDevice(disk)
	}
	return &groupWatch{g: g, disk: disk}
}

// start takes the idle reading and starts the kernel's memory peak afresh.
func (w *groupWatch) start() error {
	st, err := w.g.Stats()
	if err != nil {
		return err
	}
	now := time.Now()
	w.base, w.last, w.baseAt, w.lastAt, w.idle = st, st, now, now, st
	w.peakReset = w.g.ResetPeak()
	return nil
}

// measureStart moves the start of the cumulative figures to now.
func (w *groupWatch) measureStart() error {
	st, err := w.g.Stats()
	if err != nil {
		return err
	}
	w.track(st)
	w.base, w.last, w.baseAt, w.lastAt = st, st, time.Now(), time.Now()
	return nil
}

func (w *groupWatch) track(st cgroup.Stats) {
	w.loadMem = max(w.loadMem, st.MemUsage)
	w.loadAnon = max(w.loadAnon, st.MemAnon)
	w.loadFile = max(w.loadFile, st.MemFile)
}

// io is the I/O on the watched disk, or on every device when there is no disk to watch.
func (w *groupWatch) io(d cgroup.Stats) cgroup.DeviceIO {
	if w.disk != "" {
		return d.IO[w.disk]
	}
	var sum cgroup.DeviceIO
	for _, x := range d.IO {
		sum.ReadBytes += x.ReadBytes
		sum.WriteBytes += x.WriteBytes
		sum.ReadOps += x.ReadOps
		sum.WriteOps += x.WriteOps
	}
	return sum
}

// interval fills the interval's server figures from the change since the last reading.
func (w *groupWatch) interval(iv *result.Interval) error {
	st, err := w.g.Stats()
	if err != nil {
		return err
	}
	now := time.Now()
	d := cgroup.Sub(st, w.last)
	if st.HasCPU {
		iv.ServerCPUPct = round(cpuPercent(d, now.Sub(w.lastAt)), 100)
	}
	if st.HasMemory {
		iv.ServerMemMB = round(float64(st.MemUsage)/mib, 10)
	}
	if st.HasIO {
		io := w.io(d)
		iv.ServerDiskReadBytes, iv.ServerDiskWriteBytes = io.ReadBytes, io.WriteBytes
		iv.ServerDiskReadOps, iv.ServerDiskWriteOps = io.ReadOps, io.WriteOps
	}
	w.track(st)
	w.last, w.lastAt = st, now
	return nil
}

func cpuPercent(d cgroup.Stats, wall time.Duration) float64 {
	if wall <= 0 {
		return 0
	}
	return float64(d.CPUTotalNS) / float64(wall.Nanoseconds()) / float64(runtime.NumCPU()) * 100
}

// finish fills the server's totals from the group and says which figures it covered.
func (w *groupWatch) finish(srv *result.Server) (cpu, mem, disk bool, err error) {
	st, err := w.g.Stats()
	if err != nil {
		return false, false, false, err
	}
	now := time.Now()
	w.track(st)
	d := cgroup.Sub(st, w.base)
	if st.HasCPU {
		user, system := cgroup.SplitCPU(d)
		srv.CPUUserS = round(float64(user)/1e9, 100)
		srv.CPUSystemS = round(float64(system)/1e9, 100)
		srv.CPUPct = round(cpuPercent(d, now.Sub(w.baseAt)), 100)
		srv.CPUSource = w.g.Source("cpuacct")
	}
	if st.HasMemory {
		srv.MemIdleMB = mb(w.idle.MemUsage)
		srv.MemAnonIdleMB, srv.MemCacheIdleMB = mb(w.idle.MemAnon), mb(w.idle.MemFile)
		srv.MemLoadMB, srv.MemAnonLoadMB, srv.MemCacheLoadMB = mb(w.loadMem), mb(w.loadAnon), mb(w.loadFile)
		if w.peakReset && st.MemPeak > 0 {
			srv.MemPeakMB = mb(st.MemPeak)
		}
		srv.MemorySource = w.g.Source("memory")
	}
	if st.HasIO {
		io := w.io(d)
		srv.DiskReadBytes, srv.DiskWriteBytes = io.ReadBytes, io.WriteBytes
		srv.DiskReadOps, srv.DiskWriteOps = io.ReadOps, io.WriteOps
		srv.DiskDevice = "all devices"
		if w.disk != "" {
			srv.DiskDevice = strings.TrimSpace(w.disk + " " + cgroup.DeviceName(w.disk))
		}
		srv.DiskSource = w.g.Source("blkio") + diskNote(w.g, w.journaled)
	}
	return st.HasCPU, st.HasMemory, st.HasIO, nil
}

// diskNote says what the group's disk figures leave out on this kernel and filesystem: with
// either, they are a lower bound of what the server costs the device, never the whole.
func diskNote(g *cgroup.Group, journaled bool) string {
	var notes []string
	if !g.V2 {
		notes = append(notes, "the kernel's background writeback, which cgroup v1 charges to no cgroup")
	}
	if journaled {
		notes = append(notes, "the filesystem journal (jbd2), which every fsync that changes a file's metadata makes the kernel write")
	}
	if len(notes) == 0 {
		return ""
	}
	return " (a lower bound: block I/O the server's processes issue, fsync-driven writeback included; it leaves out " +
		strings.Join(notes, ", and ") + ")"
}

func mb(b int64) float64 { return round(float64(b)/mib, 10) }
