package result

// Replication methods: how a cluster's nodes keep one another's data.
const (
	// ReplicationGalera is MariaDB Galera's synchronous, certification-based replication: every
	// node takes writes, a write set is certified on every node before it commits.
	ReplicationGalera = "galera"
	// ReplicationStreaming is PostgreSQL's WAL streaming from a leader to its replicas.
	ReplicationStreaming = "streaming"
)

// Node roles.
const (
	RolePrimary = "primary" // a multi-primary node (galera): takes reads and writes
	RoleLeader  = "leader"  // the one node that takes writes (PostgreSQL primary)
	RoleReplica = "replica" // a read-only copy fed by the leader
)

// Node is one node of a cluster with its own server figures, measured as a single server's
// are: its cgroup, its engine counters over a connection to it alone. The embedded Server's
// own Nodes and Replication are never set.
type Node struct {
	Name string `json:"name"`           // node1, node2, ... (or the engine's member name)
	Role string `json:"role,omitempty"` // at the run's start: primary, leader or replica
	Addr string `json:"addr"`           // host:port of its SQL port
	// Error says what of this node could not be measured (it was killed by a fault, it stopped
	// answering); the figures it has are what was read before.
	Error string `json:"error,omitempty"`
	Server
}

// NodeInterval is one node's figures in one interval. Pointers are nil where the figure does not
// apply to the node's engine or role, or could not be read.
type NodeInterval struct {
	Node string `json:"node"`
	Role string `json:"role,omitempty"` // as the node said at the interval's end (a failover changes it)
	// Down is set when the node did not answer the interval's replication sample.
	Down  bool   `json:"down,omitempty"`
	State string `json:"state,omitempty"` // galera: wsrep_local_state_comment (Synced, Donor/Desynced, ...)

	CPUPct         float64 `json:"cpu_pct,omitempty"`
	MemMB          float64 `json:"mem_mb,omitempty"`
	DiskReadBytes  int64   `json:"disk_read_bytes,omitempty"`
	DiskWriteBytes int64   `json:"disk_write_bytes,omitempty"`
	DiskReadOps    int64   `json:"disk_read_ops,omitempty"`
	DiskWriteOps   int64   `json:"disk_write_ops,omitempty"`

	// Galera: write sets received and not yet applied (a gauge at the interval's end), the
	// fraction of the interval the node's replication was paused by flow control, certification
	// failures and brute-force aborts in the interval, the cluster size it sees, and how many
	// write sets it had committed fewer than the most advanced node (wsrep_last_committed).
	RecvQueue         *int64   `json:"recv_queue,omitempty"`
	FlowControlPaused *float64 `json:"flow_control_paused,omitempty"`
	CertFailures      *int64   `json:"cert_failures,omitempty"`
	BFAborts          *int64   `json:"bf_aborts,omitempty"`
	ClusterSize       *int64   `json:"cluster_size,omitempty"`
	LastCommitted     *int64   `json:"last_committed,omitempty"`
	CommitLag         *int64   `json:"commit_lag,omitempty"`

	// PostgreSQL streaming, replicas only, from the leader's pg_stat_replication row whose
	// application_name is the node's name: write, flush and replay lag in seconds, and the WAL
	// the replica has yet to replay, pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn).
	WriteLagS      *float64 `json:"write_lag_s,omitempty"`
	FlushLagS      *float64 `json:"flush_lag_s,omitempty"`
	ReplayLagS     *float64 `json:"replay_lag_s,omitempty"`
	ReplayLagBytes *int64   `json:"replay_lag_bytes,omitempty"`
	SyncState      string   `json:"sync_state,omitempty"` // async, sync, potential, quorum
}

// Replication sums up a cluster's replication over the measured run, from the per-interval
// samples and one more at the end. Pointers are nil where the figure is not the method's.
type Replication struct {
	Method  string `json:"method"`  // galera or streaming
	Samples int    `json:"samples"` // samples taken over the measured run

	// Galera, summed over the nodes: certification failures and brute-force aborts; the largest
	// node's fraction of the measured time paused by flow control; the largest receive queue
	// and commit lag sampled; the smallest cluster size seen.
	CertFailures      *int64   `json:"cert_failures,omitempty"`
	BFAborts          *int64   `json:"bf_aborts,omitempty"`
	FlowControlPaused *float64 `json:"flow_control_paused,omitempty"`
	RecvQueueMax      *int64   `json:"recv_queue_max,omitempty"`
	CommitLagMax      *int64   `json:"commit_lag_max,omitempty"`
	ClusterSizeMin    *int64   `json:"cluster_size_min,omitempty"`

	// Streaming, over every replica and sample: the largest and mean replay lag in seconds and
	// bytes, and the largest write and flush lag.
	ReplayLagSMax      *float64 `json:"replay_lag_s_max,omitempty"`
	ReplayLagSAvg      *float64 `json:"replay_lag_s_avg,omitempty"`
	ReplayLagBytesMax  *int64   `json:"replay_lag_bytes_max,omitempty"`
	ReplayLagBytesAvg  *float64 `json:"replay_lag_bytes_avg,omitempty"`
	WriteLagSMax       *float64 `json:"write_lag_s_max,omitempty"`
	FlushLagSMax       *float64 `json:"flush_lag_s_max,omitempty"`
	ReplicasUnanswered int      `json:"replicas_unanswered,omitempty"` // samples in which a replica had no pg_stat_replication row
}
