package events

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/fairbench/fairbench/internal/dialect"
	"github.com/fairbench/fairbench/internal/randgen"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/workload"
)

var streets = []string{"Main Street", "Oak Avenue", "Station Road", "Harbour Lane", "Mill Road", "Church Street", "Park Drive", "High Street"}
var cities = []string{"Springfield", "Riverton", "Lakeside", "Fairview", "Greenville", "Bristol", "Madison", "Georgetown"}

// preloadStart is the created_at of event 1; event i is i-1 seconds later, so the preload reads
// as a log that grew over the weeks before the run.
var preloadStart = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// loadChunk is how many rows one loading job writes (a variable so tests can split small
// tables). Each job seeds its own generator from the job's position, so the data does not
// depend on how many connections load it.
var loadChunk = 200000

type loadJob struct {
	table  string
	cols   []string
	lo, hi int
	chunk  int
	gen    func(r *workload.Rows, i int, rng *randgen.Rand)
}

func (e *events) jobs() []loadJob {
	var jobs []loadJob
	add := func(table string, cols []string, rows int, gen func(r *workload.Rows, i int, rng *randgen.Rand)) {
		for lo := 1; lo <= rows; lo += loadChunk {
			jobs = append(jobs, loadJob{table: table, cols: cols, lo: lo, hi: min(lo+loadChunk-1, rows), chunk: len(jobs), gen: gen})
		}
	}
	add("customers", []string{"id", "name", "address"}, e.customers, func(r *workload.Rows, i int, _ *randgen.Rand) {
		r.Int(int64(i))
		r.Text(func(b []byte) []byte { return strconv.AppendInt(append(b, "Customer "...), int64(i), 10) })
		r.Text(func(b []byte) []byte {
			b = strconv.AppendInt(b, int64(i%997+1), 10)
			b = append(append(append(b, ' '), streets[i%len(streets)]...), ", "...)
			return append(b, cities[i/len(streets)%len(cities)]...)
		})
	})
	customers := uint32(e.customers)
	add("events", []string{"id", "customer_id", "action", "created_at"}, e.events, func(r *workload.Rows, i int, rng *randgen.Rand) {
		r.Int(int64(i))
		r.Int(int64(rng.Uniform(1, customers)))
		action := actions[rng.Uniform(0, uint32(len(actions)-1))]
		r.Text(func(b []byte) []byte { return append(b, action...) })
		r.Text(func(b []byte) []byte {
			return preloadStart.Add(time.Duration(i-1)*time.Second).AppendFormat(b, "2006-01-02 15:04:05")
		})
	})
	return jobs
}

// Prepare creates customers and events, loads them over --load-threads connections (COPY,
// LOAD DATA LOCAL), then adds the keys, the customer_id index
// and the foreign key, and records the preloaded figures in events_meta for Check.
func (e *events) Prepare(ctx context.Context, env *workload.Env) error {
	c, err := workload.ConnectClaiming(ctx, env, e.mode, tableNames)
	if err != nil {
		return err
	}
	defer c.Close()
	d := dialect.Of(c)
	if err := createTables(ctx, c, d); err != nil {
		return err
	}
	defer workload.ReadyBulkLoad(ctx, c)()
	if err := e.loadRows(ctx, env); err != nil {
		return err
	}
	return e.addKeys(ctx, env, c, d)
}

// createTables creates the three tables. The primary keys are declared up front where the
// engine clusters rows by them (InnoDB), and added after the load elsewhere, where building
// them once is cheaper.
func createTables(ctx context.Context, c sqldb.Conn, d dialect.Dialect) error {
	ts, serial := d.TypeName("datetime", 0, 0), d.TypeName("bigserial", 0, 0)
	create := []struct{ table, cols, pk string }{
		{"customers", "id int NOT NULL, name varchar(64) NOT NULL, address varchar(128) NOT NULL", "id"},
		{"events", "id " + serial + ", customer_id int NOT NULL, action varchar(32) NOT NULL, created_at " + ts + " NOT NULL", "id"},
		{"events_meta", "name varchar(32) NOT NULL, value varchar(64) NOT NULL", "name"},
	}
	for _, t := range create {
		cols := t.cols
		if d.Caps().PrimaryKeyAtCreate {
			cols += ", PRIMARY KEY (" + t.pk + ")"
		}
		if err := workload.CreateOwned(ctx, c, t.table, fmt.Sprintf("CREATE TABLE %s (%s)", t.table, cols)); err != nil {
			return err
		}
	}
	return nil
}

