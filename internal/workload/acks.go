package workload

import (
	"context"
	"errors"
	"slices"

	"github.com/fairbench/fairbench/internal/sqldb"
)

// Acks are what one worker saw of its transactions' outcomes, by id: Committed the ones whose
// COMMIT the server acknowledged, InDoubt the ones whose COMMIT failed with no answer (the
// connection died with it in flight), so they may or may not have committed. Ids are the
// workload's own (payments: client-generated transfer ids; tpcc: a NewOrder's warehouse,
// district and order number packed by tpcc). Appending costs an amortized few nanoseconds and 8
// bytes per transaction, so every run keeps them: a 10-minute run at 10,000 TPS holds 48 MB.
type Acks struct {
	Committed []int64
	InDoubt   []int64
}

// AckRecorder is implemented by workers that record the ids of the transactions they saw
// committed. The runner collects them from every worker it made, those it replaced after a lost
// connection included.
type AckRecorder interface {
	Acks() *Acks
}

// AckVerdict is the check of acknowledged transactions after a run: how many the clients saw
// committed, how many of those the surviving server does not have (lost: a durability failure,
// or what asynchronous replication allows), and how many were in doubt and how many of those
// did commit after all.
type AckVerdict struct {
	Acknowledged, Lost    int64
	InDoubt, InDoubtFound int64
	// Examples are up to 10 lost ids, for the report.
	Examples []int64
	// NotChecked says why the ids could not be checked (e.g. a run that deletes transfers); the
	// counts are then the clients' only.
	NotChecked string
}

// AckChecker is implemented by workloads whose acknowledged transactions can be looked up after
// a run: CheckAcks finds each id of acks on the server env connects to (the surviving leader or
// node) and counts those missing.
type AckChecker interface {
	CheckAcks(ctx context.Context, env *Env, acks []*Acks) (AckVerdict, error)
}

// ErrCommitInDoubt marks a transaction whose COMMIT was sent and got no answer: the runner counts
// it as in doubt and does not run it again, since it may have committed.
var ErrCommitInDoubt = errors.New("COMMIT sent, no answer: outcome unknown")

// CommitInDoubt wraps the error a COMMIT returned so that errors.Is(err, ErrCommitInDoubt)
// holds and the driver's error stays reachable (errors.As) for classification.
func CommitInDoubt(err error) error {
	if err == nil {
		return nil
	}
	return &inDoubtError{err}
}

type inDoubtError struct{ err error }

func (e *inDoubtError) Error() string   { return "COMMIT in doubt: " + e.err.Error() }
func (e *inDoubtError) Unwrap() []error { return []error{ErrCommitInDoubt, e.err} }

// Totals sums the counts of every worker's acks.
func Totals(acks []*Acks) (committed, inDoubt int64) {
	for _, a := range acks {
		if a != nil {
			committed += int64(len(a.Committed))
			inDoubt += int64(len(a.InDoubt))
		}
	}
	return committed, inDoubt
}

// LookupIDs says which of ids (sorted) the server c is connected to holds.
type LookupIDs func(ctx context.Context, c sqldb.Conn, ids []int64) (map[int64]bool, error)

// VerifyAcks is the check every AckChecker makes: it connects through env (on Galera first
// waiting, with wsrep_sync_wait, for the node to apply what the cluster committed, so a node
// that is behind does not make a transaction look lost), finds every acknowledged and in-doubt
// id with lookup, and counts the acknowledged ones missing and the in-doubt ones present.
func VerifyAcks(ctx context.Context, env *Env, acks []*Acks, lookup LookupIDs) (AckVerdict, error) {
	var v AckVerdict
	var committed, inDoubt []int64
	for _, a := range acks {
		committed = append(committed, a.Committed...)
		inDoubt = append(inDoubt, a.InDoubt...)
	}
	v.Acknowledged, v.InDoubt = int64(len(committed)), int64(len(inDoubt))
	if len(committed)+len(inDoubt) == 0 {
		return v, nil
	}
	c, err := env.Connect(ctx)
	if err != nil {
		return v, err
	}
	defer c.Close()
	WaitForCluster(ctx, c)
	all := append(slices.Clone(committed), inDoubt...)
	slices.Sort(all)
	found, err := lookup(ctx, c, all)
	if err != nil {
		return v, err
	}
	for _, id := range committed {
		if !found[id] {
			v.Lost++
			if len(v.Examples) < 10 {
				v.Examples = append(v.Examples, id)
			}
		}
	}
	for _, id := range inDoubt {
		if found[id] {
			v.InDoubtFound++
		}
	}
	return v, nil
}
