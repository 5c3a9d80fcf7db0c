package runspec

import (
	"errors"
	"testing"
	"time"
)

func TestShard(t *testing.T) {
	tests := []struct {
		in      string
		total   int
		threads []int // per shard
		bad     bool
	}{
		{in: "1/3", total: 7, threads: []int{3, 2, 2}},
		{in: "2/2", total: 8, threads: []int{4, 4}},
		{in: "0/3", bad: true}, {in: "4/3", bad: true}, {in: "1/0", bad: true}, {in: "x/3", bad: true}, {in: "1-3", bad: true},
	}
	for _, tc := range tests {
		s, err := ParseShard("--shard", tc.in)
		var ie *InputError
		if tc.bad {
			if !errors.As(err, &ie) {
				t.Errorf("ParseShard(%q) = %v, want an InputError", tc.in, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("ParseShard(%q): %v", tc.in, err)
		}
		sum := 0
		for i := range s.Count {
			n, err := Shard{Index: i + 1, Count: s.Count}.Threads(tc.total)
			if err != nil || n != tc.threads[i] {
				t.Errorf("%s of %d threads: shard %d gets %d (%v), want %d", tc.in, tc.total, i+1, n, err, tc.threads[i])
			}
			sum += n
		}
		if sum != tc.total {
			t.Errorf("%s: shares sum to %d, want %d", tc.in, sum, tc.total)
		}
	}
	if _, err := (Shard{Index: 1, Count: 3}).Threads(2); err == nil {
		t.Error("2 threads over 3 shards accepted")
	}
	if r := (Shard{Index: 1, Count: 4}).Rate(3000); r != 750 {
		t.Errorf("rate share %v, want 750", r)
	}
}

func TestShardFromIndexedJob(t *testing.T) {
	t.Setenv(IndexedJobEnv, "2")
	if s, err := ParseShard("--shard", "k8s/3"); err != nil || s != (Shard{Index: 3, Count: 3}) {
		t.Errorf("k8s/3 with index 2: %+v %v, want shard 3 of 3", s, err)
	}
	t.Setenv(IndexedJobEnv, "3")
	if _, err := ParseShard("--shard", "k8s/3"); err == nil {
		t.Error("index 3 of 3 accepted")
	}
	t.Setenv(IndexedJobEnv, "")
	if _, err := ParseShard("--shard", "k8s/3"); err == nil {
		t.Error("k8s/3 outside a Job accepted")
	}
}

func TestParseStartAt(t *testing.T) {
	now := time.Date(2026, 11, 24, 2, 0, 0, 0, time.UTC)
	if got, err := ParseStartAt("--start-at", "+30s", now); err != nil || !got.Equal(now.Add(30*time.Second)) {
		t.Errorf("+30s: %v %v", got, err)
	}
	if got, err := ParseStartAt("--start-at", "+30s", now.Add(200*time.Millisecond)); err != nil || !got.Equal(now.Add(31*time.Second)) {
		t.Errorf("+30s at 02:00:00.2: %v %v, want 02:00:31, the next whole second", got, err)
	}
	if got, err := ParseStartAt("--start-at", "2026-11-24T02:00:05Z", now); err != nil || !got.Equal(now.Add(5*time.Second)) {
		t.Errorf("RFC 3339: %v %v", got, err)
	}
	for _, bad := range []string{"2026-11-24T01:59:59Z", "soon", "+0s", "+-3s", ""} {
		if _, err := ParseStartAt("--start-at", bad, now); err == nil {
			t.Errorf("ParseStartAt(%q) accepted", bad)
		}
	}
}
