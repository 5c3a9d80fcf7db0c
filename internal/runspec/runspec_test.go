package runspec

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

// wantInputError checks err is one *InputError whose one-line message holds every part of want.
func wantInputError(t *testing.T, err error, want ...string) {
	t.Helper()
	var ie *InputError
	if !errors.As(err, &ie) {
		t.Fatalf("err = %v (%T), want *InputError", err, err)
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") {
		t.Errorf("message is not one line: %q", msg)
	}
	if ie.Fix == "" {
		t.Errorf("message names no fix: %q", msg)
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("message %q lacks %q", msg, w)
		}
	}
}

func TestParseThreads(t *testing.T) {
	cases := []struct {
		in      string
		want    []int
		errHave string
	}{
		{"8", []int{8}, ""},
		{"1,2,4,8", []int{1, 2, 4, 8}, ""},
		{" 1, 16 ", []int{1, 16}, ""},
		{"10000", []int{10000}, ""},
		{"0", nil, "at least 1"},
		{"-3", nil, "at least 1"},
		{"99999999999", nil, "more than the most"},
		{"10001", nil, "more than the most"},
		{"many", nil, "not a whole number"},
		{"1,,2", nil, "not a whole number"},
		{"", nil, "no thread count"},
		{"1.5", nil, "not a whole number"},
		{"2,4,2", nil, "listed twice"},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, err := ParseThreads("--threads", c.in)
			if c.errHave != "" {
				wantInputError(t, err, "--threads", c.errHave)
				return
			}
			if err != nil || !equal(got, c.want) {
				t.Fatalf("got %v, %v; want %v", got, err, c.want)
			}
		})
	}
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestParseDuration(t *testing.T) {
	cases := []struct {
		in       string
		positive bool
		want     time.Duration
		errHave  string
	}{
		{"30s", true, 30 * time.Second, ""},
		{"60", true, time.Minute, ""},
		{"0.5", true, 500 * time.Millisecond, ""},
		{"1h30m", true, 90 * time.Minute, ""},
		{"0s", false, 0, ""},
		{"0", false, 0, ""},
		{"0", true, 0, "more than zero"},
		{"0s", true, 0, "more than zero"},
		{"-1s", false, 0, "negative"},
		{"-5", false, 0, "negative"},
		{"soon", false, 0, "not a duration"},
		{"NaN", false, 0, "not a duration"},
		{"Inf", false, 0, "not a duration"},
		{"+Inf", true, 0, "not a duration"},
		{"1e300", false, 0, "longer than a year"},
		{"9000h", true, 0, "longer than a year"},
		{"", true, 0, "not a duration"},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			parse := ParseDuration
			if c.positive {
				parse = ParsePositiveDuration
			}
			got, err := parse("--time", c.in)
			if c.errHave != "" {
				wantInputError(t, err, "--time", c.errHave)
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("got %v, %v; want %v", got, err, c.want)
			}
		})
	}
}

func TestParseRate(t *testing.T) {
	cases := []struct {
		in      string
		want    float64
		errHave string
	}{
		{"0", 0, ""},
		{"500", 500, ""},
		{"0.5", 0.5, ""},
		{"NaN", 0, "not a number of arrivals"},
		{"Inf", 0, "not a number of arrivals"},
		{"-Inf", 0, "not a number of arrivals"},
		{"-1", 0, "negative"},
		{"1e9", 0, "more than"},
		{"lots", 0, "not a number"},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, err := ParseRate("--rate", c.in)
			if c.errHave != "" {
				wantInputError(t, err, "--rate", c.errHave)
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("got %v, %v; want %v", got, err, c.want)
			}
		})
	}
	if err := CheckRate("--rate", math.NaN()); err == nil {
		t.Fatal("NaN accepted")
	}
}

func TestParseRamp(t *testing.T) {
	cases := []struct {
		in, slo string
		want    Ramp
		errHave string
	}{
		{"add=2,every=5s,max=32", "100ms", Ramp{Add: 2, Every: 5 * time.Second, Max: 32, SLO: 100 * time.Millisecond}, ""},
		{"max=16", "", Ramp{Add: DefaultRampAdd, Every: DefaultRampEvery, Max: 16}, ""},
		{"every=2", "", Ramp{Add: DefaultRampAdd, Every: 2 * time.Second, Max: DefaultRampMax}, ""},
		{"add=0,max=8", "", Ramp{}, "at least 1"},
		{"add=-1", "", Ramp{}, "at least 1"},
		{"add=8,max=4", "", Ramp{}, "must be from add"},
		{"max=99999999", "", Ramp{}, "must be from add"},
		{"every=0s", "", Ramp{}, "more than zero"},
		{"every=", "", Ramp{}, "empty"},
		{"add=x", "", Ramp{}, "not a whole number"},
		{"step=2", "", Ramp{}, "unknown key"},
		{"2,10s,64", "", Ramp{}, "not key=value"},
		{"max=8", "0ms", Ramp{}, "--ramp slo"},
		{"max=8", "fast", Ramp{}, "not a duration"},
	}
	for _, c := range cases {
		t.Run(c.in+"/"+c.slo, func(t *testing.T) {
			got, err := ParseRamp(c.in, c.slo)
			if c.errHave != "" {
				wantInputError(t, err, "--ramp", c.errHave)
				return
			}
			if err != nil || *got != c.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, c.want)
			}
		})
	}
}

