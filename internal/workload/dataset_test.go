package workload

import (
	"reflect"
	"strings"
	"testing"
)

func TestSameValue(t *testing.T) {
	cases := []struct {
		a, b string
		same bool
	}{
		{"10000", "10000", true},
		{"10000", "1e4", true},
		{" 4", "4", true},
		{"0.01", "0.010", true},
		{"on", "true", true},
		{"off", "0", true},
		{"10000", "1000000", false},
		{"on", "off", false},
		{"innodb", "InnoDB", false},
		{"/a", "/b", false},
	}
	for _, c := range cases {
		if got := SameValue(c.a, c.b); got != c.same {
			t.Errorf("SameValue(%q, %q) = %v, want %v", c.a, c.b, got, c.same)
		}
	}
}

func TestParamsDiffer(t *testing.T) {
	have := map[string]string{"tables": "2", "table-size": "10000", "create-secondary": "on"}
	cases := []struct {
		want map[string]string
		diff []ParamDiff
	}{
		{nil, nil},
		{map[string]string{"tables": "2"}, nil},
		{map[string]string{"create-secondary": "true"}, nil},
		{map[string]string{"table-size": "1000000", "tables": "3"},
			[]ParamDiff{{"table-size", "1000000", "10000"}, {"tables", "3", "2"}}},
		// An option the record does not have (an older record) is not a contradiction.
		{map[string]string{"fillfactor": "90"}, nil},
	}
	for _, c := range cases {
		if got := ParamsDiffer(c.want, have); !reflect.DeepEqual(got, c.diff) {
			t.Errorf("ParamsDiffer(%v) = %v, want %v", c.want, got, c.diff)
		}
	}
}

func TestCheckLimits(t *testing.T) {
	s := Spec{Name: "w", Options: []Option{{Name: "rows", Default: "1", Max: MaxInt}, {Name: "free", Default: "x"}}}
	cases := []struct {
		set  map[string]string
		want string // "" = accepted
	}{
		{nil, ""},
		{map[string]string{"rows": "2147483647"}, ""},
		{map[string]string{"rows": "2147483648"}, "--rows 2147483648 is more than w's schema can hold (at most 2147483647)"},
		{map[string]string{"rows": "3e9"}, "--rows must be a whole number"},
		{map[string]string{"rows": "lots"}, ""}, // left to the workload's own parser
		{map[string]string{"free": "99999999999999"}, ""},
	}
	for _, c := range cases {
		err := s.CheckLimits(s.WithDefaults(c.set))
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%v: %v, want %q", c.set, err, c.want)
		}
	}
}

func TestDescribeOption(t *testing.T) {
	saved := registry
	defer func() { registry = saved }()
	registry = map[string]Spec{}
	Register(Spec{Name: "a", Options: []Option{{Name: "n", Default: "10", Help: "how many"}, {Name: "e", Help: "empty"}}})
	Register(Spec{Name: "b", Options: []Option{{Name: "n", Default: "10"}}})
	Register(Spec{Name: "c", Options: []Option{{Name: "n", Default: "9"}}})
	Register(Spec{Name: "d", Options: []Option{{Name: "n", Default: "9"}, {Name: "m", Default: "1"}}})
	Register(Spec{Name: "e", Options: []Option{{Name: "n", Default: "10"}}})
	for _, c := range []struct{ name, help, defaults string }{
		{"n", "how many", "10; c, d: 9"},
		{"m", "", "1"},
		{"e", "empty", `""`},
	} {
		help, defaults := DescribeOption(c.name)
		if defaults != c.defaults || (c.help != "" && help != c.help) {
			t.Errorf("DescribeOption(%s) = %q, %q; want %q, %q", c.name, help, defaults, c.help, c.defaults)
		}
	}
}
