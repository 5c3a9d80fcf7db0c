package oltp

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/fairbench/fairbench/internal/dialect"
	"github.com/fairbench/fairbench/internal/randgen"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/workload"
)

// createTableSQL is oltp_common.lua's create_table (workload.CreateOwned adds the ownership comment).
func (w *oltp) createTableSQL(d dialect.Dialect, n int) string {
	return fmt.Sprintf("CREATE TABLE %s(\n  id %s,\n  k INTEGER DEFAULT '0' NOT NULL,\n"+
		"  c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL,\n  PRIMARY KEY (id)\n)%s",
		tableName(n), strings.ToUpper(d.TypeName("serial", 0, 0)), d.StorageEngine(w.cfg.storageEngine))
}

func (w *oltp) Prepare(ctx context.Context, env *workload.Env) error {
	c, err := workload.ConnectClaiming(ctx, env, w.cfg.name, w.tableNames())
	if err != nil {
		return err
	}
	defer c.Close()
	// The engine's bulk path where the server takes it (LOAD DATA LOCAL needs local_infile),
	// multi-row INSERTs where it does not, as sysbench sends (dialect.Loader).
	defer workload.ReadyBulkLoad(ctx, c)()
	total := int64(w.cfg.tables) * int64(w.cfg.tableSize)
	var done atomic.Int64
	progress := func(n int64) {
		if env.Progress != nil {
			env.Progress(done.Add(n), total)
		}
	}
	tables := make([]int, w.cfg.tables)
	for i := range tables {
		tables[i] = i + 1
	}
	return workload.OnConnections(ctx, env, env.LoadThreads, tables, func(conn sqldb.Conn, n int) error {
		rng := env.Rand.New(env.Seed*1000003 + uint64(n))
		if err := w.loadTable(ctx, conn, n, rng, progress); err != nil {
			return fmt.Errorf("loading %s: %w", tableName(n), err)
		}
		return nil
	})
}

// loadTable creates one table, fills it with sysbench's rows (ids 1..table-size, k drawn with the
// --rand-type distribution, c and pad from the digit templates) and adds the secondary index
// afterwards, as sysbench does, because building it once is faster than maintaining it per row.
func (w *oltp) loadTable(ctx context.Context, c sqldb.Conn, n int, rng *randgen.Rand, progress func(int64)) error {
	d := dialect.Of(c)
	if err := workload.CreateOwned(ctx, c, tableName(n), w.createTableSQL(d, n)); err != nil {
		return err
	}
	cbuf, padbuf := make([]byte, len(cTemplate)), make([]byte, len(padTemplate))
	err := workload.BulkLoad(ctx, c, tableName(n), columns, 1, int64(w.cfg.tableSize), func(b []byte, id int64) []byte {
		return w.appendRow(b, int(id), rng, cbuf, padbuf)
	}, progress)
	if err != nil {
		return err
	}
	// Explicit ids may leave the serial counter at 1; oltp_insert's generated ids must not collide.
	if q := d.AfterExplicitIDs(tableName(n), "id", int64(w.cfg.tableSize)); q != "" {
		if err := c.Exec(ctx, q); err != nil {
			return err
		}
	}
	if w.cfg.createSecondary {
		if err := c.Exec(ctx, fmt.Sprintf("CREATE INDEX k_%d ON %s(k)", n, tableName(n))); err != nil {
			return err
		}
	}
	return nil
}

// appendRow writes one sysbench row's values as the bulk loaders' text ("1\t5\tc\tpad").
func (w *oltp) appendRow(b []byte, id int, rng *randgen.Rand, cbuf, padbuf []byte) []byte {
	k := rng.Default(1, uint32(w.cfg.tableSize))
	rng.FillString(cbuf, cTemplate)
	rng.FillString(padbuf, padTemplate)
	b = strconv.AppendInt(b, int64(id), 10)
	b = append(b, '\t')
	b = strconv.AppendUint(b, uint64(k), 10)
	b = append(b, '\t')
	b = append(b, cbuf...)
	b = append(b, '\t')
	b = append(b, padbuf...)
	return append(b, '\n')
}

var columns = []string{"id", "k", "c", "pad"}

func (w *oltp) tableNames() []string {
	names := make([]string, w.cfg.tables)
	for n := range names {
		names[n] = tableName(n + 1)
	}
	return names
}

// Cleanup drops sbtest1..N where fairbench created them and reports any it had to leave alone.
// Traits: the size at the least, a row being id, k, c (120 characters) and pad (60): about 190
// bytes of values and 20 of row header on every engine; and read-only for mixes without a write
// statement (oltp_read_only, oltp_point_select, select_random_*), which compare --read-replicas
// may then send to replicas.
func (w *oltp) Traits() workload.Traits {
	_, write, _ := w.QueriesPerTransaction()
	return workload.Traits{MinDataBytes: int64(w.cfg.tables) * int64(w.cfg.tableSize) * 200, ReadOnly: write == 0}
}

func (w *oltp) Cleanup(ctx context.Context, env *workload.Env) error {
	c, err := env.Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	return workload.DropOwned(ctx, c, w.tableNames())
}

// Check verifies that every table is there with its index and, for workloads whose transactions
// keep the row count (every delete is paired with an insert in one transaction), that no row was
// lost or duplicated.
func (w *oltp) Check(ctx context.Context, env *workload.Env) error {
	c, err := env.Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	m := w.cfg.mix
	keepsCount := m.deletes == 0 && m.inserts == 0 && (m.deleteInserts == 0 || m.trx)
	for n := 1; n <= w.cfg.tables; n++ {
		rows, err := c.Query(ctx, "SELECT COUNT(*), COUNT(DISTINCT id) FROM "+tableName(n))
		if err != nil {
			if sqldb.IsUndefinedTable(err) {
				return &workload.NotPreparedError{Workload: w.cfg.name, Detail: "table " + tableName(n) + " not found"}
			}
			return err
		}
		count, _ := strconv.ParseInt(rows[0][0], 10, 64)
		distinct, _ := strconv.ParseInt(rows[0][1], 10, 64)
		if count != distinct {
			return fmt.Errorf("%s: %d rows but %d distinct ids: the primary key is broken", tableName(n), count, distinct)
		}
		if keepsCount && count != int64(w.cfg.tableSize) {
			return fmt.Errorf("%s: %d rows, expected %d (--table-size): rows were lost or added", tableName(n), count, w.cfg.tableSize)
		}
	}
	return nil
}
