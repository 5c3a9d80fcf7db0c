package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// DeviceIO is one device's block I/O as the kernel's cgroup accounting counts it: bytes and
// operations (bios) read and written, submitted by the group's processes.
type DeviceIO struct {
	ReadBytes, WriteBytes, ReadOps, WriteOps int64
}

// Stats is one reading of a group's counters. CPU and I/O are cumulative; memory is the state
// now, with the peak since the group was made (or since ResetPeak).
type Stats struct {
	HasCPU bool
	// CPUTotalNS is the group's CPU time, precise to the nanosecond; CPUUserNS and CPUSystemNS
	// split it as the kernel's tick sampling does, so a process that ran for less than a tick
	// may show in the total only.
	CPUTotalNS, CPUUserNS, CPUSystemNS int64

	HasMemory bool
	MemAnon   int64 // anonymous memory: heaps, stacks, private buffers
	MemFile   int64 // page cache, shared memory (PostgreSQL's shared_buffers) included
	MemShmem  int64 // the shared-memory part of MemFile
	MemUsage  int64 // what the kernel charges the group in all
	MemPeak   int64 // the most it was charged, 0 where the kernel does not keep it

	HasIO bool
	IO    map[string]DeviceIO // by "MAJ:MIN"
}

// Stats reads the group's counters. A hierarchy that cannot be read leaves its Has* false.
func (g *Group) Stats() (Stats, error) {
	if g.V2 {
		return readV2(g.Dirs[Unified])
	}
	var st Stats
	var errs []error
	if d, ok := g.Dirs["cpuacct"]; ok {
		errs = append(errs, readV1CPU(d, &st))
	}
	if d, ok := g.Dirs["memory"]; ok {
		errs = append(errs, readV1Memory(d, &st))
	}
	if d, ok := g.Dirs["blkio"]; ok {
		errs = append(errs, readV1IO(d, &st))
	}
	return st, errors.Join(errs...)
}

func readInt(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
}

func readV1CPU(dir string, st *Stats) error {
	total, err := readInt(filepath.Join(dir, "cpuacct.usage"))
	if err != nil {
		return err
	}
	u, err := readInt(filepath.Join(dir, "cpuacct.usage_user"))
	if err != nil {
		return err
	}
	s, err := readInt(filepath.Join(dir, "cpuacct.usage_sys"))
	if err != nil {
		return err
	}
	st.HasCPU, st.CPUTotalNS, st.CPUUserNS, st.CPUSystemNS = true, total, u, s
	return nil
}

func readV1Memory(dir string, st *Stats) error {
	b, err := os.ReadFile(filepath.Join(dir, "memory.stat"))
	if err != nil {
		return err
	}
	kv := ParseKeyValues(string(b))
	usage, err := readInt(filepath.Join(dir, "memory.usage_in_bytes"))
	if err != nil {
		return err
	}
	peak, _ := readInt(filepath.Join(dir, "memory.max_usage_in_bytes"))
	// v1's "rss" is anonymous memory without shmem, "cache" the page cache with shmem.
	st.HasMemory = true
	st.MemAnon, st.MemFile, st.MemShmem = kv["rss"], kv["cache"], kv["shmem"]
	st.MemUsage, st.MemPeak = usage, peak
	return nil
}

func readV1IO(dir string, st *Stats) error {
	bytesB, err := os.ReadFile(filepath.Join(dir, "blkio.throttle.io_service_bytes"))
	if err != nil {
		return err
	}
	opsB, err := os.ReadFile(filepath.Join(dir, "blkio.throttle.io_serviced"))
	if err != nil {
		return err
	}
	st.HasIO = true
	st.IO = ParseV1IO(string(bytesB), string(opsB))
	return nil
}

func readV2(dir string) (Stats, error) {
	var st Stats
	var errs []error
	if b, err := os.ReadFile(filepath.Join(dir, "cpu.stat")); err == nil {
		kv := ParseKeyValues(string(b))
		st.HasCPU, st.CPUTotalNS = true, kv["usage_usec"]*1000
		st.CPUUserNS, st.CPUSystemNS = kv["user_usec"]*1000, kv["system_usec"]*1000
	} else {
		errs = append(errs, err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "memory.stat")); err == nil {
		kv := ParseKeyValues(string(b))
		st.MemAnon, st.MemFile, st.MemShmem = kv["anon"], kv["file"], kv["shmem"]
		if st.MemUsage, err = readInt(filepath.Join(dir, "memory.current")); err == nil {
			st.HasMemory = true
		} else {
			errs = append(errs, err)
		}
		st.MemPeak, _ = readInt(filepath.Join(dir, "memory.peak")) // Linux 5.19 on
	}
	if b, err := os.ReadFile(filepath.Join(dir, "io.stat")); err == nil {
		st.HasIO, st.IO = true, ParseV2IO(string(b))
	}
	return st, errors.Join(errs...)
}

