package result

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func sample() *Result {
	return &Result{Schema: SchemaVersion, ToolVersion: "test", Complete: true, StartedAt: time.Unix(1700000000, 0).UTC(),
		Engine: Engine{Kind: "postgres", Version: "PostgreSQL 15"}, Workload: Workload{Name: "oltp_read_write"},
		Threads: 8, DurationS: 10, Transactions: 1000, TPS: 100, Intervals: []Interval{{}}}
}

func TestWriteRead(t *testing.T) {
	p := filepath.Join(t.TempDir(), "r.json")
	if err := Write(p, sample()); err != nil {
		t.Fatal(err)
	}
	r, err := Read(p)
	if err != nil || r.TPS != 100 || r.Engine.Kind != "postgres" || !r.Complete {
		t.Fatalf("read back %+v, %v", r, err)
	}
}

func TestDecodeErrors(t *testing.T) {
	cases := []struct{ name, data, errHas string }{
		{"empty", "", "not a fairbench results file"},
		{"not JSON", "threads: 8", "not a fairbench results file"},
		{"wrong type", `{"threads": "eight"}`, "not a fairbench results file"},
		{"newer schema", `{"schema": 99}`, "upgrade fairbench"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Decode([]byte(c.data), "x.json")
			if err == nil || !strings.Contains(err.Error(), c.errHas) || !strings.Contains(err.Error(), "x.json") {
				t.Fatalf("err = %v, want one naming x.json and containing %q", err, c.errHas)
			}
		})
	}
}

