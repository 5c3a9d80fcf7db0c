package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fairbench/fairbench/internal/cgroup"
	"github.com/fairbench/fairbench/internal/ownfile"
	"github.com/fairbench/fairbench/internal/throttle"
)

// A fairbench killed outright (kill -9, the OOM killer) runs no Stop: its server keeps running,
// with its data directory and cgroup. So every server has a record naming its owner (PID and
// start time, which tells a reused PID from the owner) and what to remove, and the next Start
// in any fairbench reaps the servers whose owner is gone. Servers of a live fairbench, which may
// be running beside this one, are left alone.

// RecordDir holds one record per throwaway server on this machine. It is root's
// /run/fairbench/servers (another user's: a directory of its own under the temp dir), made
// private (mode 0700) and used only while it belongs to this user and nobody else can write to
// it: the reaper kills processes and removes directories that records name, so a record another
// local user could plant (a world-writable /tmp/fairbench-servers, made first after a reboot)
// would make root kill and remove whatever it named.
var RecordDir = defaultRecordDir()

func defaultRecordDir() string {
	if os.Geteuid() == 0 {
		return "/run/fairbench/servers"
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("fairbench-servers-%d", os.Geteuid()))
}

// ReapLog receives one line per server reaped at Start.
var ReapLog io.Writer = os.Stderr

var reapOnce sync.Once

type record struct {
	Owner       string   `json:"owner"` // "PID STARTTIME"
	Kind        string   `json:"kind"`
	Port        int      `json:"port,omitempty"`
	ServerPID   int      `json:"server_pid,omitempty"`
	ServerStart uint64   `json:"server_start,omitempty"`
	RunDir      string   `json:"run_dir"`
	MountPoint  string   `json:"mount_point,omitempty"`
	SockDir     string   `json:"sock_dir,omitempty"`
	Cgroups     []string `json:"cgroups,omitempty"`
	// CgroupDirs maps each controller to its directory (see cgroup.Group.Dirs), CgroupV2 the
	// hierarchy, for another fairbench measuring this server (run --target on its DSN).
	CgroupDirs map[string]string `json:"cgroup_dirs,omitempty"`
	CgroupV2   bool              `json:"cgroup_v2,omitempty"`
	DataDir    string            `json:"data_dir,omitempty"`
	// Template marks a template data directory (template.go): no server, never listed as one.
	Template bool `json:"template,omitempty"`
}

func ownerTag() string {
	p, _ := readProc(os.Getpid())
	return fmt.Sprintf("%d %d", os.Getpid(), p.start)
}

func ownerAlive(tag string) bool {
	var pid int
	var start uint64
	if _, err := fmt.Sscanf(tag, "%d %d", &pid, &start); err != nil {
		return false
	}
	p, ok := readProc(pid)
	return ok && p.start == start && !dead(p)
}

// writeRecord writes (or rewrites, once the server process exists) the server's record.
func (s *Server) writeRecord() error {
	s.mu.Lock()
	rec := record{Owner: ownerTag(), Kind: s.Kind, Port: s.port, RunDir: s.hostRun, MountPoint: s.mountPoint, SockDir: s.sockDir, Template: s.template}
	if s.child != nil && s.child.server {
		if p, ok := readProc(s.child.cmd.Process.Pid); ok {
			rec.ServerPID, rec.ServerStart = p.pid, p.start
		}
	}
	rec.DataDir = s.DataDir
	if s.cg != nil {
		for _, d := range s.cg.Dirs {
			rec.Cgroups = append(rec.Cgroups, d)
		}
		rec.CgroupDirs, rec.CgroupV2 = s.cg.Dirs, s.cg.V2
	}
	if s.record == "" {
		s.record = filepath.Join(RecordDir, fmt.Sprintf("%d-%s.json", os.Getpid(), filepath.Base(s.hostRun)))
		if s.template {
			s.record = filepath.Join(RecordDir, fmt.Sprintf("template-%d-%s.json", os.Getpid(), filepath.Base(s.hostRun)))
		}
	}
	path := s.record
	s.mu.Unlock()
	return writeRecordFile(path, rec)
}

// writeRecordFile writes a record atomically, so a reaper never reads half of one, through a
// temporary file of an unpredictable name (a link planted at a fixed name is never followed).
func writeRecordFile(path string, rec record) error {
	if err := ownfile.MakePrivateDir(RecordDir); err != nil {
		return fmt.Errorf("server records: %w", err)
	}
	b, _ := json.Marshal(rec)
	f, err := os.CreateTemp(RecordDir, ".record-*")
	if err != nil {
		return fmt.Errorf("server record: %w", err)
	}
	_, err = f.Write(b)
	if err = errors.Join(err, f.Close()); err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("server record: %w", err)
	}
	return nil
}

