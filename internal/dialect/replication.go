package dialect

import (
	"context"
	"strconv"
	"strings"

	"github.com/fairbench/fairbench/internal/sqldb"
)

// ReplicationStatus is one cluster node's replication as its engine reports it: Galera's status
// variables on the MySQL family (every node a primary), or whether a PostgreSQL node is a
// streaming replica and, on the leader, its replicas' lags.
type ReplicationStatus struct {
	Replica bool   // a streaming replica (PostgreSQL in recovery)
	State   string // Galera's wsrep_local_state_comment ("Synced")
	// Galera holds the wsrep status variables GaleraStatus names: counters and gauges.
	Galera map[string]int64
	// Replicas are a streaming leader's pg_stat_replication rows, by application_name.
	Replicas map[string]ReplicaLag
}

// ReplicaLag is one pg_stat_replication row: lags are nil where PostgreSQL shows NULL.
type ReplicaLag struct {
	SyncState                     string
	WriteLag, FlushLag, ReplayLag *float64 // seconds
	ReplayBytes                   *int64   // WAL the replica has yet to replay
}

// GaleraStatus are the wsrep status variables a Galera node's ReplicationStatus holds.
var GaleraStatus = []string{"wsrep_local_recv_queue", "wsrep_flow_control_paused_ns", "wsrep_local_cert_failures",
	"wsrep_local_bf_aborts", "wsrep_cluster_size", "wsrep_last_committed"}

// ReplicationStatus reads a Galera node's wsrep status.
func (innodb) ReplicationStatus(ctx context.Context, c sqldb.Conn) (ReplicationStatus, error) {
	rows, err := c.Query(ctx, "SHOW GLOBAL STATUS WHERE Variable_name IN ("+NameList(append([]string{"wsrep_local_state_comment"}, GaleraStatus...))+")")
	if err != nil {
		return ReplicationStatus{}, err
	}
	r := ReplicationStatus{Galera: map[string]int64{}}
	for _, row := range rows {
		if len(row) < 2 {
			continue
		}
		name := strings.ToLower(row[0])
		if name == "wsrep_local_state_comment" {
			r.State = row[1]
			continue
		}
		if v, err := ParseCount(row[1]); err == nil {
			r.Galera[name] = v
		}
	}
	return r, nil
}

// pgReplicationQuery reads a leader's view of its replicas: pg_stat_replication's lags in
// seconds and the WAL each has yet to replay in bytes.
const pgReplicationQuery = `SELECT application_name, COALESCE(sync_state, ''),
	EXTRACT(epoch FROM write_lag), EXTRACT(epoch FROM flush_lag), EXTRACT(epoch FROM replay_lag),
	pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn)::bigint
	FROM pg_stat_replication`

// ReplicationStatus reads whether a PostgreSQL node is a replica and, on a leader, its replicas.
func (postgres) ReplicationStatus(ctx context.Context, c sqldb.Conn) (ReplicationStatus, error) {
	rows, err := c.Query(ctx, "SELECT pg_is_in_recovery()")
	if err != nil {
		return ReplicationStatus{}, err
	}
	if len(rows) == 1 && len(rows[0]) == 1 && (rows[0][0] == "t" || rows[0][0] == "true") {
		return ReplicationStatus{Replica: true}, nil
	}
	if rows, err = c.Query(ctx, pgReplicationQuery); err != nil {
		return ReplicationStatus{}, err
	}
	r := ReplicationStatus{Replicas: map[string]ReplicaLag{}}
	for _, row := range rows {
		if len(row) < 6 {
			continue
		}
		r.Replicas[row[0]] = ReplicaLag{SyncState: row[1], WriteLag: optFloat(row[2]), FlushLag: optFloat(row[3]),
			ReplayLag: optFloat(row[4]), ReplayBytes: optCount(row[5])}
	}
	return r, nil
}

func optFloat(s string) *float64 {
	v, err := strconv.ParseFloat(s, 64)
	if s == "" || err != nil {
		return nil
	}
	return &v
}

func optCount(s string) *int64 {
	v, err := ParseCount(s)
	if s == "" || err != nil {
		return nil
	}
	return &v
}
