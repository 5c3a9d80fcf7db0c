package servermetrics

import (
	"encoding/binary"
	"errors"
	"os"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// Sample is the cumulative state of a server's process tree at one moment. CPU and disk figures
// only make sense as differences between two samples of the same ProcessSampler: the first sample
// already holds every process's whole lifetime.
type Sample struct {
	At                    time.Time
	CPUUser, CPUSystem    float64 // seconds
	RSSBytes, PSSBytes    int64
	ReadBytes, WriteBytes int64
	Processes             int
	// PSSAt is when PSSBytes was last measured. Reading smaps_rollup walks the page tables of
	// every mapping with the process's mmap lock held, which costs milliseconds for processes
	// that map a large buffer pool and holds up the server's own mmap/munmap meanwhile, so the
	// sampler rations it (see pssCostFactor) and PSS may lag the other figures.
	PSSAt time.Time
	// DiskPartial means some process's /proc/PID/io could not be read (another user's process,
	// without CAP_SYS_PTRACE): ReadBytes/WriteBytes then undercount.
	DiskPartial bool
}

// CPUPercent is the server's share of the whole machine between two samples, the same scale as
// top's summary line, so a saturated 16-core machine reads 100 whatever the core count.
func CPUPercent(a, b Sample) float64 {
	wall := b.At.Sub(a.At).Seconds()
	if wall <= 0 {
		return 0
	}
	cpu := (b.CPUUser + b.CPUSystem) - (a.CPUUser + a.CPUSystem)
	return cpu / (wall * float64(runtime.NumCPU())) * 100
}

// pssCostFactor keeps PSS sampling under 0.5% of one CPU: after a PSS pass that took d, the next
// one waits at least d*pssCostFactor. smaps_rollup costs 0.5 ms for a PostgreSQL backend with
// 256MB of shared_buffers and 2-3 ms for mariadbd (BenchmarkSample), so with a 100-backend
// PostgreSQL PSS is read about every 10 s, and for MariaDB about every other second at one sample
// per second.
const pssCostFactor = 200

// ProcessSampler adds up a local server's processes from /proc.
//
// A process that leaves between two samples takes with it the CPU it used since the last one,
// and for a server that opens a backend per connection that is most of its CPU. The kernel
// hands that CPU to the parent when it reaps the child (cutime/cstime), so each process counts
// its own CPU plus its reaped children's, and when a listed process disappears while its parent
// is listed, the parent's growth in children's CPU takes over from what the child was last seen
// with. Disk I/O goes the same way, except that the kernel adds the child's bytes to the
// parent's own /proc/PID/io rather than to a separate children's figure (wait_task_zombie), so
// without the hand-over every backend's bytes would be counted twice once PostgreSQL's
// postmaster reaped it. The hand-over is exact when the pid func lists parents before their
// children (as a walk of the tree from its root does); the other order can, when a child is
// reaped mid-pass, count that child's last-seen figures twice.
//
// Cost (BenchmarkSample): about 30 µs per process per pass on the development VM, so at one sample
// per second 0.003% of one CPU per server process, 0.3% for a 100-backend PostgreSQL; PSS adds at
// most 0.5% (pssCostFactor).
type ProcessSampler struct {
	pids func() []int

	mu     sync.Mutex
	gen    uint64
	live   map[int]*procEntry
	parked map[int]*procEntry // left the pid list but still there (or a zombie): see retire
	// Handed to the parent once its children's CPU shows it has reaped them: see transfer.
	pending []pendingTransfer
	// What processes that left contributed, so totals never go backwards.
	goneUser, goneSys   uint64
	goneRead, goneWrite int64

	hasRollup      bool
	pss            int64
	pssAt, nextPSS time.Time

	buf  []byte
	path []byte
}

type procEntry struct {
	start uint64 // starttime in ticks since boot: tells a reused pid from the old process
	ppid  int
	gen   uint64
	// CPU in clock ticks: own plus reaped children's, as counted in the totals.
	user, sys uint64
	// Growth of the reaped children's CPU in the latest sample, not yet claimed by a transfer.
	childUser, childSys uint64
	cutime, cstime      uint64
	read, write         int64
	// Growth of read/write in the latest sample, not yet claimed by a transfer. Unlike
	// childUser/childSys it mixes the process's own I/O with its reaped children's.
	grownRead, grownWrite int64
}

type pendingTransfer struct {
	ppid        int
	pstart      uint64
	user, sys   uint64
	read, write int64
	// The CPU and the I/O are handed over separately: each is claimed when the parent's own
	// figure for it has grown enough.
	cpuDone, ioDone bool
	samples         int
	left            time.Time // when the child was found gone
}

// handOverWait is how long a departed child waits for its parent to reap it: at least two
// samples and this long. Two samples alone were 40 ms in a test sampling every 20 ms, and a
// shell on a loaded machine reaped later than that, so a child's I/O was counted twice (1.25x).
const handOverWait = 2 * time.Second

// NewProcessSampler samples the processes pids returns at each Sample; the set may change
// between samples, as backends come and go.
func NewProcessSampler(pids func() []int) *ProcessSampler {
	_, err := os.Stat("/proc/self/smaps_rollup") // Linux 4.14+
	return &ProcessSampler{
		pids:      pids,
		live:      map[int]*procEntry{},
		parked:    map[int]*procEntry{},
		hasRollup: err == nil,
		buf:       make([]byte, 4096),
	}
}

// Sample reads every process once and returns the cumulative totals now.
func (s *ProcessSampler) Sample() (Sample, error) {
	s.mu.Lock()
	defer s.mu.Unlock()

	now := time.Now()
	s.gen++
	out := Sample{At: now}
	pss := pssRound{due: s.hasRollup && !now.Before(s.nextPSS)}
	var statErr error
	for _, pid := range s.pids() {
		if e := s.live[pid]; e != nil && e.gen == s.gen {
			continue // listed twice
		}
		b, err := s.read(pid, "stat")
		if err != nil {
			if !gone(err) && statErr == nil {
				statErr = err
			}
			continue
		}
		st, ok := parseStat(b)
		if !ok {
			continue
		}
		s.readProcess(pid, st, &out, &pss)
	}
	s.sweep()
	s.total(&out)
	if pss.due {
		if pss.partial {
			pss.sum = 0 // a sum missing some processes would look like a real, smaller, figure
		}
		s.pss, s.pssAt = pss.sum, now
		s.nextPSS = now.Add(pss.cost * pssCostFactor)
	}
	out.PSSBytes, out.PSSAt = s.pss, s.pssAt

	if out.Processes == 0 && statErr != nil {
		return out, statErr
	}
	return out, nil
}

// pssRound is one sample's reading of smaps_rollup, when one is due: the sum, whether a
// process could not be read, and what the reading cost (which spaces out the next).
type pssRound struct {
	due, partial bool
	sum          int64
	cost         time.Duration
}

// readProcess counts one listed process into the sample: its CPU and I/O counters, its RSS and,
// when due, its PSS.
func (s *ProcessSampler) readProcess(pid int, st procStat, out *Sample, pss *pssRound) {
	e, fresh := s.entry(pid, st)
	e.gen = s.gen
	e.ppid = st.ppid
	e.childUser, e.childSys = st.cutime-min(e.cutime, st.cutime), st.cstime-min(e.cstime, st.cstime)
	e.cutime, e.cstime = st.cutime, st.cstime
	e.user, e.sys = st.utime+st.cutime, st.stime+st.cstime
	out.Processes++

	e.grownRead, e.grownWrite = 0, 0
	if b, err := s.read(pid, "io"); err == nil {
		if r, w, ok := parseIO(b); ok {
			if !fresh {
				e.grownRead, e.grownWrite = max(r-e.read, 0), max(w-e.write, 0)
			}
			e.read, e.write = r, w
		}
	} else if !gone(err) {
		out.DiskPartial = true
	}
	if b, err := s.read(pid, "status"); err == nil {
		if rss, ok := parseStatusRSS(b); ok {
			out.RSSBytes += rss
		}
	}
	if pss.due {
		t0 := time.Now()
		if b, err := s.read(pid, "smaps_rollup"); err == nil {
			if n, ok := parseSmapsRollupPSS(b); ok {
				pss.sum += n
			}
		} else if !gone(err) {
			pss.partial = true
		}
		pss.cost += time.Since(t0)
	}
}

// entry is the live entry of a listed process: the one it had, one parked when it left the
// list and now resumed, or a new one (fresh: its lifetime is its starting point, not growth).
// A pid reused by another process retires the old entry.
func (s *ProcessSampler) entry(pid int, st procStat) (e *procEntry, fresh bool) {
	e = s.live[pid]
	if e != nil && e.start != st.start {
		s.retire(pid, e)
		e = nil
	}
	if e != nil {
		return e, false
	}
	if p := s.parked[pid]; p != nil && p.start == st.start {
		// Back in the list: resume its counters instead of counting its lifetime again.
		delete(s.parked, pid)
		s.goneUser -= p.user
		s.goneSys -= p.sys
		s.goneRead -= p.read
		s.goneWrite -= p.write
		e = p
	} else {
		// Children reaped before we first saw it are part of its starting point.
		e = &procEntry{start: st.start, cutime: st.cutime, cstime: st.cstime}
		fresh = true
	}
	s.live[pid] = e
	return e, fresh
}

// sweep retires the processes this sample no longer listed and lets go of parked ones that
// have ended.
func (s *ProcessSampler) sweep() {
	for pid, e := range s.live {
		if e.gen != s.gen {
			s.retire(pid, e)
		}
	}
	for pid, p := range s.parked {
		if st, ok := s.stat(pid); !ok || st.start != p.start {
			delete(s.parked, pid)
			s.departed(p)
		}
	}
	s.transfer()
}

// total adds up the CPU and I/O of the live processes and of those gone.
func (s *ProcessSampler) total(out *Sample) {
	user, sys := s.goneUser, s.goneSys
	out.ReadBytes, out.WriteBytes = s.goneRead, s.goneWrite
	for _, e := range s.live {
		user += e.user
		sys += e.sys
		out.ReadBytes += e.read
		out.WriteBytes += e.write
	}
	tck := float64(clockTicks())
	out.CPUUser, out.CPUSystem = float64(user)/tck, float64(sys)/tck
}

// forcePSS makes the next Sample read PSS whatever the rationing says, for the figures that
// close a run.
func (s *ProcessSampler) forcePSS() {
	s.mu.Lock()
	s.nextPSS = time.Time{}
	s.mu.Unlock()
}

// retire folds a process that left the list into the gone totals. If it is still there (the pid
// func dropped it for a moment, or it is a zombie its parent has not reaped yet), it is parked:
// coming back must not count its lifetime a second time, and being reaped later must still hand
// it over to its parent.
func (s *ProcessSampler) retire(pid int, e *procEntry) {
	delete(s.live, pid)
	s.goneUser += e.user
	s.goneSys += e.sys
	s.goneRead += e.read
	s.goneWrite += e.write
	if st, ok := s.stat(pid); ok && st.start == e.start {
		s.parked[pid] = e
		return
	}
	s.departed(e)
}

// departed queues a process that is gone for good for hand-over to its parent, if the parent is
// one of ours.
func (s *ProcessSampler) departed(e *procEntry) {
	if p := s.live[e.ppid]; p != nil && p.gen == s.gen {
		s.pending = append(s.pending, pendingTransfer{ppid: e.ppid, pstart: p.start,
			user: e.user, sys: e.sys, read: e.read, write: e.write, left: time.Now()})
	}
}

// transfer takes a departed child's last-seen CPU and I/O out of the gone totals once its
// parent's children's CPU, and its I/O, have grown by at least as much, which they do when the
// parent reaps it (by the child's final figures, never less than the last-seen ones), so the
// totals never go down. The reaping may fall just after the parent's stat was read, so a child
// gets a second sample and handOverWait to show up; after that it stays in the gone totals (its figures after the
// last sample are then lost, as for a child whose parent does not wait for it).
//
// The parent's I/O growth may also be its own I/O, so the I/O can be claimed before the reaping
// shows; the reaping has happened by then (the child is gone), so its bytes reach the parent's
// figures by the next sample, and only a child that nobody waits for (SIGCHLD ignored) could then
// be undercounted, by at most its own bytes.
func (s *ProcessSampler) transfer() {
	kept := s.pending[:0]
	for _, t := range s.pending {
		p := s.live[t.ppid]
		if p == nil || p.gen != s.gen || p.start != t.pstart {
			continue
		}
		if !t.cpuDone && p.childUser >= t.user && p.childSys >= t.sys {
			p.childUser -= t.user
			p.childSys -= t.sys
			s.goneUser -= t.user
			s.goneSys -= t.sys
			t.cpuDone = true
		}
		if !t.ioDone && p.grownRead >= t.read && p.grownWrite >= t.write {
			p.grownRead -= t.read
			p.grownWrite -= t.write
			s.goneRead -= t.read
			s.goneWrite -= t.write
			t.ioDone = true
		}
		if t.cpuDone && t.ioDone {
			continue
		}
		if t.samples++; t.samples < 2 || time.Since(t.left) < handOverWait {
			kept = append(kept, t)
		}
	}
	s.pending = kept
}

func (s *ProcessSampler) stat(pid int) (procStat, bool) {
	b, err := s.read(pid, "stat")
	if err != nil {
		return procStat{}, false
	}
	return parseStat(b)
}

// gone is true for errors that mean the process ended while we looked.
func gone(err error) bool {
	return errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ESRCH)
}

