package cli

import (
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"github.com/fairbench/fairbench/internal/compare"
	"github.com/fairbench/fairbench/internal/netsim"
)

// clientFlags are compare's and reproduce's simulated client hosts: --clients N and --network.
type clientFlags struct {
	clients int
	network string
}

func (c *clientFlags) register(fs *pflag.FlagSet) {
	fs.IntVar(&c.clients, "clients", 0, fmt.Sprintf("run each step's load from N simulated client hosts (network namespaces, 1 to %d), one fairbench process each, merged into the step's result with a row per host (root)", netsim.MaxHosts))
	fs.StringVar(&c.network, "network", "", "put a network distance between clients and server: rtt=0.65ms[,bandwidth=2.5gbit] (the clients run in a namespace of their own; netem where the kernel has it, else a delaying relay; root)")
}

// apply checks the flags and sets them on o; errors are the user's (exit 2).
func (c *clientFlags) apply(o *compare.Options) error {
	if c.clients < 0 || c.clients > netsim.MaxHosts {
		return badInputf("bad --clients %d: give a number of client hosts from 1 to %d (or leave it out)", c.clients, netsim.MaxHosts)
	}
	o.Clients = c.clients
	if c.network != "" {
		spec, err := netsim.ParseSpec(c.network)
		if err != nil {
			return badInput(err)
		}
		o.Network = &spec
	}
	if (o.Clients > 0 || o.Network != nil) && os.Geteuid() != 0 {
		return badInput(netsim.ErrNotRoot)
	}
	return nil
}
