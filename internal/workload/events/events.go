// Package events is an append-heavy event log beside the customers it belongs to: events_ingest
// inserts one event per transaction with an auto-increment id, as a tracking or audit endpoint
// does, and events_join reads one event by id joined with its customer, as the page that shows
// it does. Both run on one dataset, so a suite prepares it once.
package events

import (
	"context"
	"fmt"
	"strconv"

	"github.com/fairbench/fairbench/internal/randgen"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/workload"
)

// Parents first, as ClaimTables and DropOwned want them.
var tableNames = []string{"customers", "events", "events_meta"}

// actions are the event types; ingest draws one uniformly.
var actions = []string{"login", "logout", "search", "view_item", "add_to_cart", "remove_from_cart",
	"checkout", "payment", "review", "support_ticket"}

// actionArgs holds the actions already boxed, so passing one as a parameter allocates nothing.
var actionArgs = func() []any {
	out := make([]any, len(actions))
	for i, a := range actions {
		out[i] = a
	}
	return out
}()

const (
	ingest = "events_ingest"
	join   = "events_join"
)

var options = []workload.Option{
	{Name: "customers", Default: "100000", Help: "rows in customers", Max: workload.MaxInt},
	{Name: "events", Default: "1000000", Help: "events loaded by prepare (ids 1..N), the rows events_join reads", Max: workload.MaxInt},
}

func init() {
	for _, s := range []struct{ name, desc string }{
		{ingest, "event ingestion: one INSERT of an event (random customer and action, auto-increment id), autocommit"},
		{join, "event lookup: one SELECT of an event by id joined with its customer, autocommit"},
	} {
		mode := s.name
		workload.Register(workload.Spec{
			Name:        s.name,
			Description: s.desc,
			Options:     options,
			Dataset:     "events",
			DataOptions: []string{"customers", "events"},
			New: func(o workload.Options) (workload.Workload, error) {
				e := &events{mode: mode}
				var err error
				if e.customers, err = o.Int("customers", 1); err != nil {
					return nil, err
				}
				if e.events, err = o.Int("events", 1); err != nil {
					return nil, err
				}
				return e, nil
			},
		})
	}
}

type events struct {
	mode              string
	customers, events int
}

func (e *events) missing(err error) error {
	if sqldb.IsUndefinedTable(err) {
		return &workload.NotPreparedError{Workload: e.mode, Detail: "tables customers and events not found"}
	}
	return err
}

// readMeta returns what Prepare recorded: the customers and the preloaded events.
func (e *events) readMeta(ctx context.Context, c sqldb.Conn) (customers, preloaded int64, err error) {
	rows, err := c.Query(ctx, "SELECT name, value FROM events_meta")
	if err != nil {
		return 0, 0, e.missing(err)
	}
	m := map[string]string{}
	for _, r := range rows {
		m[r[0]] = r[1]
	}
	for _, f := range []struct {
		key string
		dst *int64
	}{{"customers", &customers}, {"preloaded_events", &preloaded}} {
		if *f.dst, err = strconv.ParseInt(m[f.key], 10, 64); err != nil {
			return 0, 0, fmt.Errorf("events_meta %s = %q is not a whole number: prepare again", f.key, m[f.key])
		}
	}
	return customers, preloaded, nil
}

const (
	sqlIngest = "INSERT INTO events (customer_id, action, created_at) VALUES (?, ?, CURRENT_TIMESTAMP)"
	sqlJoin   = "SELECT e.id, c.name, c.address, e.action FROM events e JOIN customers c ON c.id = e.customer_id WHERE e.id = ?"
)

// NewWorker makes sure the tables hold what the options say before preparing its statement: a
// customer id past the table would fail the foreign key, an event id past the preload would
// find nothing.
func (e *events) NewWorker(ctx context.Context, conn sqldb.Conn, rng *randgen.Rand, thread, threads int) (workload.Worker, error) {
	if thread == 0 {
		customers, preloaded, err := e.readMeta(ctx, conn)
		if err != nil {
			return nil, err
		}
		if customers != int64(e.customers) || preloaded != int64(e.events) {
			return nil, fmt.Errorf("the events tables were prepared with --customers %d --events %d, not %d and %d: pass the same options",
				customers, preloaded, e.customers, e.events)
		}
	}
	sql := sqlIngest
	if e.mode == join {
		sql = sqlJoin
	}
	st, err := conn.Prepare(ctx, sql)
	if err != nil {
		return nil, e.missing(err)
	}
	if e.mode == join {
		return &joinWorker{stmt: st, rng: rng, events: uint32(e.events)}, nil
	}
	return &ingestWorker{stmt: st, rng: rng, customers: uint32(e.customers)}, nil
}

// Customers and event ids are drawn with --rand-type, so skewed runs have hot customers and
// hot events.
type ingestWorker struct {
	stmt      sqldb.Stmt
	rng       *randgen.Rand
	customers uint32
}

func (w *ingestWorker) Transaction(ctx context.Context, q *workload.Txn) error {
	customer := int64(w.rng.Default(1, w.customers))
	action := actionArgs[w.rng.Uniform(0, uint32(len(actionArgs)-1))]
	_, err := w.stmt.Exec(ctx, customer, action)
	return err
}

type joinWorker struct {
	stmt   sqldb.Stmt
	rng    *randgen.Rand
	events uint32
}

func (w *joinWorker) Transaction(ctx context.Context, q *workload.Txn) error {
	id := int64(w.rng.Default(1, w.events))
	n, err := w.stmt.Query(ctx, id)
	if err != nil {
		return err
	}
	if n != 1 {
		return fmt.Errorf("event %d joined with its customer gave %d rows, want 1: preloaded events or their customers were removed", id, n)
	}
	return nil
}

// Cleanup drops the tables fairbench created and leaves any others alone.
// Traits: events declares nothing beyond the defaults (one kind of transaction, writes).
func (e *events) Traits() workload.Traits { return workload.Traits{} }

func (e *events) Cleanup(ctx context.Context, env *workload.Env) error {
	c, err := env.Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	return workload.DropOwned(ctx, c, tableNames)
}
