package servermetrics

import (
	"reflect"
	"testing"
)

func TestDelta(t *testing.T) {
	tests := []struct {
		name          string
		before, after map[string]int64
		want          map[string]int64
	}{
		{
			name:   "counters subtract",
			before: map[string]int64{"buffer_reads": 10, "wal_bytes": 1000},
			after:  map[string]int64{"buffer_reads": 25, "wal_bytes": 5000},
			want:   map[string]int64{"buffer_reads": 15, "wal_bytes": 4000},
		},
		{
			name:   "gauges keep the after value",
			before: map[string]int64{KeyHistoryListLength: 500, KeyDeadTuples: 7, "deadlocks": 1},
			after:  map[string]int64{KeyHistoryListLength: 120, KeyDeadTuples: 30, "deadlocks": 3},
			want:   map[string]int64{KeyHistoryListLength: 120, KeyDeadTuples: 30, "deadlocks": 2},
		},
		{
			name:   "a gauge needs no before value",
			before: map[string]int64{},
			after:  map[string]int64{KeyHistoryListLength: 42},
			want:   map[string]int64{KeyHistoryListLength: 42},
		},
		{
			name:   "a counter missing before is left out",
			before: map[string]int64{"buffer_hits": 1},
			after:  map[string]int64{"buffer_hits": 4, "wal_bytes": 99},
			want:   map[string]int64{"buffer_hits": 3},
		},
		{
			name:   "a counter missing after is left out",
			before: map[string]int64{"buffer_hits": 1, "wal_bytes": 5},
			after:  map[string]int64{"buffer_hits": 4},
			want:   map[string]int64{"buffer_hits": 3},
		},
		{
			name:   "a reset counter counts from the reset",
			before: map[string]int64{"xact_commit": 1000},
			after:  map[string]int64{"xact_commit": 40},
			want:   map[string]int64{"xact_commit": 40},
		},
		{
			name:   "no change is zero, not absent",
			before: map[string]int64{"row_lock_waits": 3},
			after:  map[string]int64{"row_lock_waits": 3},
			want:   map[string]int64{"row_lock_waits": 0},
		},
		{
			name: "nil maps",
			want: map[string]int64{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Delta(tt.before, tt.after); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Delta = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestPerTransaction(t *testing.T) {
	tests := []struct {
		name  string
		delta map[string]int64
		txns  int64
		want  map[string]float64
	}{
		{
			name:  "divides",
			delta: map[string]int64{"buffer_reads": 150, "wal_bytes": 4000, "deadlocks": 0},
			txns:  100,
			want:  map[string]float64{"buffer_reads": 1.5, "wal_bytes": 40, "deadlocks": 0},
		},
		{
			name:  "gauges are left out",
			delta: map[string]int64{"buffer_hits": 10, KeyHistoryListLength: 900, KeyDeadTuples: 5},
			txns:  4,
			want:  map[string]float64{"buffer_hits": 2.5},
		},
		{
			name:  "no transactions gives zeros",
			delta: map[string]int64{"buffer_hits": 10, "wal_bytes": 3},
			txns:  0,
			want:  map[string]float64{"buffer_hits": 0, "wal_bytes": 0},
		},
		{
			name:  "negative transactions count as none",
			delta: map[string]int64{"buffer_hits": 10},
			txns:  -1,
			want:  map[string]float64{"buffer_hits": 0},
		},
		{
			name: "empty",
			txns: 10,
			want: map[string]float64{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := PerTransaction(tt.delta, tt.txns); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("PerTransaction = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestParseInt(t *testing.T) {
	tests := []struct {
		in      string
		want    int64
		wantErr bool
	}{
		{"123", 123, false},
		{" 42 ", 42, false},
		{"", 0, false}, // NULL
		{"1234567", 1234567, false},
		{"98765.0", 98765, false}, // numeric
		{"abc", 0, true},
	}
	for _, tt := range tests {
		got, err := parseInt(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("parseInt(%q) = %d, %v; want %d, err %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}