func TestParseStages(t *testing.T) {
	pool8, pool0 := 8, 0
	stage := func(max int, lo, hi time.Duration, pool int) Ramp {
		return Ramp{Add: 1, Every: 3 * time.Second, Max: max, Stages: true, DelayMin: lo, DelayMax: hi, Pool: pool}
	}
	cases := []struct {
		in      string
		pool    *int
		want    Ramp
		errHave string
	}{
		{"add=1,every=3s,max=24", &pool8, stage(24, 0, 40*time.Millisecond, 8), ""},
		{"add=1,every=3s,max=24,delay=0-10ms", nil, stage(24, 0, 10*time.Millisecond, DefaultStagePool), ""},
		{"add=1,every=3s,max=24,delay=5ms-20ms", nil, stage(24, 5*time.Millisecond, 20*time.Millisecond, DefaultStagePool), ""},
		{"add=1,every=3s,max=24,delay=15ms", nil, stage(24, 15*time.Millisecond, 15*time.Millisecond, DefaultStagePool), ""},
		{"add=1,every=3s,max=24,delay=40ms-10ms", nil, Ramp{}, "MIN <= MAX"},
		{"add=1,every=3s,max=24,delay=0-2m", nil, Ramp{}, "MIN <= MAX"},
		{"add=1,every=3s,max=24,delay=soon", nil, Ramp{}, "not a duration"},
		{"add=1,every=3s,max=24,delay=", nil, Ramp{}, "empty"},
		{"add=1,every=3s,max=24", &pool0, Ramp{}, "pool"},
		{"add=0,every=3s,max=24", nil, Ramp{}, "at least 1"},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, err := ParseStages(c.in, c.pool)
			if c.errHave != "" {
				wantInputError(t, err, "--stages", c.errHave)
				return
			}
			if err != nil || *got != c.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, c.want)
			}
		})
	}
	if _, err := ParseRamp("max=8,delay=0-40ms", ""); err == nil || !strings.Contains(err.Error(), "--stages") {
		t.Errorf("a delay on --ramp: %v", err)
	}
}

func TestRampInput(t *testing.T) {
	zero, minus := 0, -1
	if _, err := (RampInput{Add: &zero}).Ramp("suite s.yaml: step 1 ramp"); err == nil {
		t.Fatal("add: 0 accepted")
	} else {
		wantInputError(t, err, "step 1 ramp add", "at least 1")
	}
	if _, err := (RampInput{Max: &minus}).Ramp("ramp"); err == nil {
		t.Fatal("max: -1 accepted")
	}
	r, err := RampInput{}.Ramp("ramp")
	if err != nil || *r != (Ramp{Add: DefaultRampAdd, Every: DefaultRampEvery, Max: DefaultRampMax}) {
		t.Fatalf("defaults: %+v %v", r, err)
	}
}

func TestChecks(t *testing.T) {
	for _, c := range []struct {
		name    string
		err     error
		errHave string
	}{
		{"max tries 0", CheckMaxTries("--max-tries", 0), "from 1 to"},
		{"max tries huge", CheckMaxTries("--max-tries", 1<<40), "from 1 to"},
		{"repeat -1", CheckRepeat("suite s.yaml: repeat", -1), "from 1 to"},
		{"repeat 0", CheckRepeat("--repeat", 0), "from 1 to"},
		{"threads empty", CheckThreads("threads", nil), "no thread count"},
	} {
		t.Run(c.name, func(t *testing.T) { wantInputError(t, c.err, c.errHave) })
	}
	for _, ok := range []error{CheckMaxTries("--max-tries", 10), CheckRepeat("--repeat", 3), CheckThreads("t", []int{1, 2})} {
		if ok != nil {
			t.Fatal(ok)
		}
	}
}

