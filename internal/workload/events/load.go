package events

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/fairbench/fairbench/internal/randgen"
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

// tables are the events workload's tables as data (workload.Table).
func (e *events) tables() []workload.Table {
	customers := uint32(e.customers)
	vc := func(n string, l int) workload.Column { return workload.Column{Name: n, Type: "varchar", Length: l} }
	return []workload.Table{
		{Name: "customers", Columns: []workload.Column{{Name: "id", Type: "int"}, vc("name", 64), vc("address", 128)},
			PrimaryKey: []string{"id"}, Rows: int64(e.customers), Chunk: int64(loadChunk),
			Row: func(r *workload.Rows, i int64, _ *randgen.Rand) {
				r.Int(i)
				r.Text(func(b []byte) []byte { return strconv.AppendInt(append(b, "Customer "...), i, 10) })
				r.Text(func(b []byte) []byte {
					b = strconv.AppendInt(b, i%997+1, 10)
					b = append(append(append(b, ' '), streets[i%int64(len(streets))]...), ", "...)
					return append(b, cities[i/int64(len(streets))%int64(len(cities))]...)
				})
			}},
		// Ingested events continue the ids after the preload (Serial).
		{Name: "events", Columns: []workload.Column{{Name: "id", Type: "bigserial"}, {Name: "customer_id", Type: "int"}, vc("action", 32), {Name: "created_at", Type: "datetime"}},
			PrimaryKey: []string{"id"}, Rows: int64(e.events), Chunk: int64(loadChunk), Serial: "id",
			Indexes: []workload.Index{{Name: "events_customer_id", Columns: []string{"customer_id"}}},
			ForeignKeys: []workload.ForeignKey{{Name: "events_customer_fk", Columns: []string{"customer_id"},
				RefTable: "customers", RefColumns: []string{"id"}, Trusted: true}},
			Row: func(r *workload.Rows, i int64, rng *randgen.Rand) {
				r.Int(i)
				r.Int(int64(rng.Uniform(1, customers)))
				action := actions[rng.Uniform(0, uint32(len(actions)-1))]
				r.Str(action)
				r.Text(func(b []byte) []byte {
					return preloadStart.Add(time.Duration(i-1)*time.Second).AppendFormat(b, "2006-01-02 15:04:05")
				})
			}},
		{Name: "events_meta", Columns: []workload.Column{vc("name", 32), vc("value", 64)}, PrimaryKey: []string{"name"}},
	}
}

// Prepare creates customers and events, loads them over --load-threads connections through the
// engine's bulk path, records the preloaded figures in events_meta for Check, then adds the keys,
// the customer_id index and the foreign key.
func (e *events) Prepare(ctx context.Context, env *workload.Env) error {
	c, err := workload.ConnectClaiming(ctx, env, e.mode, tableNames)
	if err != nil {
		return err
	}
	defer c.Close()
	tables := e.tables()
	if err := workload.CreateTables(ctx, c, tables); err != nil {
		return err
	}
	if err := workload.LoadTables(ctx, env, c, tables); err != nil {
		return err
	}
	meta := fmt.Sprintf("INSERT INTO events_meta (name, value) VALUES ('customers', '%d'), ('preloaded_events', '%d')", e.customers, e.events)
	if err := c.Exec(ctx, meta); err != nil {
		return err
	}
	return workload.KeyTables(ctx, env, c, tables)
}
