package study

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/engine/discovery"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/testserver"
)

// The studies start servers of their own; Main stops any a failed test left running.
func TestMain(m *testing.M) { testserver.Main(m) }

// installed lists the default engines present on this machine, skipping the test if none is.
func installed(t *testing.T) []string {
	t.Helper()
	var kinds []string
	for _, k := range []string{discovery.Postgres, discovery.MariaDB} {
		if _, err := discovery.Find(k, ""); err == nil {
			kinds = append(kinds, k)
		} else {
			t.Logf("%s not available: %v", k, err)
		}
	}
	if len(kinds) == 0 {
		t.Skip("neither PostgreSQL nor MariaDB is installed")
	}
	return kinds
}

func tiny(t *testing.T, kinds []string) Common {
	return Common{Engines: kinds, Time: 2 * time.Second, Threads: 2, Tables: 1, TableSize: 10000,
		BufferPoolBytes: 32 << 20, OutDir: t.TempDir(), WorkDir: openTempDir(t), Seed: 42}
}

// openTempDir is a t.TempDir that PostgreSQL's user can reach: the server runs as postgres when
// the tests run as root, and t.TempDir's parent is private to the test's user.
func openTempDir(t *testing.T) string {
	d := t.TempDir()
	for _, p := range []string{filepath.Dir(d), d} {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// TestMVCCStudy runs the study at a tiny scale on real servers and checks every per-phase figure
// the report is built from, and that PostgreSQL's before/after VACUUM comparison is stated.
func TestMVCCStudy(t *testing.T) {
	testserver.Integration(t)
	kinds := installed(t)
	c := tiny(t, kinds)
	doc, err := RunMVCC(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if !doc.Complete || len(doc.Engines) != len(kinds) {
		t.Fatalf("complete=%v, %d engines", doc.Complete, len(doc.Engines))
	}
	md, err := os.ReadFile(filepath.Join(c.OutDir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"mvcc.json", "report.html"} {
		if _, err := os.Stat(filepath.Join(c.OutDir, f)); err != nil {
			t.Error(err)
		}
	}
	for _, e := range doc.Engines {
		wantPage := map[string]int{discovery.Postgres: 8192, discovery.MariaDB: 16384}[e.Kind]
		if e.PageSize != wantPage {
			t.Errorf("%s page size %d, want %d", e.Kind, e.PageSize, wantPage)
		}
		wantScen := []string{ScenarioPurge}
		wantPhases := []string{PhaseFresh, PhaseUpdate, PhaseSelectAfterUpdate}
		if e.Kind == discovery.Postgres {
			wantScen = []string{ScenarioAutovacuumOff, ScenarioAutovacuumOn}
			wantPhases = append(wantPhases, PhaseVacuum, PhaseSelectAfterVacuum)
		}
		for _, name := range wantScen {
			sc := e.Scenario(name)
			if sc == nil {
				t.Fatalf("%s: no scenario %q", e.Kind, name)
			}
			if sc.DataBytes <= 0 {
				t.Errorf("%s %s: data size %d", e.Kind, name, sc.DataBytes)
			}
			for _, key := range wantPhases {
				p := sc.Phase(key)
				if p == nil {
					t.Fatalf("%s %s: no phase %s", e.Kind, name, key)
				}
				if p.Error != "" {
					t.Errorf("%s %s %s: %s", e.Kind, name, key, p.Error)
				}
				if p.Kind == "vacuum" {
					if p.PagesRequested <= 0 || p.DeadTuplesAfter == nil || *p.DeadTuplesAfter != 0 {
						t.Errorf("%s %s VACUUM: %d pages, dead after %v", e.Kind, name, p.PagesRequested, p.DeadTuplesAfter)
					}
					continue
				}
				if p.Queries <= 0 || p.PagesRequestedPerQuery4K <= 0 || p.ResultFile == "" {
					t.Errorf("%s %s %s: %d queries, %v 4K pages per query, result %q", e.Kind, name, key, p.Queries, p.PagesRequestedPerQuery4K, p.ResultFile)
				}
				// The two units differ by exactly the page size.
				if got, want := p.PagesRequestedPerQuery4K, p.PagesRequestedPerQuery*float64(e.PageSize)/4096; got < want*0.999-0.001 || got > want*1.001+0.001 {
					t.Errorf("%s %s %s: %v 4K pages vs %v engine pages", e.Kind, name, key, got, p.PagesRequestedPerQuery)
				}
				if key == PhaseUpdate {
					if p.WALBytesPerQuery <= 0 || p.BytesWrittenPerQuery < p.WALBytesPerQuery {
						t.Errorf("%s %s UPDATE: %v WAL bytes, %v bytes written per UPDATE", e.Kind, name, p.WALBytesPerQuery, p.BytesWrittenPerQuery)
					}
					if e.Kind == discovery.Postgres && (p.HOTRatio == nil || p.Updates == nil || *p.Updates <= 0 || p.DeadTuplesAfter == nil || *p.DeadTuplesAfter <= 0) {
						t.Errorf("postgres %s UPDATE: HOT %v of %v, dead %v", name, p.HOTRatio, p.Updates, p.DeadTuplesAfter)
					}
					if e.Kind != discovery.Postgres && (p.HistoryListMax == nil || *p.HistoryListMax <= 0) {
						t.Errorf("%s UPDATE: history list max %v", e.Kind, p.HistoryListMax)
					}
				}
			}
		}
		if e.Kind == discovery.Postgres {
			for _, name := range wantScen {
				v := findEffect(doc.Effects, DesignPGVacuum, name)
				if v == nil || v.Before == nil || v.After == nil {
					t.Fatalf("no VACUUM comparison for %s: %+v", name, doc.Effects)
				}
				want := "VACUUM did not lower"
				if *v.After < *v.Before*(1-change) {
					want = "VACUUM cut"
				} else if *v.After < *v.Before {
					want = "VACUUM lowered"
				}
				if !strings.HasPrefix(v.Statement, want) {
					t.Errorf("statement %q does not match %v → %v", v.Statement, *v.Before, *v.After)
				}
				if !strings.Contains(string(md), v.Statement) {
					t.Errorf("report.md lacks %q", v.Statement)
				}
				t.Logf("%s", v.Statement)
			}
		}
	}
}

var devNum = regexp.MustCompile(`\((\d+:\d+)\)`)

// TestBandwidthStudy caps two steps (25M and uncapped) on real servers and checks the device
// stayed within the cap, then that nothing of the throttling is left on the machine.
func TestBandwidthStudy(t *testing.T) {
	testserver.Integration(t)
	if _, err := CheckBandwidth(); err != nil {
		t.Skipf("bandwidth study not possible here: %v", err)
	}
	kinds := installed(t)
	c := tiny(t, kinds)
	// Somewhat more data than the buffer pool, so that the capped step really waits on the device.
	c.Time, c.TableSize = 3*time.Second, 150000
	c.WaitEvery = 100 * time.Millisecond
	doc, err := RunBandwidth(context.Background(), BandwidthOptions{Common: c, Limits: []string{"25M", "max"}, DeviceBytes: 1 << 30, TPCHScale: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	assertNoThrottleLeft(t, c.WorkDir, doc)
	if !doc.Complete {
		t.Fatalf("incomplete: %s", doc.Error)
	}
	for _, e := range doc.Engines {
		if len(e.Steps) != 2 {
			t.Fatalf("%s: %d steps", e.Kind, len(e.Steps))
		}
		capped, free := e.Steps[0], e.Steps[1]
		t.Logf("%s: 25M: %.0f TPS, device read %.1f MB/s (peak %.1f), write %.1f MB/s (peak %.1f), probe %s; max: %.0f TPS, probe %s",
			e.Kind, capped.TPS, capped.DeviceReadBps/1e6, capped.DeviceReadPeakBps/1e6, capped.DeviceWriteBps/1e6, capped.DeviceWritePeakBps/1e6,
			capped.Proof, free.TPS, free.Proof)
		if !capped.ProofOK || capped.WithinCap == nil || !*capped.WithinCap {
			t.Errorf("%s at 25M: proof %v (%s), within cap %v", e.Kind, capped.ProofOK, capped.Proof, capped.WithinCap)
		}
		if capped.DeviceReadBps > 28e6 || capped.DeviceWriteBps > 28e6 {
			t.Errorf("%s at 25M: device moved %.1f MB/s read, %.1f MB/s write", e.Kind, capped.DeviceReadBps/1e6, capped.DeviceWriteBps/1e6)
		}
		if capped.TPS <= 0 || free.TPS <= 0 || capped.PagesRequestedPerSec4K <= 0 {
			t.Errorf("%s: TPS %v / %v, pages/s %v", e.Kind, capped.TPS, free.TPS, capped.PagesRequestedPerSec4K)
		}
		for _, st := range e.Steps {
			if q := st.Extra["tpch_q18"]; q.Error != "" || q.Seconds <= 0 {
				t.Errorf("%s at %s: TPC-H Q18 %+v", e.Kind, st.Limit, q)
			}
		}
		for _, st := range e.Steps {
			checkDiskAgainstDevice(t, e.Kind, st)
			if r, err := result.Read(filepath.Join(c.OutDir, st.ResultFile)); err != nil || r.Waits == nil || r.Waits.Sessions == 0 {
				t.Errorf("%s at %s: the step's run was not sampled (--instrument): %v", e.Kind, st.Limit, err)
			}
		}
		if free.WithinCap != nil || free.Probe == nil || free.Probe.WriteBps <= 28e6 {
			t.Errorf("%s uncapped step: within %v, probe %+v", e.Kind, free.WithinCap, free.Probe)
		}
	}
	md, _ := os.ReadFile(filepath.Join(c.OutDir, "report.md"))
	for _, want := range []string{"| 25M |", "| max |", "TPC-H Q18 seconds"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
}

// checkDiskAgainstDevice sets a step's disk figures, as its run records them, beside the device's
// own counters sampled apart over the same measured window: they must agree within a second's
// worth at the cap (the two windows' edges are a few milliseconds apart, while the engine writes
// in the background) plus 5%. A step that counted the settle's flush of what earlier steps left
// dirty writes tens of MB more.
func checkDiskAgainstDevice(t *testing.T, kind string, st Step) {
	t.Helper()
	t.Logf("%s at %s: disk figures (%s) read %.1f MB, wrote %.1f MB; device sampled apart: read %.1f MB, wrote %.1f MB",
		kind, st.Limit, st.ServerDiskSource, float64(st.ServerReadBytes)/1e6, float64(st.ServerWriteBytes)/1e6,
		float64(st.DeviceReadBytes)/1e6, float64(st.DeviceWriteBytes)/1e6)
	if !strings.HasPrefix(st.ServerDiskSource, "block device loop") {
		t.Errorf("%s at %s: disk figures from %q, not the server's device", kind, st.Limit, st.ServerDiskSource)
	}
	slack := func(b int64) float64 { return 26.2e6 + 0.05*float64(b) }
	if d := st.ServerWriteBytes - st.DeviceWriteBytes; math.Abs(float64(d)) > slack(st.DeviceWriteBytes) {
		t.Errorf("%s at %s: the run's figures wrote %d bytes, the device %d", kind, st.Limit, st.ServerWriteBytes, st.DeviceWriteBytes)
	}
	if d := st.ServerReadBytes - st.DeviceReadBytes; math.Abs(float64(d)) > slack(st.DeviceReadBytes) {
		t.Errorf("%s at %s: the run's figures read %d bytes, the device %d", kind, st.Limit, st.ServerReadBytes, st.DeviceReadBytes)
	}
}

// TestBandwidthStudyFailure interrupts the study while its server starts and checks that the
// device, its mount and the cap are gone all the same.
func TestBandwidthStudyFailure(t *testing.T) {
	testserver.Integration(t)
	if _, err := CheckBandwidth(); err != nil {
		t.Skipf("bandwidth study not possible here: %v", err)
	}
	kinds := installed(t)
	c := tiny(t, kinds[:1])
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	doc, err := RunBandwidth(ctx, BandwidthOptions{Common: c, Limits: []string{"25M"}, DeviceBytes: 512 << 20})
	if err == nil {
		t.Fatal("the study finished within 1.5 s; the interruption tested nothing")
	}
	t.Logf("interrupted: %v", err)
	assertNoThrottleLeft(t, c.WorkDir, doc)
}

func assertNoThrottleLeft(t *testing.T, work string, doc *Bandwidth) {
	t.Helper()
	if ents, _ := os.ReadDir(work); len(ents) > 0 {
		t.Errorf("left in the work dir: %v", ents)
	}
	b, _ := os.ReadFile("/proc/self/mountinfo")
	if strings.Contains(string(b), work) {
		t.Errorf("a mount under %s is left", work)
	}
	files, _ := filepath.Glob("/sys/block/loop*/loop/backing_file")
	for _, f := range files {
		if bf, err := os.ReadFile(f); err == nil && strings.HasPrefix(string(bf), work) {
			t.Errorf("loop device left: %s", f)
		}
	}
	if doc == nil {
		return
	}
	for _, e := range doc.Engines {
		m := devNum.FindStringSubmatch(e.Device)
		if m == nil {
			continue
		}
		for _, f := range []string{"blkio.throttle.read_bps_device", "blkio.throttle.write_bps_device"} {
			if b, err := os.ReadFile(filepath.Join("/sys/fs/cgroup/blkio", f)); err == nil && strings.Contains(string(b), m[1]+" ") {
				t.Errorf("cap for %s left in %s", m[1], f)
			}
		}
	}
	if m, _ := filepath.Glob("/sys/fs/cgroup/fairbench-*"); len(m) > 0 {
		for _, d := range m {
			if strings.HasPrefix(filepath.Base(d), "fairbench-"+strconv.Itoa(os.Getpid())+"-") {
				t.Errorf("cgroup left: %s", d)
			}
		}
	}
}
