// Command fairbench runs the same database workload, the same way, on PostgreSQL, MySQL and
// MariaDB, and reports which is faster for that workload and why. See README.md.
package main

import (
	"os"

	"github.com/fairbench/fairbench/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
