package result

// The results' common words: what the engine layer (internal/dialect) folds each engine's own
// names into when it measures, and what reports read back. They live here, with the schema, so
// that a report needs nothing of the engine layer to read a results file.

// Wait categories: what a session was doing when sampled, folded into names that mean the same on
// every engine. Each engine's own event or state stays beside it (WaitEvent), so a reader can
// check the folding.
const (
	WaitOnCPU     = "cpu"        // running a statement, waiting on nothing the engine names
	WaitLogFlush  = "log_flush"  // writing or syncing the WAL/redo at commit, or waiting for whoever does
	WaitDataRead  = "data_read"  // reading data pages from the files
	WaitDataWrite = "data_write" // writing or extending data files
	WaitRowLock   = "row_lock"   // waiting for another transaction's row lock
	WaitLatch     = "latch"      // internal latches, buffer pins, table and metadata locks
	WaitClient    = "client"     // idle: the server waits for the client's next statement
	WaitNetwork   = "network"    // sending results to the client
	WaitOther     = "other"
)

// WaitCategories are the wait categories in the order reports show them.
var WaitCategories = []string{WaitOnCPU, WaitLogFlush, WaitDataRead, WaitDataWrite, WaitRowLock, WaitLatch, WaitClient, WaitNetwork, WaitOther}

// Counter keys that mean the same thing on every engine, so a report can set them side by side.
// Everything else keeps the engine's own (lower-cased) name, because its meaning is the engine's.
const (
	CounterBufferReads  = "buffer_reads"  // page reads that missed the buffer pool
	CounterBufferHits   = "buffer_hits"   // page reads served from the buffer pool
	CounterPagesWritten = "pages_written" // data pages written out (8 KiB on PostgreSQL, 16 KiB on InnoDB by default)
	CounterWALBytes     = "wal_bytes"     // WAL / redo log bytes generated
	CounterRowLockWaits = "row_lock_waits"
	CounterDeadlocks    = "deadlocks"
	// CounterActiveUS is the time the database's sessions spent running statements, in
	// microseconds (PostgreSQL 14's pg_stat_database.active_time): the engine's own busy time,
	// beside the statements' accounts. Sessions add theirs when they report their statistics.
	CounterActiveUS = "active_us"
	// Gauges: a level, not a running total.
	CounterHistoryListLength = "history_list_length"    // InnoDB undo not yet purged
	CounterDeadTuples        = "n_dead_tup"             // PostgreSQL rows awaiting vacuum
	CounterRecvQueue         = "wsrep_local_recv_queue" // galera: write sets received, not yet applied
)