// read returns /proc/PID/name in a buffer reused by the next read. It uses raw syscalls: os.Open
// would also try to register each file with the network poller, a wasted syscall per file.
func (s *ProcessSampler) read(pid int, name string) ([]byte, error) {
	s.path = append(s.path[:0], "/proc/"...)
	s.path = strconv.AppendInt(s.path, int64(pid), 10)
	s.path = append(s.path, '/')
	s.path = append(s.path, name...)
	var fd int
	var err error
	for {
		fd, err = syscall.Open(string(s.path), syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	n := 0
	for {
		if n == len(s.buf) {
			s.buf = append(s.buf, make([]byte, len(s.buf))...)
		}
		m, err := syscall.Read(fd, s.buf[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if m == 0 {
			return s.buf[:n], nil
		}
		n += m
	}
}

type procStat struct {
	state          byte
	ppid           int
	utime, stime   uint64
	cutime, cstime uint64 // CPU of children that have ended and been waited for
	start          uint64
}

// parseStat reads /proc/PID/stat. The command name (field 2) may hold spaces and parentheses, so
// fields are counted from the last ')'.
func parseStat(b []byte) (procStat, bool) {
	i := len(b) - 1
	for i >= 0 && b[i] != ')' {
		i--
	}
	if i < 0 {
		return procStat{}, false
	}
	var st procStat
	// Field numbers as in proc(5): 3 state, 4 ppid, 14 utime, 15 stime, 16 cutime, 17 cstime,
	// 22 starttime. cutime and cstime are signed in proc(5) but never negative.
	field := 2
	var got int
	for j := i + 1; j < len(b); {
		for j < len(b) && (b[j] == ' ' || b[j] == '\n') {
			j++
		}
		if j >= len(b) {
			break
		}
		k := j
		for k < len(b) && b[k] != ' ' && b[k] != '\n' {
			k++
		}
		field++
		tok := b[j:k]
		switch field {
		case 3:
			st.state = tok[0]
			got++
		case 4, 14, 15, 16, 17, 22:
			v, ok := parseUint(tok)
			if !ok {
				return procStat{}, false
			}
			switch field {
			case 4:
				st.ppid = int(v)
			case 14:
				st.utime = v
			case 15:
				st.stime = v
			case 16:
				st.cutime = v
			case 17:
				st.cstime = v
			case 22:
				st.start = v
			}
			got++
		}
		if field == 22 {
			break
		}
		j = k
	}
	if got != 7 {
		return procStat{}, false
	}
	return st, true
}

// parseStatusRSS returns VmRSS from /proc/PID/status in bytes. Kernel threads and zombies have
// no VmRSS line; they hold no user memory.
func parseStatusRSS(b []byte) (int64, bool) {
	kb, ok := lineValue(b, "VmRSS")
	return kb * 1024, ok
}

// parseIO returns read_bytes and write_bytes from /proc/PID/io: bytes this process caused to be
// read from or sent to the block layer (rchar/wchar would count page-cache hits and socket
// traffic too). Writes are charged to whoever dirtied the page, when it was dirtied.
func parseIO(b []byte) (read, write int64, ok bool) {
	r, ok1 := lineValue(b, "read_bytes")
	w, ok2 := lineValue(b, "write_bytes")
	return r, w, ok1 && ok2
}

// parseSmapsRollupPSS returns Pss from /proc/PID/smaps_rollup in bytes. PSS splits each shared
// page among the processes mapping it, so the sum over PostgreSQL's backends counts
// shared_buffers once, where the RSS sum counts it once per backend that touched it.
func parseSmapsRollupPSS(b []byte) (int64, bool) {
	kb, ok := lineValue(b, "Pss")
	return kb * 1024, ok
}

// lineValue finds the line "key: <number> ..." and returns the number. The colon is part of the
// match, so "Pss" does not match "Pss_Anon".
func lineValue(b []byte, key string) (int64, bool) {
	for len(b) > 0 {
		line := b
		if i := indexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		if len(line) <= len(key) || line[len(key)] != ':' || string(line[:len(key)]) != key {
			continue
		}
		j := len(key) + 1
		for j < len(line) && (line[j] == ' ' || line[j] == '\t') {
			j++
		}
		k := j
		for k < len(line) && line[k] >= '0' && line[k] <= '9' {
			k++
		}
		v, ok := parseUint(line[j:k])
		return int64(v), ok
	}
	return 0, false
}

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}

func parseUint(b []byte) (uint64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + uint64(c-'0')
	}
	return v, true
}

// clockTicks is USER_HZ, the unit of utime/stime. The kernel hands it to every process in the
// auxiliary vector (AT_CLKTCK), which is what sysconf(_SC_CLK_TCK) reads; Go has no sysconf
// without cgo. 100 is the value on every mainstream Linux architecture.
var clockTicks = sync.OnceValue(func() int64 {
	const atClkTck = 17
	b, err := os.ReadFile("/proc/self/auxv")
	w := strconv.IntSize / 8
	if err == nil {
		for i := 0; i+2*w <= len(b); i += 2 * w {
			var key, val uint64
			if w == 8 {
				key, val = binary.NativeEndian.Uint64(b[i:]), binary.NativeEndian.Uint64(b[i+w:])
			} else {
				key, val = uint64(binary.NativeEndian.Uint32(b[i:])), uint64(binary.NativeEndian.Uint32(b[i+w:]))
			}
			if key == atClkTck && val > 0 {
				return int64(val)
			}
			if key == 0 {
				break
			}
		}
	}
	return 100
})
