package discovery

import "os"

// The clusters fairbench can start from what is installed here, and where their parts are.

// Galera is the engine name of a MariaDB Galera cluster: GaleraNodes host MariaDB servers joined
// by Debian's galera-4 provider, each with the fairness profile, all on loopback.
const Galera = "galera"

// GaleraProvider is where Debian's galera-4 package installs the wsrep provider.
var GaleraProvider = "/usr/lib/galera/libgalera_smm.so"

// DiscoverWithClusters is Discover plus the clusters that can be started here: galera where the
// host has MariaDB and galera-4. Discover itself lists single servers only, which Start takes.
func DiscoverWithClusters(mysqlRoot string) []Installation {
	insts := Discover(mysqlRoot)
	var clusters []Installation
	for _, in := range insts {
		if in.Root != "" {
			continue
		}
		if _, err := os.Stat(GaleraProvider); err == nil && in.Kind == MariaDB {
			in.Kind = Galera
			clusters = append(clusters, in)
		}
		if IsExecutable(PatroniBinary) && IsExecutable(EtcdBinary) && in.Kind == Postgres {
			in.Kind = PostgresHA
			clusters = append(clusters, in)
		}
	}
	return uniqueReleases(append(insts, clusters...))
}

// NodeKind is the kind of server each node of inst runs: MariaDB for galera, PostgreSQL for
// postgres-ha, inst.Kind otherwise.
func (i Installation) NodeKind() string {
	switch i.Kind {
	case Galera:
		return MariaDB
	case PostgresHA:
		return Postgres
	}
	return i.Kind
}

// PostgresHA is the engine name of a PostgreSQL cluster under Patroni: a leader and
// PostgresHANodes-1 streaming replicas of the host's PostgreSQL, with one etcd, all on loopback.
const PostgresHA = "postgres-ha"

// PatroniBinary is Debian's patroni.
var PatroniBinary = "/usr/bin/patroni"

// EtcdBinary is Debian's etcd-server, the store a postgres-ha cluster's Patroni nodes keep their
// leader lock and shared configuration in.
var EtcdBinary = "/usr/bin/etcd"
