package cli

import (
	"strings"
	"testing"
)

// A profile or knob the engines cannot take stops compare and serve before any server starts,
// with one line that names the problem and the fix, and exit status 2.
func TestProfileAndExplainErrors(t *testing.T) {
	out := t.TempDir()
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"unknown knob", []string{"compare", "--engines", "mariadb", "--explain", "binlog,turbo"}, `unknown knob "turbo" in --explain: use binlog, doublewrite, flush-method, synchronous-commit, buffer-pool`},
		{"knob twice", []string{"compare", "--engines", "mariadb", "--explain", "binlog,binlog"}, "listed twice"},
		{"knob for no engine compared", []string{"compare", "--engines", "postgres", "--explain", "binlog"}, "knob binlog in --explain applies only to mysql, mariadb"},
		{"unknown profile", []string{"compare", "--engines", "mariadb", "--profile", "turbo"}, `unknown profile "turbo" in --profile: use fair or defaults`},
		{"binlog under defaults", []string{"compare", "--engines", "mariadb", "--profile", "defaults", "--binlog"}, "--binlog contradicts --profile defaults"},
		{"buffer pool under defaults", []string{"compare", "--engines", "mariadb", "--profile", "defaults", "--buffer-pool", "1G"}, "--buffer-pool contradicts --profile defaults"},
		{"innodb cannot take the pool", []string{"compare", "--engines", "mariadb", "--buffer-pool", "200M"}, "mariadb cannot take a buffer pool of 200 MiB"},
		{"server-cpus 0", []string{"compare", "--engines", "mariadb", "--server-cpus", "0"}, "--server-cpus \"0\": 0 CPUs, but this machine gives fairbench"},
		{"server-cpus above the machine", []string{"compare", "--engines", "mariadb", "--server-cpus", "1,4096"}, "4096 CPUs, but this machine gives fairbench"},
		{"server-cpus not a number", []string{"compare", "--engines", "mariadb", "--server-cpus", "one"}, `"one" is not a whole number`},
		{"server-cpus twice", []string{"compare", "--engines", "mariadb", "--server-cpus", "1,1"}, "1 is listed twice"},
		{"serve: unknown profile", []string{"serve", "--engine", "mariadb", "--profile", "turbo"}, `unknown profile "turbo"`},
		{"buffer pool above the machine's memory", []string{"compare", "--engines", "mariadb", "--buffer-pool", "1T"}, "--buffer-pool 1T is more than this machine's memory"},
		{"serve: buffer pool above the machine's memory", []string{"serve", "--engine", "postgres", "--buffer-pool", "1T"}, "--buffer-pool 1T is more than this machine's memory"},
		{"serve: innodb cannot take the pool", []string{"serve", "--engine", "mariadb", "--buffer-pool", "300M"}, "mariadb cannot take a buffer pool of 300 MiB"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := c.args
			if args[0] == "compare" {
				args = append(args, "--out", out)
			}
			code, _, stderr := run(args...)
			if code != 2 {
				t.Errorf("exit %d, want 2 (stderr %q)", code, stderr)
			}
			if lines := strings.Split(strings.TrimSpace(stderr), "\n"); len(lines) != 1 || !strings.Contains(stderr, c.want) {
				t.Errorf("stderr %q: want one line containing %q", stderr, c.want)
			}
		})
	}
}
