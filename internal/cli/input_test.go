package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Run settings, sizes, suites and --out are checked before any server is reached or started: each
// mistake is one line naming the problem and the fix, with exit status 2. The target here is a
// closed port, so a check that came after connecting would fail differently.
func TestRunSettingErrors(t *testing.T) {
	dir := t.TempDir()
	suiteFile := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	run1 := []string{"run", "--target", "postgres://u:hunter2@127.0.0.1:1/db", "--workload", "oltp_read_write"}
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"time 0", append(run1, "--time", "0"), []string{"--time \"0\"", "more than zero", "e.g. 30s"}},
		{"time 0s", append(run1, "--time", "0s"), []string{"--time", "more than zero"}},
		{"time 1ns", append(run1, "--time", "1ns"), []string{"--time", "shorter than 100ms"}},
		{"time NaN", append(run1, "--time", "NaN"), []string{"--time", "not a duration"}},
		{"time negative", append(run1, "--time", "-5"), []string{"--time", "negative"}},
		{"warmup Inf", append(run1, "--warmup", "Inf"), []string{"--warmup", "not a duration"}},
		{"report interval 0", append(run1, "--report-interval", "0s"), []string{"--report-interval", "more than zero"}},
		{"rate 1e-9", append(run1, "--rate", "1e-9"), []string{"--rate", "less than one arrival"}},
		{"rate NaN", append(run1, "--rate", "NaN"), []string{"--rate", "not a number of arrivals"}},
		{"rate Inf", append(run1, "--rate", "Inf"), []string{"--rate", "not a number of arrivals"}},
		{"rate negative", append(run1, "--rate", "-1"), []string{"--rate", "negative"}},
		{"rate not a number", append(run1, "--rate", "fast"), []string{"--rate"}},
		{"threads huge", append(run1, "--threads", "99999999999"), []string{"--threads", "10000"}},
		{"threads zero", append(run1, "--threads", "0"), []string{"--threads", "at least 1"}},
		{"threads twice", append(run1, "--threads", "1,2,1"), []string{"--threads", "listed twice"}},
		{"max tries 0", append(run1, "--max-tries", "0"), []string{"--max-tries", "from 1 to"}},
		{"ramp add 0", append(run1, "--ramp", "add=0,max=8"), []string{"--ramp add", "at least 1"}},
		{"ramp bad key", append(run1, "--ramp", "step=2"), []string{"--ramp", "unknown key"}},
		{"slo without ramp", append(run1, "--slo", "50ms"), []string{"--slo goes with --ramp"}},
		{"out in a missing directory", append(run1, "--time", "1s", "--out", filepath.Join(dir, "nodir", "r.json")), []string{"--out", "cannot be written"}},
		{"out is a directory", append(run1, "--time", "1s", "--out", dir), []string{"--out", "is a directory"}},
		{"unknown command", []string{"rnu"}, []string{"unknown command"}},
		{"missing flag value", append(run1, "--time"), []string{"needs an argument"}},
		{"too many arguments", []string{"report", "a", "b"}, []string{"accepts 1 arg"}},
		{"serve without engine", []string{"serve"}, []string{"required flag"}},
		{"compare time 0", []string{"compare", "--time", "0"}, []string{"--time", "more than zero"}},
		{"compare threads 0", []string{"compare", "--threads", "0"}, []string{"--threads", "at least 1"}},
		{"compare repeat -1", []string{"compare", "--repeat", "-1"}, []string{"--repeat", "from 1 to"}},
		{"compare buffer pool unreadable", []string{"compare", "--buffer-pool", "lots"}, []string{"--buffer-pool", "not a size"}},
		{"compare buffer pool fraction of a byte", []string{"compare", "--buffer-pool", "1.5"}, []string{"--buffer-pool", "whole number of bytes"}},
		{"empty suite", []string{"compare", "--suite", suiteFile("empty.yaml", "")}, []string{"is empty", "steps:"}},
		{"suite time 0s", []string{"compare", "--suite", suiteFile("t0.yaml", "time: 0s\nsteps: [{workload: oltp_read_write}]\n")}, []string{"time \"0s\"", "more than zero"}},
		{"suite threads 0", []string{"compare", "--suite", suiteFile("th0.yaml", "threads: 0\nsteps: [{workload: oltp_read_write}]\n")}, []string{"threads", "at least 1"}},
		{"suite ramp add 0", []string{"compare", "--suite", suiteFile("r0.yaml", "steps: [{workload: oltp_read_write, ramp: {add: 0, max: 8}}]\n")}, []string{"ramp add", "at least 1"}},
		{"suite repeat -1", []string{"compare", "--suite", suiteFile("rep.yaml", "repeat: -1\nsteps: [{workload: oltp_read_write}]\n")}, []string{"repeat", "from 1 to"}},
		{"suite option of no step", []string{"compare", "--engines", "postgres", "--suite", suiteFile("opt.yaml", "options: {table_size: \"1000\"}\nsteps: [{workload: oltp_read_write}]\n")},
			[]string{"table_size", "table-size"}},
		{"compare budget negative", []string{"compare", "--engines", "postgres", "--budget", "-5m"}, []string{"--budget", "from 0"}},
		{"compare budget below the rounds", []string{"compare", "--engines", "postgres,mariadb", "--budget", "10s"}, []string{"--budget 10s is less than", "or --budget 0"}},
		{"compare budget with one round", []string{"compare", "--engines", "postgres", "--repeat", "1", "--budget", "10m"}, []string{"needs at least 2 rounds", "--repeat 3"}},
		{"reproduce budget negative", []string{"reproduce", "shootout", "--budget", "-5m"}, []string{"--budget", "from 0"}},
		{"reproduce budget below a comparison's rounds", []string{"reproduce", "shootout", "--engines", "postgres,mariadb", "--budget", "10s"}, []string{"shootout study's run", "--budget 10s is less than"}},
		{"study threads huge", []string{"study", "mvcc", "--engines", "postgres", "--threads", "99999999999"}, []string{"--threads"}},
		{"study buffer pool", []string{"study", "mvcc", "--engines", "postgres", "--buffer-pool", "64Q"}, []string{"--buffer-pool", "not a size"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := run(c.args...)
			if code != 2 {
				t.Errorf("exit %d, want 2 (stderr %q)", code, stderr)
			}
			if lines := strings.Split(strings.TrimSpace(stderr), "\n"); len(lines) != 1 {
				t.Errorf("stderr is %d lines, want one: %q", len(lines), stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q lacks %q", stderr, w)
				}
			}
			if strings.Contains(stderr, "hunter2") || strings.Contains(stderr, "goroutine") {
				t.Errorf("stderr leaks a password or a stack trace: %q", stderr)
			}
		})
	}
}

// Sizes are read by one parser: what it reads is the size meant, in binary units.
func TestProfileSizes(t *testing.T) {
	for in, want := range map[string]int64{"1.5G": 3 << 29, "1G": 1 << 30, "512MB": 512 << 20, "512M": 512 << 20, "2GiB": 2 << 30} {
		prof, err := profileFromFlags(in, false, "fair")
		if err != nil || prof.BufferPoolBytes != want {
			t.Errorf("--buffer-pool %s: %d, %v; want %d", in, prof.BufferPoolBytes, err, want)
		}
	}
}
