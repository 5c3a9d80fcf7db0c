package cli

import (
	"fmt"
	"github.com/spf13/pflag"
	"io"
	"net"

	"github.com/fairbench/fairbench/internal/livemetrics"
)

func addMetricsFlag(f *pflag.FlagSet, addr *string) {
	f.StringVar(addr, "metrics-addr", "", "serve live figures for Prometheus at http://ADDR/metrics while running, e.g. 127.0.0.1:9464 (deploy/grafana has a dashboard)")
}

// startLive starts the Prometheus endpoint when --metrics-addr is given; stop is always safe to call.
func startLive(addr string, stderr io.Writer) (exp *livemetrics.Exporter, stop func(), err error) {
	if addr == "" {
		return nil, func() {}, nil
	}
	exp, err = livemetrics.Start(addr)
	if err != nil {
		return nil, nil, badInput(err)
	}
	// ":9464" means every interface: whoever reaches this machine can read the run's figures.
	if host, _, err := net.SplitHostPort(addr); err == nil && (host == "" || net.ParseIP(host).IsUnspecified()) {
		fmt.Fprintf(stderr, "fairbench: --metrics-addr %s serves /metrics on every network interface of this machine; give 127.0.0.1:PORT to keep it local\n", addr)
	}
	return exp, func() { _ = exp.Close() }, nil
}
