package discovery

import (
	"errors"
	"strings"
	"testing"
)

// installedHere is a machine with the host's engines and both Debian roots.
var installedHere = []Installation{
	{Kind: Postgres, Version: "15.18", Origin: "host"},
	{Kind: Postgres, Version: "17.6", Origin: "trixie root"},
	{Kind: Postgres, Version: "18.1", Origin: "sid root"},
	{Kind: MariaDB, Version: "10.11.19", Origin: "host"},
	{Kind: MariaDB, Version: "11.8.3", Origin: "trixie root"},
	{Kind: MySQL, Version: "9.7.4", Origin: "sid root"},
}

// withClusters adds what DiscoverWithClusters finds beside the host's PostgreSQL and MariaDB.
var withClusters = append(installedHere[:len(installedHere):len(installedHere)],
	Installation{Kind: Galera, Version: "10.11.19", Origin: "host"},
	Installation{Kind: PostgresHA, Version: "15.18", Origin: "host"})

func names(insts []Installation) string {
	var out []string
	for _, in := range insts {
		out = append(out, in.Name())
	}
	return strings.Join(out, ",")
}

func TestSelect(t *testing.T) {
	for _, c := range []struct {
		in, want  string
		installed []Installation
	}{
		{"postgres@17,postgres@15,mariadb@11.8,mysql", "postgres@17,postgres@15,mariadb@11.8,mysql@9.7", installedHere},
		{"all", "postgres@18,mariadb@11.8,mysql@9.7", installedHere},
		{" ALL ", "postgres@18,mariadb@11.8,mysql@9.7", installedHere},
		{"postgres", "postgres@18", installedHere},
		{"postgres,mariadb", "postgres@15,mariadb@10.11", installedHere[:1:1]},
		{"mariadb@11", "mariadb@11.8", installedHere},
		{"postgres@15.18", "postgres@15", installedHere},
		{"Postgres@18, mysql@9.7", "postgres@18,mysql@9.7", installedHere},
		{"all", "postgres@15", installedHere[:1]},
		// Clusters are named explicitly, never by all; postgres-ha names its release as postgres does.
		{"postgres@15,postgres-ha,galera", "postgres@15,postgres-ha@15,galera@10.11", withClusters},
		{"all", "postgres@18,mariadb@11.8,mysql@9.7", withClusters},
	} {
		if c.in == "postgres,mariadb" {
			c.installed = []Installation{installedHere[0], installedHere[3]}
		}
		choices, all, err := ParseEngines(c.in)
		if err != nil {
			t.Errorf("ParseEngines(%q): %v", c.in, err)
			continue
		}
		got, err := Resolve(choices, all, c.installed)
		if err != nil || names(got) != c.want {
			t.Errorf("Resolve(%q) = %s, %v; want %s", c.in, names(got), err, c.want)
		}
	}
}

func TestSelectErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"oracle", `unknown engine "oracle"`},
		{"postgres@", "a version is a number like postgres@15"},
		{"postgres@latest", "a version is a number"},
		{"", "--engines is empty"},
		{" , ", "--engines is empty"},
		{"postgres@16", "postgres@16 is not installed (installed: postgres@15, postgres@17, postgres@18, mariadb@10.11, mariadb@11.8, mysql@9.7): installable: "},
		{"mysql@8.4", "MySQL 8.4 is in no Debian suite"},
		{"postgres@15,postgres@15.18", "postgres@15 is chosen twice"},
		{"postgres@18,postgres", "postgres@18 is chosen twice"},
	} {
		choices, all, err := ParseEngines(c.in)
		if err == nil {
			_, err = Resolve(choices, all, installedHere)
		}
		var se *SelectError
		if err == nil || !errors.As(err, &se) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: error %v, want a one-line SelectError containing %q", c.in, err, c.want)
		}
	}
	// A version the install script knows names the command that installs it.
	_, err := Resolve([]Choice{{Kind: Postgres, Release: "17"}}, false, installedHere[:1])
	if err == nil || !strings.Contains(err.Error(), "scripts/install-engines.sh --versions postgres@17") {
		t.Errorf("missing postgres@17: %v", err)
	}
	if _, err := Resolve(nil, true, nil); err == nil || !strings.Contains(err.Error(), "no database engines are installed") {
		t.Errorf("all with nothing installed: %v", err)
	}
}

func FuzzParseEngines(f *testing.F) {
	for _, s := range []string{"all", "postgres@17,postgres@15,mariadb@11.8,mysql", "postgres@", "x@1.2", ",,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		choices, all, err := ParseEngines(v)
		if err != nil {
			var se *SelectError
			if !errors.As(err, &se) {
				t.Fatalf("ParseEngines(%q) error %T is not a SelectError", v, err)
			}
			return
		}
		if !all && len(choices) == 0 {
			t.Fatalf("ParseEngines(%q) accepted no engines", v)
		}
		for _, c := range choices {
			if kindIndex(c.Kind) == len(Kinds) {
				t.Fatalf("ParseEngines(%q) accepted kind %q", v, c.Kind)
			}
		}
		// Whatever parses resolves to an answer or a one-line error, never a panic.
		if _, err := Resolve(choices, all, installedHere); err != nil && strings.Contains(err.Error(), "\n") {
			t.Fatalf("multi-line error for %q: %v", v, err)
		}
	})
}
