package compare

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/engine/discovery"
	"github.com/fairbench/fairbench/internal/runspec"
	"github.com/fairbench/fairbench/internal/suite"
)

func TestCheckFaults(t *testing.T) {
	galera := Contender{Installation: discovery.Installation{Kind: discovery.Galera, Version: "10.11.19"}}
	single := Contender{Installation: discovery.Installation{Kind: discovery.MariaDB, Version: "10.11.19"}}
	steps := []suite.Resolved{{Workload: "payments"}}
	steps[0].Time = 20 * time.Second
	for _, tc := range []struct {
		insts   []Contender
		faults  []string
		clients int
		err     string
	}{
		{[]Contender{galera}, nil, 0, ""},
		{[]Contender{galera}, []string{"kill-node@5s", "stop-node@8s,for=2s,node=node1", "partition-node@12s,for=3s"}, 0, ""},
		{[]Contender{galera, single}, []string{"kill-node@5s"}, 0, "is a single server"},
		{[]Contender{galera}, []string{"kill-leader@5s"}, 0, "none leads"},
		{[]Contender{galera}, []string{"kill-node@5s,node=node4"}, 0, `no node "node4"`},
		{[]Contender{galera}, []string{"stop-node@15s,for=10s"}, 0, "past the measured time"},
		{[]Contender{galera}, []string{"kill-node@5s"}, 2, "simulated client hosts"},
	} {
		fs, err := runspec.ParseFaults("--fault", tc.faults)
		if err != nil {
			t.Fatal(err)
		}
		err = checkFaults(&Options{Faults: fs, Clients: tc.clients}, tc.insts, steps)
		var ie *runspec.InputError
		if (tc.err == "") != (err == nil) || err != nil && (!strings.Contains(err.Error(), tc.err) || !errors.As(err, &ie)) {
			t.Errorf("%v: %v, want %q (an input error)", tc.faults, err, tc.err)
		}
	}
}