// records lists the records in RecordDir that this user wrote; none if the directory is not its
// own private one (ownfile.PrivateDir).
func records() []string {
	if ownfile.PrivateDir(RecordDir) != nil {
		return nil
	}
	files, _ := filepath.Glob(filepath.Join(RecordDir, "*.json"))
	return slices.DeleteFunc(files, func(f string) bool { return !ownfile.Regular(f) })
}

// ReapStale stops and removes every server whose fairbench is gone: its processes, cgroup,
// mount, data directory and record. It returns one line per server reaped.
func ReapStale() ([]string, error) {
	if err := ownfile.PrivateDir(RecordDir); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("server records not read: %w", err)
	}
	files := records()
	var reaped []string
	var errs []error
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var rec record
		if err := json.Unmarshal(b, &rec); err != nil {
			errs = append(errs, fmt.Errorf("server record %s: %w", f, err))
			continue
		}
		if ownerAlive(rec.Owner) {
			continue
		}
		if err := rec.check(); err != nil {
			errs = append(errs, fmt.Errorf("server record %s left alone: %w", f, err))
			continue
		}
		if err := reap(rec); err != nil {
			errs = append(errs, err)
			continue
		}
		for _, file := range []string{f, passwordFileOf(f)} {
			if err := os.Remove(file); err != nil && !os.IsNotExist(err) {
				errs = append(errs, err)
			}
		}
		owner, _, _ := strings.Cut(rec.Owner, " ")
		if rec.Template {
			reaped = append(reaped, fmt.Sprintf("removed a %s template data directory left by fairbench pid %s, which is gone (%s)", rec.Kind, owner, rec.RunDir))
			continue
		}
		reaped = append(reaped, fmt.Sprintf("reaped a %s server left by fairbench pid %s, which is gone (port %d, %s)", rec.Kind, owner, rec.Port, rec.RunDir))
	}
	// Groups made by a fairbench killed before it wrote their record.
	running := func(pid int) bool {
		return syscall.Kill(pid, 0) == nil || errors.Is(syscall.Kill(pid, 0), syscall.EPERM)
	}
	if orphans := cgroup.Orphans("fairbench", running); len(orphans) > 0 {
		if err := cgroup.RemoveDirs(orphans); err != nil {
			errs = append(errs, err)
		} else {
			reaped = append(reaped, "removed cgroups left by a fairbench that is gone: "+strings.Join(orphans, ", "))
		}
	}
	return reaped, errors.Join(errs...)
}

// check refuses a record that names anything Start does not make: the reaper acts only on the
// directories, mount points and cgroups fairbench creates, whatever a record says.
func (rec record) check() error {
	for _, d := range []string{rec.RunDir, rec.SockDir, rec.MountPoint} {
		if d != "" && !madeByStart(d, rec.Kind) {
			return fmt.Errorf("%s is no directory fairbench makes", d)
		}
	}
	if rec.DataDir != "" && (rec.RunDir == "" || !within(rec.DataDir, rec.RunDir)) {
		return fmt.Errorf("data directory %s is not inside the run directory %s", rec.DataDir, rec.RunDir)
	}
	for _, g := range rec.Cgroups {
		if !cgroup.IsMade(g, "fairbench-") {
			return fmt.Errorf("%s is no cgroup fairbench makes", g)
		}
	}
	return nil
}

// within says whether path is dir or lies beneath it (both cleaned, absolute).
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && filepath.IsAbs(path) && rel != ".." && !strings.HasPrefix(rel, "../")
}