// FuzzDecode: no results file, however mangled, panics the reader, and what it accepts survives
// a round trip through the writer's encoding unchanged.
func FuzzDecode(f *testing.F) {
	good, _ := json.Marshal(sample())
	f.Add(good)
	f.Add([]byte(`{"schema": 1, "complete": false, "error": "interrupted", "intervals": null}`))
	f.Add([]byte(`{"schema": 2}`))
	f.Add([]byte(`{"by_kind": {"new_order": {"transactions": 5}}, "ramp": {"steps": [{"threads": 2}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Decode(data, "fuzz.json")
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		again, err := json.Marshal(r)
		if err != nil {
			// NaN and Inf cannot come out of JSON, so whatever was read must encode again.
			t.Fatalf("accepted a document it cannot write back: %v", err)
		}
		r2, err := Decode(again, "again.json")
		if err != nil {
			t.Fatalf("cannot read its own encoding: %v", err)
		}
		if a, b := mustJSON(t, r), mustJSON(t, r2); a != b {
			t.Fatalf("round trip changed the result:\n%s\n%s", a, b)
		}
	})
}

func mustJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A results file is validated on read: what no run measures is refused with a line naming it, so
// that a report neither ranks a crafted -100 TPS first nor renders an empty file.
func TestDecodeRefusesImpossibleResults(t *testing.T) {
	valid := `"schema":3,"engine":{"kind":"postgres"},"workload":{"name":"oltp_read_only"}`
	cases := []struct{ name, doc, want string }{
		{"all null", `{"schema":null,"engine":null,"workload":null,"tps":null}`, "not a fairbench results file"},
		{"empty object", `{}`, "not a fairbench results file"},
		{"negative tps", `{` + valid + `,"tps":-100}`, "tps is -100"},
		{"negative threads", `{` + valid + `,"threads":-2}`, "threads is -2"},
		{"negative p99", `{` + valid + `,"latency_ms":{"p99":-1}}`, "latency_ms.p99 is -1"},
		{"negative interval", `{` + valid + `,"intervals":[{"t":1,"tps":-5}]}`, "interval 1 has a negative figure"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Decode([]byte(c.doc), "x.json")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Decode(%s) = %v, want an error with %q", c.doc, err, c.want)
			}
		})
	}
	if _, err := Decode([]byte(`{`+valid+`,"tps":12.5,"threads":4}`), "ok.json"); err != nil {
		t.Errorf("a plain valid result was refused: %v", err)
	}
}

func TestReadRefusesHugeFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "huge.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxFileBytes + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := Read(path); err == nil || !strings.Contains(err.Error(), "larger than 64 MiB") {
		t.Errorf("Read of a file over the limit = %v, want it refused by size", err)
	}
}

func TestFailMarksIncompleteOnce(t *testing.T) {
	r := &Result{Complete: true}
	r.Fail(nil)
	if !r.Complete {
		t.Fatal("Fail(nil) marked the result incomplete")
	}
	r.Fail(errors.New("reading the server's figures after the run: server restarted"))
	r.Fail(errors.New("a later error"))
	if r.Complete || !strings.Contains(r.Error, "server restarted") {
		t.Errorf("after Fail: complete %v, error %q; want incomplete with the first reason", r.Complete, r.Error)
	}
}

// A workload file's results are named by its name:, not its path.
func TestWorkloadIDOfAFile(t *testing.T) {
	r := &Result{Workload: Workload{Name: "/home/me/ycsb-a.yaml", Title: "ycsb_a"}}
	if got := r.WorkloadID(); got != "ycsb_a" {
		t.Errorf("WorkloadID = %q, want the file's name", got)
	}
	r.Step = "hot"
	if got := r.WorkloadID(); got != "ycsb_a (hot)" {
		t.Errorf("WorkloadID = %q", got)
	}
	if got := (&Result{Workload: Workload{Name: "tpcc"}}).WorkloadID(); got != "tpcc" {
		t.Errorf("a built-in: %q", got)
	}
}

// Each later run is paired with the run it followed, whatever runs came between on their own.
func TestPairFollowing(t *testing.T) {
	at := func(min int, tps float64) *Result {
		return &Result{StartedAt: time.Date(2026, 11, 28, 12, min, 0, 0, time.UTC), TPS: tps}
	}
	// Plain runs at minutes 0, 2, 4 (the rounds with a flipped run after) and 6, 7 (rounds
	// added for another pick); flipped runs at 1, 3, 5, given out of order.
	plain := []*Result{at(6, 60), at(0, 0), at(2, 20), at(7, 70), at(4, 40)}
	flipped := []*Result{at(5, 50), at(1, 10), at(3, 30)}
	l, e := PairFollowing(flipped, plain)
	if got, want := fmt.Sprint(Figures(l, func(r *Result) float64 { return r.TPS }), Figures(e, func(r *Result) float64 { return r.TPS })), "[10 30 50] [0 20 40]"; got != want {
		t.Errorf("pairs %s, want %s", got, want)
	}
	if l, _ := PairFollowing([]*Result{at(0, 1)}, []*Result{at(1, 2)}); len(l) != 0 {
		t.Error("a run was paired with one that started after it")
	}
}

// A flipped run pairs with the plain run of its round, whether it ran before or after it and
// whatever rounds the plain runs had on their own; results without rounds pair by time.
func TestPairByRound(t *testing.T) {
	run := func(round, min int, tps float64) *Result {
		return &Result{Round: round, StartedAt: time.Date(2026, 11, 29, 12, min, 0, 0, time.UTC), TPS: tps}
	}
	tpsOf := func(r *Result) float64 { return r.TPS }
	// Round 1: plain then flipped; round 2: flipped then plain; round 3 plain alone (added for
	// another pick); round 4: flipped first, and its plain run was left out.
	plain := []*Result{run(3, 6, 30), run(1, 0, 10), run(2, 3, 20)}
	flipped := []*Result{run(4, 7, 41), run(2, 2, 21), run(1, 1, 11)}
	f, p := PairByRound(flipped, plain)
	if got, want := fmt.Sprint(Figures(f, tpsOf), Figures(p, tpsOf)), "[11 21] [10 20]"; got != want {
		t.Errorf("pairs %s, want %s", got, want)
	}
	// By time, round 2's flipped run would have met round 1's plain run.
	old := []*Result{run(0, 0, 10), run(0, 2, 20)}
	if f, p := PairByRound([]*Result{run(0, 1, 11), run(0, 3, 21)}, old); fmt.Sprint(Figures(f, tpsOf), Figures(p, tpsOf)) != "[11 21] [10 20]" {
		t.Errorf("results without rounds: %v %v, want PairFollowing's pairs", Figures(f, tpsOf), Figures(p, tpsOf))
	}
}

// Positions holding the same round pair in a's order; a round b holds twice pairs with its later.
func TestMatchRounds(t *testing.T) {
	got := MatchRounds([]int{1, 2, 4, 3}, []int{3, 1, 2, 2})
	if fmt.Sprint(got) != "[[0 1] [1 3] [3 0]]" {
		t.Errorf("MatchRounds = %v", got)
	}
}
