package servermetrics

import (
	"context"
	"sync"
	"time"

	"github.com/fairbench/fairbench/internal/dialect"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/sqldb"
)

// nodeReading is one node's replication state at one moment, as its engine reports it.
type nodeReading struct {
	ok          bool
	role, state string
	// Galera's status variables: cumulative counters and gauges.
	galera map[string]int64
	// Streaming: a leader's pg_stat_replication rows, by application_name.
	replicas map[string]streamRow
}

// streamRow is one pg_stat_replication row: lags are nil where PostgreSQL shows NULL.
type streamRow struct {
	syncState                     string
	writeLag, flushLag, replayLag *float64
	replayBytes                   *int64
}

// readNode reads one node's replication through its engine's dialect.
func readNode(ctx context.Context, c sqldb.Conn) (nodeReading, error) {
	st, err := dialect.Of(c).ReplicationStatus(ctx, c)
	if err != nil {
		return nodeReading{}, err
	}
	r := nodeReading{ok: true, role: result.RolePrimary, state: st.State, galera: st.Galera}
	switch {
	case st.Replica:
		r.role = result.RoleReplica
	case st.Replicas != nil:
		r.role, r.replicas = result.RoleLeader, map[string]streamRow{}
		for name, l := range st.Replicas {
			r.replicas[name] = streamRow{syncState: l.SyncState, writeLag: roundSeconds(l.WriteLag), flushLag: roundSeconds(l.FlushLag),
				replayLag: roundSeconds(l.ReplayLag), replayBytes: l.ReplayBytes}
		}
	}
	return r, nil
}

// roundSeconds keeps a lag to the microsecond.
func roundSeconds(v *float64) *float64 {
	if v == nil {
		return nil
	}
	r := round(*v, 1e6)
	return &r
}

// replWatch samples a cluster's replication over connections of its own, one per node, opened
// again after any failure (a node killed and restarted by a fault answers again).
type replWatch struct {
	method string
	nodes  []ClusterNode
	read   func(context.Context, sqldb.Conn) (nodeReading, error)

	mu        sync.Mutex
	conns     []sqldb.Conn
	prev      []nodeReading
	prevAt    time.Time
	measuring bool
	startAt   time.Time
	tot       replTotals
}

func newReplWatch(method string, nodes []ClusterNode) *replWatch {
	return &replWatch{method: method, nodes: nodes, read: readNode, conns: make([]sqldb.Conn, len(nodes))}
}

// sample reads every node at once; a node that fails is !ok, and its connection is dropped.
func (w *replWatch) sample(ctx context.Context) []nodeReading {
	out := make([]nodeReading, len(w.nodes))
	var wg sync.WaitGroup
	for i, n := range w.nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if w.conns[i] == nil {
				c, err := sqldb.Open(ctx, n.Target)
				if err != nil {
					return
				}
				w.conns[i] = c
			}
			r, err := w.read(ctx, w.conns[i])
			if err != nil {
				w.conns[i].Close()
				w.conns[i] = nil
				return
			}
			out[i] = r
		}()
	}
	wg.Wait()
	return out
}

// start takes the first reading; every node must answer it.
func (w *replWatch) start(ctx context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	rs := w.sample(ctx)
	for i, r := range rs {
		if !r.ok {
			c, err := sqldb.Open(ctx, w.nodes[i].Target)
			if err != nil {
				return err
			}
			defer c.Close()
			if _, err := w.read(ctx, c); err != nil {
				return err
			}
		}
	}
	w.prev, w.prevAt = rs, time.Now()
	w.startAt = w.prevAt
	return nil
}

// measureStart starts the totals afresh from a new reading.
func (w *replWatch) measureStart(ctx context.Context) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.prev, w.prevAt = w.sample(ctx), time.Now()
	w.measuring, w.startAt, w.tot = true, w.prevAt, replTotals{}
}

// interval fills each node's replication figures for the interval since the last reading.
func (w *replWatch) interval(ctx context.Context, nodes []result.NodeInterval) {
	w.mu.Lock()
	defer w.mu.Unlock()
	rs, now := w.sample(ctx), time.Now()
	w.fill(nodes, rs, now)
	w.prev, w.prevAt = rs, now
}

