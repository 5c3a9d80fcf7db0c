package result

import "testing"

func TestVersionNumber(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"PostgreSQL 15.18 (Debian 15.18-0+deb12u1) on x86_64-pc-linux-gnu, compiled by gcc 12.2.0, 64-bit", "15.18"},
		{"PostgreSQL 17beta1 on x86_64", "17beta1"},
		{"10.11.19-MariaDB-0+deb12u1", "10.11.19"},
		{"11.4.3-MariaDB-1:11.4.3+maria~ubu2404", "11.4.3"},
		{"8.0.39-0ubuntu0.24.04.2", "8.0.39"},
		{"9.7.4", "9.7.4"},
		{" custom ", "custom"},
	} {
		if got := VersionNumber(tc.text); got != tc.want {
			t.Errorf("VersionNumber(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}

func TestCompareVersions(t *testing.T) {
	cases := []struct {
		a, b string
		want int
	}{
		{"10.11.2", "10.9", 1}, {"15.1", "15.1.0", 0}, {"9.7", "15", -1}, {"8.0.29", "8.0.30", -1}, {"18", "16", 1},
	}
	for _, c := range cases {
		if got := CompareVersions(c.a, c.b); got != c.want {
			t.Errorf("CompareVersions(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}
