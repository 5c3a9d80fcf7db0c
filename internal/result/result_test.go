package result

import (
	"encoding/json"
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
