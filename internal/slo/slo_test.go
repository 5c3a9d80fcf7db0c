package slo

import (
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	good := []struct {
		in   string
		want SLO
	}{
		{"p99<=10ms", SLO{Percentile: 99, Limit: 10 * time.Millisecond}},
		{" P99.9 <= 1.5s ", SLO{Percentile: 99.9, Limit: 1500 * time.Millisecond}},
		{"p90(new_order)<=5s", SLO{Percentile: 90, Kind: "new_order", Limit: 5 * time.Second}},
		{"p50<=250us", SLO{Percentile: 50, Limit: 250 * time.Microsecond}},
	}
	for _, c := range good {
		got, err := Parse(c.in)
		if err != nil || got != c.want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
		if again, err := Parse(got.String()); err != nil || again != got {
			t.Errorf("%q does not read back: %+v, %v", got.String(), again, err)
		}
	}
	bad := []struct{ in, want string }{
		{"p99<10ms", "an upper limit, written <="},
		{"p99>=10ms", "an upper limit"},
		{"p100<=10ms", "from p50 to p99.9"},
		{"p49<=10ms", "from p50 to p99.9"},
		{"p99<=-5ms", "a positive time"},
		{"p99<=10", "a positive time with its unit"},
		{"p99<=0s", "a positive time"},
		{"99<=10ms", "is not an objective"},
		{"p99(New Order)<=1s", "is not an objective"},
		{"", "is not an objective"},
	}
	for _, c := range bad {
		_, err := Parse(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Parse(%q) = %v, want one line with %q", c.in, err, c.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"p99<=10ms", "p90(new_order)<=5s", "p99.9<=1h", "p100<=1ms"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		slo, err := Parse(s)
		if err != nil {
			return
		}
		if slo.Percentile < 50 || slo.Percentile > 99.9 || slo.Limit <= 0 {
			t.Fatalf("%q read as %+v", s, slo)
		}
		if again, err := Parse(slo.String()); err != nil || again != slo {
			t.Fatalf("%q read as %+v, which reads back as %+v, %v", s, slo, again, err)
		}
	})
}