// finish takes a last reading, closes the connections and returns the run's totals.
func (w *replWatch) finish(ctx context.Context) *result.Replication {
	w.mu.Lock()
	defer w.mu.Unlock()
	rs, now := w.sample(ctx), time.Now()
	w.fill(make([]result.NodeInterval, len(w.nodes)), rs, now)
	for i, c := range w.conns {
		if c != nil {
			c.Close()
			w.conns[i] = nil
		}
	}
	return w.tot.result(w.method, now.Sub(w.startAt))
}

// fill sets each node's figures from the readings and adds them to the totals.
func (w *replWatch) fill(nodes []result.NodeInterval, rs []nodeReading, now time.Time) {
	wall := now.Sub(w.prevAt)
	if w.measuring {
		w.tot.samples++
	}
	var leader *nodeReading
	maxCommitted := int64(-1)
	for i := range rs {
		if rs[i].role == result.RoleLeader && leader == nil {
			leader = &rs[i]
		}
		if v, ok := rs[i].galera["wsrep_last_committed"]; ok {
			maxCommitted = max(maxCommitted, v)
		}
	}
	for i := range nodes {
		nodes[i].Node = w.nodes[i].Name
		r := rs[i]
		if !r.ok {
			nodes[i].Down, nodes[i].Role = true, "" // what it is now, nobody can say
			continue
		}
		nodes[i].Role, nodes[i].State = r.role, r.state
		switch w.method {
		case result.ReplicationGalera:
			w.fillGalera(&nodes[i], r, w.prev[i], wall, maxCommitted)
		case result.ReplicationStreaming:
			if r.role == result.RoleReplica {
				w.fillStreaming(&nodes[i], leader, len(rs))
			}
		}
	}
}

// fillGalera sets one galera node's figures: gauges as read, counters as the change since the
// node's previous reading (none when it had none: it was down).
func (w *replWatch) fillGalera(n *result.NodeInterval, r, prev nodeReading, wall time.Duration, maxCommitted int64) {
	gauge := func(k string) *int64 {
		if v, ok := r.galera[k]; ok {
			return &v
		}
		return nil
	}
	delta := func(k string) *int64 {
		a, ok := r.galera[k]
		b, had := prev.galera[k]
		if !ok || !prev.ok || !had {
			return nil
		}
		d := a - b
		if d < 0 { // the node restarted: what it counted since
			d = a
		}
		return &d
	}
	n.RecvQueue, n.ClusterSize, n.LastCommitted = gauge("wsrep_local_recv_queue"), gauge("wsrep_cluster_size"), gauge("wsrep_last_committed")
	n.CertFailures, n.BFAborts = delta("wsrep_local_cert_failures"), delta("wsrep_local_bf_aborts")
	if n.LastCommitted != nil {
		lag := maxCommitted - *n.LastCommitted
		n.CommitLag = &lag
	}
	if p := delta("wsrep_flow_control_paused_ns"); p != nil && wall > 0 {
		f := round(min(1, float64(*p)/float64(wall.Nanoseconds())), 10000)
		n.FlowControlPaused = &f
		if w.measuring {
			w.tot.addPaused(n.Node, *p)
		}
	}
	if w.measuring {
		w.tot.addGalera(n)
	}
}

// fillStreaming sets one replica's figures from the leader's pg_stat_replication row named after
// it; a single replica's row is its own whatever its name.
func (w *replWatch) fillStreaming(n *result.NodeInterval, leader *nodeReading, nodes int) {
	if leader == nil {
		return
	}
	row, ok := leader.replicas[n.Node]
	if !ok && len(leader.replicas) == 1 && nodes == 2 {
		for _, only := range leader.replicas {
			row, ok = only, true
		}
	}
	if !ok {
		if w.measuring {
			w.tot.unanswered++
		}
		return
	}
	n.SyncState, n.WriteLagS, n.FlushLagS, n.ReplayLagS, n.ReplayLagBytes = row.syncState, row.writeLag, row.flushLag, row.replayLag, row.replayBytes
	// PostgreSQL shows NULL lags once a replica has replayed everything and no new WAL came:
	// nothing to wait for, so no lag.
	if n.ReplayLagBytes != nil && *n.ReplayLagBytes == 0 {
		zero := 0.0
		for _, p := range []**float64{&n.WriteLagS, &n.FlushLagS, &n.ReplayLagS} {
			if *p == nil {
				*p = &zero
			}
		}
	}
	if w.measuring {
		w.tot.addStreaming(n)
	}
}