func reap(rec record) error {
	var errs []error
	if rec.ServerPID != 0 {
		if p, ok := readProc(rec.ServerPID); ok && p.start == rec.ServerStart && !dead(p) {
			tree := processTree(rec.ServerPID)
			shm := sharedMemoryFiles(tree)
			killProcs(tree, syscall.SIGKILL)
			if !waitGone(tree, 5*time.Second) {
				errs = append(errs, fmt.Errorf("%s server pid %d survived SIGKILL", rec.Kind, rec.ServerPID))
			}
			for _, f := range shm {
				_ = os.Remove(f)
			}
		}
	}
	// Patroni starts its postgres detached (setsid, reparented away), so the tree above misses it.
	if pm, ok := postmasterOf(rec.DataDir); ok {
		tree := processTree(pm.pid)
		killProcs(tree, syscall.SIGKILL)
		if !waitGone(tree, 5*time.Second) {
			errs = append(errs, fmt.Errorf("postgres pid %d of %s survived SIGKILL", pm.pid, rec.DataDir))
		}
	}
	// The cgroup holds every process of the server, also ones the tree above missed.
	if err := cgroup.RemoveDirs(rec.Cgroups); err != nil {
		errs = append(errs, err)
	}
	if rec.MountPoint != "" {
		_ = syscall.Unmount(rec.MountPoint, syscall.MNT_DETACH)
		if err := os.Remove(rec.MountPoint); err != nil && !os.IsNotExist(err) {
			errs = append(errs, err)
		}
	}
	for _, d := range []string{rec.RunDir, rec.SockDir} {
		// Only directories Start makes: a corrupt record must not remove anything else.
		if !madeByStart(d, rec.Kind) {
			continue
		}
		if err := os.RemoveAll(d); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func reapAtStart(log io.Writer) {
	lines, err := ReapStale()
	for _, l := range lines {
		fmt.Fprintln(log, "fairbench: "+l)
	}
	if err != nil {
		fmt.Fprintf(log, "fairbench: reaping servers left by a killed fairbench: %v\n", err)
	}
	reapDevicesAtStart(log)
}

// reapDevicesAtStart tears down the loop devices (--device, --disk-bandwidth) a killed fairbench
// left in the temporary directory, with the servers on them: otherwise only a later run that
// makes a device there would, and a user who never does keeps a mounted 2 GB file. Devices of a
// fairbench still running are left alone; a user who is not root can make none, so has none.
func reapDevicesAtStart(log io.Writer) {
	if throttle.RequireRoot() != nil {
		return
	}
	reaped, err := throttle.ReapStale("")
	for _, d := range reaped {
		fmt.Fprintf(log, "fairbench: removed the loop device %s, left by a killed fairbench\n", d)
	}
	if err != nil {
		fmt.Fprintf(log, "fairbench: reaping loop devices left by a killed fairbench: %v\n", err)
	}
}

// madeByStart says whether d is named as Start names its directories (fairbench-KIND-*, KIND-*
// inside a chroot's /var/lib/fairbench, fbsock-*).
func madeByStart(d, kind string) bool {
	if d == "" || !filepath.IsAbs(d) {
		return false
	}
	b := filepath.Base(d)
	return strings.HasPrefix(b, "fairbench-"+kind+"-") || strings.HasPrefix(b, "fbsock-") ||
		(strings.HasPrefix(b, kind+"-") && filepath.Base(filepath.Dir(d)) == "fairbench")
}

// Local is a server running on this machine: one a fairbench started and still runs (compare,
// serve; FindLocal), or any other found by its listening socket (FindListening).
type Local struct {
	Kind, DataDir string
	Group         *cgroup.Group // its own cgroup; nil where it has none
	// PIDs is its process tree now, for /proc sampling where it has no cgroup of its own; nil
	// for a throwaway server, which has one.
	PIDs func() []int
	// Found says how the server was found, for the run's log; PID is its first process (0 for a
	// throwaway server).
	Found string
	PID   int
}

// FindLocal finds the live throwaway server listening on the loopback port, so a run given its
// DSN measures it as compare does: from its cgroup.
func FindLocal(port int) (*Local, bool) {
	for _, f := range records() {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var rec record
		if json.Unmarshal(b, &rec) != nil || rec.Port != port || !ownerAlive(rec.Owner) {
			continue
		}
		if p, ok := readProc(rec.ServerPID); !ok || p.start != rec.ServerStart || dead(p) {
			continue
		}
		l := &Local{Kind: rec.Kind, DataDir: rec.DataDir}
		if len(rec.CgroupDirs) > 0 {
			l.Group, _ = cgroup.Reopen(rec.CgroupV2, rec.CgroupDirs)
		}
		return l, true
	}
	return nil, false
}

// OthersLive lists the throwaway servers on this machine that another live fairbench runs (a
// second compare, a serve): what a measurement here shares the machine with. One line each.
// Servers on the ports named are left out: they are what is measured (compare --targets on
// servers a fairbench serve runs).
func OthersLive(measured ...int) []string {
	var out []string
	for _, f := range records() {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var rec record
		if json.Unmarshal(b, &rec) != nil || !ownerAlive(rec.Owner) || rec.Template {
			continue
		}
		owner, _, _ := strings.Cut(rec.Owner, " ")
		if owner == strconv.Itoa(os.Getpid()) || slices.Contains(measured, rec.Port) {
			continue
		}
		out = append(out, fmt.Sprintf("a %s server of fairbench pid %s (port %d)", rec.Kind, owner, rec.Port))
	}
	return out
}