// loadRows loads customers and events over --load-threads connections, through the engine's
// bulk path (dialect.Loader).
func (e *events) loadRows(ctx context.Context, env *workload.Env) error {
	total := int64(e.customers + e.events)
	var done atomic.Int64
	progress := func(n int64) {
		if env.Progress != nil {
			env.Progress(done.Add(n), total)
		}
	}
	return workload.OnConnections(ctx, env, env.LoadThreads, e.jobs(), func(conn sqldb.Conn, j loadJob) error {
		rng := env.Rand.New(env.Seed*1000003 + uint64(j.chunk))
		if err := copyRows(ctx, conn, j, rng, progress); err != nil {
			return fmt.Errorf("loading %s: %w", j.table, err)
		}
		return nil
	})
}

// addKeys adds the keys and the customer_id index table by table in parallel, then the foreign
// key, which needs the customers' key, then the statistics: on PostgreSQL a VACUUM ANALYZE, as
// pgbench -i does, so the first run does not pay for setting hint bits on freshly loaded rows.
// It records the preloaded figures in events_meta for Check on the way.
func (e *events) addKeys(ctx context.Context, env *workload.Env, c sqldb.Conn, d dialect.Dialect) error {
	meta := []string{"INSERT INTO events_meta (name, value) VALUES " +
		fmt.Sprintf("('customers', '%d'), ('preloaded_events', '%d')", e.customers, e.events)}
	var eventKeys []string
	if !d.Caps().PrimaryKeyAtCreate {
		meta = append(meta, "ALTER TABLE events_meta ADD PRIMARY KEY (name)", "ALTER TABLE customers ADD PRIMARY KEY (id)")
		eventKeys = append(eventKeys, "ALTER TABLE events ADD PRIMARY KEY (id)")
	}
	eventKeys = append(eventKeys, "CREATE INDEX events_customer_id ON events (customer_id)")
	// Explicit ids may leave the serial counter at 1; ingested events continue after the preload.
	if q := d.AfterExplicitIDs("events", "id", int64(e.events)); q != "" {
		eventKeys = append(eventKeys, q)
	}
	// The rows are consistent by construction; with checks off InnoDB adds the foreign key in
	// place instead of copying the table to validate it.
	fk := append(d.LoadingSession(), "ALTER TABLE events ADD CONSTRAINT events_customer_fk FOREIGN KEY (customer_id) REFERENCES customers (id)")
	keys := [][]string{meta, eventKeys}
	if err := workload.OnConnections(ctx, env, env.LoadThreads, keys, func(conn sqldb.Conn, ddl []string) error { return workload.ExecAll(ctx, conn, ddl) }); err != nil {
		return err
	}
	if err := workload.ExecAll(ctx, c, fk); err != nil {
		return err
	}
	return workload.OnConnections(ctx, env, env.LoadThreads, tableNames, func(conn sqldb.Conn, t string) error {
		return d.Maintain(ctx, conn, t)
	})
}

func copyRows(ctx context.Context, c sqldb.Conn, j loadJob, rng *randgen.Rand, progress func(int64)) error {
	r := &workload.Rows{}
	return workload.BulkLoad(ctx, c, j.table, j.cols, int64(j.lo), int64(j.hi), func(b []byte, i int64) []byte {
		r.Buf = b
		r.Reset()
		j.gen(r, int(i), rng)
		r.End()
		return r.Buf
	}, progress)
}