// ParseKeyValues reads "key value" lines (memory.stat, cpu.stat).
func ParseKeyValues(s string) map[string]int64 {
	out := map[string]int64{}
	for _, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		if v, err := strconv.ParseInt(f[1], 10, 64); err == nil {
			out[f[0]] = v
		}
	}
	return out
}

// ParseV1IO reads blkio.throttle.io_service_bytes and io_serviced ("8:0 Read 4096" lines, a
// "Total" line at the end).
func ParseV1IO(bytesText, opsText string) map[string]DeviceIO {
	out := map[string]DeviceIO{}
	add := func(text string, read, write func(*DeviceIO, int64)) {
		for _, line := range strings.Split(text, "\n") {
			f := strings.Fields(line)
			if len(f) != 3 {
				continue
			}
			v, err := strconv.ParseInt(f[2], 10, 64)
			if err != nil {
				continue
			}
			d := out[f[0]]
			switch f[1] {
			case "Read":
				read(&d, v)
			case "Write":
				write(&d, v)
			default:
				continue
			}
			out[f[0]] = d
		}
	}
	add(bytesText, func(d *DeviceIO, v int64) { d.ReadBytes = v }, func(d *DeviceIO, v int64) { d.WriteBytes = v })
	add(opsText, func(d *DeviceIO, v int64) { d.ReadOps = v }, func(d *DeviceIO, v int64) { d.WriteOps = v })
	return out
}

// ParseV2IO reads io.stat ("8:0 rbytes=4096 wbytes=0 rios=1 wios=0 dbytes=0 dios=0").
func ParseV2IO(s string) map[string]DeviceIO {
	out := map[string]DeviceIO{}
	for _, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		var d DeviceIO
		for _, kv := range f[1:] {
			k, v, _ := strings.Cut(kv, "=")
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				continue
			}
			switch k {
			case "rbytes":
				d.ReadBytes = n
			case "wbytes":
				d.WriteBytes = n
			case "rios":
				d.ReadOps = n
			case "wios":
				d.WriteOps = n
			}
		}
		out[f[0]] = d
	}
	return out
}

// ResetPeak starts the memory peak afresh (v1's max_usage_in_bytes; v2's memory.peak takes a
// reset from Linux 6.12 on). It says whether the kernel took it.
func (g *Group) ResetPeak() bool {
	if g.V2 {
		return WriteFile(filepath.Join(g.Dirs[Unified], "memory.peak"), "reset") == nil
	}
	d, ok := g.Dirs["memory"]
	return ok && WriteFile(filepath.Join(d, "memory.max_usage_in_bytes"), "0") == nil
}

// CountDevice makes sure the kernel counts the group's I/O on the device ("MAJ:MIN"). On v1 the
// block throttling layer, which keeps blkio.throttle.io_service_bytes, is set up on a device's
// queue only once some cgroup has a rule for it; writing "no limit" for this group sets it up
// and limits nothing. v2 counts every device anyway.
func (g *Group) CountDevice(dev string) error {
	d, ok := g.Dirs["blkio"]
	if g.V2 || !ok {
		return nil
	}
	p := filepath.Join(d, "blkio.throttle.write_bps_device")
	if err := WriteFile(p, dev+" 0"); err != nil {
		return fmt.Errorf("turn on I/O accounting for device %s in %s: %w", dev, p, err)
	}
	return nil
}

// Sub is b - a for the cumulative figures (CPU, I/O); memory is b's.
func Sub(b, a Stats) Stats {
	out := b
	out.CPUTotalNS -= a.CPUTotalNS
	out.CPUUserNS -= a.CPUUserNS
	out.CPUSystemNS -= a.CPUSystemNS
	out.IO = map[string]DeviceIO{}
	for dev, x := range b.IO {
		y := a.IO[dev]
		out.IO[dev] = DeviceIO{x.ReadBytes - y.ReadBytes, x.WriteBytes - y.WriteBytes, x.ReadOps - y.ReadOps, x.WriteOps - y.WriteOps}
	}
	return out
}

// SplitCPU divides d's precise CPU total into user and system time in the proportion the
// kernel's ticks saw (all of it system time when no tick fell in the interval at all would be a
// guess, so then both stay 0 and only the total is known).
func SplitCPU(d Stats) (userNS, systemNS int64) {
	ticks := d.CPUUserNS + d.CPUSystemNS
	if ticks <= 0 {
		return 0, 0
	}
	userNS = int64(float64(d.CPUTotalNS) * float64(d.CPUUserNS) / float64(ticks))
	return userNS, d.CPUTotalNS - userNS
}
