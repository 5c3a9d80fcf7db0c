package suite

import "testing"

// standard follows a study that ran sysbench 1.0.20 with its defaults, whose distribution is
// special; quick keeps uniform. A suite that names none gets uniform.
func TestBuiltinRandTypes(t *testing.T) {
	for name, want := range map[string]string{"standard": "special", "quick": "uniform"} {
		s, err := Load(name)
		if err != nil {
			t.Fatal(err)
		}
		if s.RandType != want {
			t.Errorf("suite %s: rand_type %q, want %q", name, s.RandType, want)
		}
	}
}
