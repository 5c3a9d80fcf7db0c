package result

import "testing"

func TestEngineName(t *testing.T) {
	for _, c := range []struct{ kind, version, want string }{
		{"postgres", "15.18", "postgres@15"},
		{"postgres", "PostgreSQL 18.1 (Debian 18.1-1) on x86_64-pc-linux-gnu, compiled by gcc (Debian 14.2.0-19) 14.2.0, 64-bit", "postgres@18"},
		{"postgres", "9.6.24", "postgres@9.6"},
		{"mariadb", "10.11.19-MariaDB-0+deb12u1", "mariadb@10.11"},
		{"mariadb", "11.8.3-MariaDB-0+deb13u1 from Debian", "mariadb@11.8"},
		{"mysql", "9.7.4", "mysql@9.7"},
		{"mysql", "8.4.6", "mysql@8.4"},
		{"mysql", "", "mysql"},
		{"mysql", "unknown", "mysql"},
	} {
		if got := EngineName(c.kind, c.version); got != c.want {
			t.Errorf("EngineName(%q, %q) = %q, want %q", c.kind, c.version, got, c.want)
		}
	}
}
