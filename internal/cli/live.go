package cli

import (
	"github.com/spf13/pflag"

	"github.com/fairbench/fairbench/internal/livemetrics"
)

func addMetricsFlag(f *pflag.FlagSet, addr *string) {
	f.StringVar(addr, "metrics-addr", "", "serve live figures for Prometheus at http://ADDR/metrics while running, e.g. 127.0.0.1:9464 (deploy/grafana has a dashboard)")
}

// startLive starts the Prometheus endpoint when --metrics-addr is given; stop is always safe to call.
func startLive(addr string) (exp *livemetrics.Exporter, stop func(), err error) {
	if addr == "" {
		return nil, func() {}, nil
	}
	exp, err = livemetrics.Start(addr)
	if err != nil {
		return nil, nil, badInput(err)
	}
	return exp, func() { _ = exp.Close() }, nil
}
