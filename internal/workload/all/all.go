// Package all registers every workload family; import it for its side effect wherever workloads
// are looked up by name.
package all

import (
	_ "github.com/fairbench/fairbench/internal/workload/oltp" // sysbench's OLTP family
)
