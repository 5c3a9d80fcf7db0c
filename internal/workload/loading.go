package workload

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/fairbench/fairbench/internal/dialect"
	"github.com/fairbench/fairbench/internal/sqldb"
)

// WaitForCluster makes every later statement on a Galera node wait until the node has applied
// what the cluster committed before it (wsrep_sync_wait for reads, writes and SHOW). A CREATE
// TABLE returns once its own node ran it; a loading connection on another node could otherwise
// insert before that node had the table (seen in CI: "Table 'fairbench.banks' doesn't exist").
// Elsewhere the setting is refused or means nothing, so its error is ignored.
func WaitForCluster(ctx context.Context, c sqldb.Conn) {
	if q := dialect.Of(c).ReadYourWrites(); q != "" {
		_ = c.Exec(ctx, q)
	}
}

// OnConnections runs do for every job on up to threads connections of its own (at least one)
// and returns the first failure; no job starts after one has failed or ctx is done. Loading is
// where workloads spend their setup time, and one table, warehouse or chunk per job keeps every
// connection busy.
func OnConnections[J any](ctx context.Context, env *Env, threads int, jobs []J, do func(sqldb.Conn, J) error) error {
	threads = max(1, min(threads, len(jobs)))
	next := make(chan J)
	errs := make(chan error, threads)
	var wg sync.WaitGroup
	for i := 0; i < threads; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := env.Connect(ctx)
			if err != nil {
				errs <- err
				return
			}
			defer conn.Close()
			WaitForCluster(ctx, conn)
			for j := range next {
				if err := do(conn, j); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	var firstErr error
feed:
	for _, j := range jobs {
		select {
		case next <- j:
		case firstErr = <-errs:
			break feed
		case <-ctx.Done():
			firstErr = ctx.Err()
			break feed
		}
	}
	close(next)
	wg.Wait()
	close(errs)
	if firstErr == nil {
		firstErr = <-errs
	}
	return firstErr
}

// ExecAll runs statements in order on c, naming the one that failed.
func ExecAll(ctx context.Context, c sqldb.Conn, stmts []string) error {
	for _, q := range stmts {
		if err := c.Exec(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return nil
}

// ReadyBulkLoad readies the server for BulkLoad (LOAD DATA LOCAL needs local_infile on, which it
// turns on for the load where this user may) and returns what undoes that. Where the server
// refuses the bulk path all the same, BulkLoad sends the rows as INSERTs (dialect.Loader).
func ReadyBulkLoad(ctx context.Context, c sqldb.Conn) (restore func()) {
	_, restore = dialect.LoaderFor(c.Kind()).StartLoading(ctx, c)
	return restore
}

// bulkProgressEvery is how many rows BulkLoad sends between two reports of progress.
const bulkProgressEvery = 10000

// BulkLoad loads rows lo..hi of table through the engine's bulk path (COPY on PostgreSQL, LOAD
// DATA LOCAL on the MySQL family, dialect.Loader): appendRow writes row i onto b as one line of
// the loaders' text format (tab-separated, \N for NULL, a newline at the end), and the lines are
// made while the server reads them, so no data set is held in memory. progress, when set, hears
// of the rows sent every 10,000 and at the end. Every built-in workload and workload file loads
// through it.
func BulkLoad(ctx context.Context, c sqldb.Conn, table string, cols []string, lo, hi int64,
	appendRow func(b []byte, i int64) []byte, progress func(int64)) error {
	if progress == nil {
		progress = func(int64) {}
	}
	pr, pw := io.Pipe()
	go func() {
		bw := bufio.NewWriterSize(pw, 256<<10)
		var line []byte
		for i := lo; i <= hi; i++ {
			line = appendRow(line[:0], i)
			if _, err := bw.Write(line); err != nil {
				pw.CloseWithError(err)
				return
			}
			if (i-lo+1)%bulkProgressEvery == 0 {
				progress(bulkProgressEvery)
			}
		}
		progress(max(0, hi-lo+1) % bulkProgressEvery)
		pw.CloseWithError(bw.Flush())
	}()
	err := dialect.LoaderFor(c.Kind()).Load(ctx, c, table, cols, pr)
	pr.CloseWithError(err) // unblocks the generator if the load failed
	return err
}
