package history

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/result"
)

func write(t *testing.T, dir, name string, r *result.Result) {
	t.Helper()
	if err := result.Write(filepath.Join(dir, "results", name), r); err != nil {
		t.Fatal(err)
	}
}

func res(engine, workload string, tps float64, at time.Time, bufferPool string) *result.Result {
	return &result.Result{Complete: true, StartedAt: at, ToolVersion: "0.1.0-dev", ToolCommit: "4479005c0fee", Engine: result.Engine{Kind: engine, Version: engine + " 1.0"},
		Workload: result.Workload{Name: workload, Options: map[string]string{"tables": "4"}}, Threads: 4, TPS: tps,
		LatencyMS: result.Latency{P99: 5}, Server: &result.Server{Settings: map[string]string{"buffer_pool": bufferPool}}}
}

// Three compare directories, given newest first: three rows per engine and workload, oldest first,
// and a fingerprint that changes exactly when a setting did.
func TestLoadThreeDirectories(t *testing.T) {
	base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var dirs []string
	for i, pool := range []string{"128M", "128M", "16M"} {
		d := t.TempDir()
		at := base.Add(time.Duration(i) * 24 * time.Hour)
		write(t, d, "postgres-oltp_read_write.json", res("postgres", "oltp_read_write", 1000+float64(i), at, pool))
		write(t, d, "mariadb-oltp_read_write.json", res("mariadb", "oltp_read_write", 900+float64(i), at, pool))
		dirs = append([]string{d}, dirs...) // newest first on purpose
	}
	lines, err := Load(dirs)
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2 (one per engine)", len(lines))
	}
	for _, l := range lines {
		if len(l.Points) != 3 {
			t.Fatalf("%s: %d points, want 3", l.Key, len(l.Points))
		}
		p := l.Points
		if !(p[0].StartedAt < p[1].StartedAt && p[1].StartedAt < p[2].StartedAt) {
			t.Errorf("%s: not oldest first: %s %s %s", l.Key, p[0].StartedAt, p[1].StartedAt, p[2].StartedAt)
		}
		if p[0].ToolCommit != "4479005c0fee" {
			t.Errorf("%s: fairbench commit %q, want the result's", l.Key, p[0].ToolCommit)
		}
		if p[0].Fingerprint != p[1].Fingerprint || p[1].Fingerprint == p[2].Fingerprint {
			t.Errorf("%s: fingerprints %s %s %s: want equal, equal, different", l.Key, p[0].Fingerprint, p[1].Fingerprint, p[2].Fingerprint)
		}
	}
}

// A run whose read statements' plans differ from the previous run's with plans names them, also
// past a run that recorded none; the first run and an unchanged one name nothing.
func TestPlanChangesAlongALine(t *testing.T) {
	base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	d := t.TempDir()
	for i, search := range []string{"item: index lookup (item_name)", "item: index lookup (item_name)", "", "item: full scan"} {
		r := res("postgres", "shop", 1000, base.Add(time.Duration(3-i)*time.Hour), "128M") // written newest first
		if search != "" {
			r.Dataset = &result.Dataset{Answers: []result.Answer{{Transaction: "get", Statement: 1, Plan: "item: index lookup (item_pkey)"},
				{Transaction: "search", Statement: 1, Plan: search}}}
		}
		write(t, d, fmt.Sprintf("run%d.json", i), r)
	}
	lines, err := Load([]string{d})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range lines[0].Points {
		got = append(got, strings.Join(p.PlansChanged, ","))
	}
	// Oldest first: the full scan (written last, started first), none, the two index lookups.
	if want := []string{"", "", "search #1", ""}; !slices.Equal(got, want) {
		t.Errorf("plans changed per run %q, want %q", got, want)
	}
}

func TestLoadErrors(t *testing.T) {
	for _, p := range []string{t.TempDir(), filepath.Join(t.TempDir(), "missing")} {
		if _, err := Load([]string{p}); err == nil {
			t.Errorf("Load(%s) accepted", p)
		}
	}
}

// A capacity search is a line of its own, its figure the capacity found; two searches of the
// same test share a fingerprint although their last probes ran at different rates.
func TestCapacityLine(t *testing.T) {
	base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	d := t.TempDir()
	for i, perS := range []float64{4100, 0} {
		r := res("postgres", "oltp_read_write", 4000+float64(i), base.Add(time.Duration(i)*time.Hour), "128M")
		r.Rate = 4200 + float64(i)*17
		r.Capacity = &result.Capacity{SLO: "p99<=10ms", PerS: perS, Reached: "confirm"}
		if perS == 0 {
			r.Capacity.Reached = "no rate"
		}
		write(t, d, "postgres-oltp_read_write-"+string(rune('1'+i))+".json", r)
	}
	write(t, d, "postgres-oltp_read_write-closed.json", res("postgres", "oltp_read_write", 900, base, "128M"))
	lines, err := Load([]string{d})
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 2 {
		t.Fatalf("%d lines, want the throughput's and the capacity's", len(lines))
	}
	l := lines[0]
	if l.Key.Label != "capacity at p99 ≤ 10ms" {
		l = lines[1]
	}
	p := l.Points
	if l.Key.Label != "capacity at p99 ≤ 10ms" || len(p) != 2 || p[0].TPS != 4100 || p[1].Capacity != "no rate met the objective" || p[0].Fingerprint != p[1].Fingerprint {
		t.Errorf("capacity line %s: %+v", l.Key, p)
	}
}