// replTotals accumulates the measured run's replication figures.
type replTotals struct {
	samples, unanswered       int
	certFailures, bfAborts    *int64
	pausedNS                  map[string]int64
	recvQueueMax, commitLag   *int64
	clusterSizeMin            *int64
	replayLagMax, writeLagMax *float64
	flushLagMax               *float64
	replayLagSum              float64
	replayLagN                int
	replayBytesMax            *int64
	replayBytesSum            float64
	replayBytesN              int
}

func (t *replTotals) addPaused(node string, ns int64) {
	if t.pausedNS == nil {
		t.pausedNS = map[string]int64{}
	}
	t.pausedNS[node] += ns
}

func (t *replTotals) addGalera(n *result.NodeInterval) {
	t.certFailures = addInt(t.certFailures, n.CertFailures)
	t.bfAborts = addInt(t.bfAborts, n.BFAborts)
	t.recvQueueMax = maxInt(t.recvQueueMax, n.RecvQueue)
	t.commitLag = maxInt(t.commitLag, n.CommitLag)
	if v := n.ClusterSize; v != nil && (t.clusterSizeMin == nil || *v < *t.clusterSizeMin) {
		t.clusterSizeMin = ptr(*v)
	}
}

func (t *replTotals) addStreaming(n *result.NodeInterval) {
	t.writeLagMax = maxFloat(t.writeLagMax, n.WriteLagS)
	t.flushLagMax = maxFloat(t.flushLagMax, n.FlushLagS)
	t.replayLagMax = maxFloat(t.replayLagMax, n.ReplayLagS)
	t.replayBytesMax = maxInt(t.replayBytesMax, n.ReplayLagBytes)
	if n.ReplayLagS != nil {
		t.replayLagSum += *n.ReplayLagS
		t.replayLagN++
	}
	if n.ReplayLagBytes != nil {
		t.replayBytesSum += float64(*n.ReplayLagBytes)
		t.replayBytesN++
	}
}

// result is the totals as the results file holds them; wall is the measured time, over which
// flow control's pause is a fraction.
func (t *replTotals) result(method string, wall time.Duration) *result.Replication {
	r := &result.Replication{Method: method, Samples: t.samples, ReplicasUnanswered: t.unanswered,
		CertFailures: t.certFailures, BFAborts: t.bfAborts, RecvQueueMax: t.recvQueueMax, CommitLagMax: t.commitLag,
		ClusterSizeMin: t.clusterSizeMin, ReplayLagSMax: t.replayLagMax, WriteLagSMax: t.writeLagMax,
		FlushLagSMax: t.flushLagMax, ReplayLagBytesMax: t.replayBytesMax}
	if len(t.pausedNS) > 0 && wall > 0 {
		most := int64(0)
		for _, ns := range t.pausedNS {
			most = max(most, ns)
		}
		r.FlowControlPaused = ptr(round(min(1, float64(most)/float64(wall.Nanoseconds())), 10000))
	}
	if t.replayLagN > 0 {
		r.ReplayLagSAvg = ptr(round(t.replayLagSum/float64(t.replayLagN), 1e6))
	}
	if t.replayBytesN > 0 {
		r.ReplayLagBytesAvg = ptr(round(t.replayBytesSum/float64(t.replayBytesN), 10))
	}
	return r
}

func ptr[T any](v T) *T { return &v }

func addInt(sum, v *int64) *int64 {
	if v == nil {
		return sum
	}
	if sum == nil {
		return ptr(*v)
	}
	return ptr(*sum + *v)
}

func maxInt(m, v *int64) *int64 {
	if v == nil || (m != nil && *m >= *v) {
		return m
	}
	return ptr(*v)
}

func maxFloat(m, v *float64) *float64 {
	if v == nil || (m != nil && *m >= *v) {
		return m
	}
	return ptr(*v)
}
