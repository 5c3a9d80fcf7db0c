// Package all registers every workload family; import it for its side effect wherever workloads
// are looked up by name.
package all

import (
	_ "github.com/fairbench/fairbench/internal/pgbenchscript"     // pgbench scripts as they are
	_ "github.com/fairbench/fairbench/internal/workload/events"   // event ingestion and lookup
	_ "github.com/fairbench/fairbench/internal/workload/oltp"     // sysbench's OLTP family
	_ "github.com/fairbench/fairbench/internal/workload/payments" // money transfers
	_ "github.com/fairbench/fairbench/internal/workload/tpcb"     // pgbench's TPC-B-like
	_ "github.com/fairbench/fairbench/internal/workload/tpcc"     // TPC-C
	_ "github.com/fairbench/fairbench/internal/workload/tpch"     // TPC-H
	_ "github.com/fairbench/fairbench/internal/workloadfile"      // a user's own workload, from FILE.yaml
)
