package discovery

import (
	"strings"
	"testing"
)

func TestVersions(t *testing.T) {
	for out, want := range map[string]string{
		"postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)":                                   "15.18",
		"mariadbd  Ver 10.11.19-MariaDB-0+deb12u1 for debian-linux-gnu on x86_64 (Debian 12)":    "10.11.19",
		"/usr/sbin/mysqld  Ver 9.7.4-2 for Linux on x86_64 ((Debian))":                           "9.7.4",
		"/usr/sbin/mysqld  Ver 8.0.36-0ubuntu0.22.04.1 for Linux on x86_64 ((Ubuntu))":           "8.0.36",
		"/usr/lib/postgresql/16/bin/postgres (PostgreSQL) 16.2 (Ubuntu 16.2-1.pgdg22.04+1) 12.3": "16.2",
	} {
		marker := "Ver"
		if strings.Contains(out, "PostgreSQL") {
			marker = "(PostgreSQL)"
		}
		if got := parseVersion(out, marker); got != want {
			t.Errorf("parseVersion(%q) = %q, want %q", out, got, want)
		}
	}
}

func TestFind(t *testing.T) {
	if _, err := Find("oracle", ""); err == nil || !strings.Contains(err.Error(), "unknown engine") {
		t.Errorf("Find(oracle) error = %v", err)
	}
	// Debian links /usr/sbin/mysqld to mariadbd: that must never be taken
	// for MySQL. With a root that does not exist only a real MySQL on PATH
	// may be found.
	inst, err := Find(MySQL, "/nonexistent/mysql-root")
	if err != nil {
		if !strings.Contains(err.Error(), "scripts/install-engines.sh") {
			t.Errorf("Find(mysql) error does not name the fix: %v", err)
		}
	} else {
		out, _ := versionOutput(inst.Root, inst.BinaryInRoot())
		if strings.Contains(out, "MariaDB") {
			t.Errorf("Find(mysql) returned MariaDB: %v", inst)
		}
	}
	for _, in := range Discover("") {
		if in.Version == "" || !IsExecutable(in.Binary) {
			t.Errorf("Discover returned unusable %v", in)
		}
		got, err := Find(in.Name(), "")
		if err != nil || got != in {
			t.Errorf("Find(%s) = %v, %v; Discover said %v", in.Name(), got, err, in)
		}
		if in.Origin == "" || (in.Root == "") != (in.Origin == "host") {
			t.Errorf("%s: origin %q for root %q", in.Name(), in.Origin, in.Root)
		}
	}
}