func TestResolve(t *testing.T) {
	ramp := &Ramp{Add: 2, Every: 5 * time.Second, Max: 32}
	cases := []struct {
		name    string
		layers  []Layer
		want    Spec
		errHave string
	}{
		{"defaults", nil, Spec{Threads: []int{DefaultThreads}, Time: DefaultTime, MaxTries: DefaultMaxTries, ReportInterval: DefaultReportInterval}, ""},
		{"later layers win", []Layer{
			{Threads: []int{16}, Time: Ptr(time.Minute), Warmup: Ptr(10 * time.Second)},
			{Threads: []int{1, 4}, Warmup: Ptr(time.Duration(0))},
		}, Spec{Threads: []int{1, 4}, Time: time.Minute, MaxTries: DefaultMaxTries, ReportInterval: time.Second}, ""},
		{"a ramp runs its length unless a time comes with it or later", []Layer{
			{Time: Ptr(8 * time.Second)}, {Ramp: ramp},
		}, Spec{Threads: []int{32}, Time: 17 * 5 * time.Second, Ramp: ramp, MaxTries: DefaultMaxTries, ReportInterval: time.Second}, ""},
		{"a later time bounds the ramp", []Layer{
			{Ramp: ramp}, {Time: Ptr(time.Minute)},
		}, Spec{Threads: []int{32}, Time: time.Minute, Ramp: ramp, MaxTries: DefaultMaxTries, ReportInterval: time.Second}, ""},
		{"a ramp reports once per step", []Layer{
			{Ramp: &Ramp{Add: 1, Every: 500 * time.Millisecond, Max: 2}},
		}, Spec{Threads: []int{2}, Time: 1500 * time.Millisecond, Ramp: &Ramp{Add: 1, Every: 500 * time.Millisecond, Max: 2},
			MaxTries: DefaultMaxTries, ReportInterval: 500 * time.Millisecond}, ""},
		{"a rate too small for the time", []Layer{{Rate: Ptr(1e-9)}}, Spec{}, "less than one arrival"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Resolve(c.layers...)
			if c.errHave != "" {
				wantInputError(t, err, c.errHave)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !equal(got.Threads, c.want.Threads) || got.Time != c.want.Time || got.Warmup != c.want.Warmup ||
				got.MaxTries != c.want.MaxTries || got.ReportInterval != c.want.ReportInterval || (got.Ramp == nil) != (c.want.Ramp == nil) {
				t.Fatalf("got %+v, want %+v", got, c.want)
			}
		})
	}
}

func TestParseSize(t *testing.T) {
	const k, m, g = 1 << 10, 1 << 20, 1 << 30
	cases := []struct {
		in      string
		want    int64
		errHave string
	}{
		{"512M", 512 * m, ""},
		{"512MB", 512 * m, ""},
		{"512MiB", 512 * m, ""},
		{"512mb", 512 * m, ""},
		{"1.5G", 3 * g / 2, ""},
		{"2G", 2 * g, ""},
		{"1T", 1 << 40, ""},
		{"64k", 64 * k, ""},
		{"65536", 65536, ""},
		{"0.5K", 512, ""},
		{"1 GiB", g, ""},
		{"1.5", 0, "whole number of bytes"},
		{"0.3K", 0, "whole number of bytes"},
		{"0", 0, "more than zero"},
		{"0M", 0, "more than zero"},
		{"-1G", 0, "not a size"},
		{"1e3", 0, "not a size"},
		{"0x10", 0, "not a size"},
		{"NaN", 0, "not a size"},
		{"Inf", 0, "not a size"},
		{"", 0, "not a size"},
		{"G", 0, "not a size"},
		{"12Q", 0, "not a size"},
		{"1.2.3G", 0, "not a size"},
		{"1GBB", 0, "not a size"},
		{"2P\xb5", 0, "not a size"},
		{"1Ki", 0, "not a size"},
		{"+1G", 0, "not a size"},
		{"2P", 0, "more than 1P"},
		{"99999999999999999999T", 0, "more than 1P"},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, err := ParseSize("--buffer-pool", c.in)
			if c.errHave != "" {
				wantInputError(t, err, "--buffer-pool", c.errHave)
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("got %d, %v; want %d", got, err, c.want)
			}
		})
	}
}

func TestFormatSize(t *testing.T) {
	for n, want := range map[int64]string{64 << 20: "64M", 3 << 29: "1536M", 2 << 30: "2G", 1 << 40: "1T", 1000: "1000", 4096: "4K"} {
		if got := FormatSize(n); got != want {
			t.Errorf("FormatSize(%d) = %s, want %s", n, got, want)
		}
		if back, err := ParseSize("x", FormatSize(n)); err != nil || back != n {
			t.Errorf("round trip of %d: %d %v", n, back, err)
		}
	}
}

func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"512M", "1.5G", "1T", "0.5K", "12Q", "-1", "1e3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSize("x", s)
		if err == nil && (n <= 0 || n > MaxSize) {
			t.Fatalf("ParseSize(%q) = %d without an error", s, n)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Fatalf("multi-line error %q", err)
		}
	})
}
