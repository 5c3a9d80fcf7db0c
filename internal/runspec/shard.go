package runspec

import (
	"os"
	"strconv"
	"strings"
	"time"
)

// Shard is this process's part of a multi-host run: shard Index (1-based) of Count. The
// command line's --threads and --rate are the whole run's; each shard takes its share.
type Shard struct {
	Index, Count int
}

const shardFix = "write it as I/N with 1 <= I <= N, e.g. --shard 2/3, or k8s/N in a Kubernetes Indexed Job"

// IndexedJobEnv is the variable Kubernetes sets in each pod of an Indexed Job: its completion
// index, counted from 0.
const IndexedJobEnv = "JOB_COMPLETION_INDEX"

// ParseShard reads --shard I/N; "k8s/N" takes I from Kubernetes' JOB_COMPLETION_INDEX (plus one:
// Kubernetes counts from 0, shards from 1), since a pod's arguments cannot do arithmetic.
func ParseShard(setting, v string) (Shard, error) {
	i, n, ok := strings.Cut(strings.TrimSpace(v), "/")
	if strings.TrimSpace(i) == "k8s" {
		k, err := strconv.Atoi(os.Getenv(IndexedJobEnv))
		if err != nil {
			return Shard{}, inputErr(setting, v, "needs "+IndexedJobEnv+", which only an Indexed Job's pods have", shardFix)
		}
		i = strconv.Itoa(k + 1)
	}
	idx, err1 := strconv.Atoi(strings.TrimSpace(i))
	cnt, err2 := strconv.Atoi(strings.TrimSpace(n))
	if !ok || err1 != nil || err2 != nil || cnt < 1 || idx < 1 || idx > cnt || cnt > MaxThreads {
		return Shard{}, inputErr(setting, v, "is not a shard", shardFix)
	}
	return Shard{Index: idx, Count: cnt}, nil
}

// Threads is this shard's share of the run's total threads: the total divided as evenly as it
// goes, the first shards taking one more when it does not divide. A shard must get one.
func (s Shard) Threads(total int) (int, error) {
	if total < s.Count {
		return 0, inputErr("--threads", strconv.Itoa(total), "is fewer than the shards, so some would have no client",
			"give at least one thread per shard (--threads is the whole run's)")
	}
	n := total / s.Count
	if s.Index <= total%s.Count {
		n++
	}
	return n, nil
}

// Rate is this shard's share of the run's total rate. Shards draw independent Poisson arrivals,
// and the sum of independent Poisson processes is a Poisson process of the summed rate: the
// merged schedule is the total rate's, as one client host would have made it.
func (s Shard) Rate(total float64) float64 { return total / float64(s.Count) }

// ParseStartAt reads --start-at: an RFC 3339 time, or +DURATION from now, rounded up to the next
// whole second, so that shards started by hand within the same second agree to the nanosecond
// and every shard's intervals end on wall-clock seconds, the slots merge lines them up in.
func ParseStartAt(setting, v string, now time.Time) (time.Time, error) {
	v = strings.TrimSpace(v)
	if rest, ok := strings.CutPrefix(v, "+"); ok {
		d, err := ParsePositiveDuration(setting, rest)
		if err != nil {
			return time.Time{}, err
		}
		return WholeSecondAfter(now.Add(d)), nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, inputErr(setting, v, "is not a time", "give an RFC 3339 time such as 2026-11-24T10:00:00Z, or +30s from now")
	}
	if !t.After(now) {
		return time.Time{}, inputErr(setting, v, "has passed", "give a time in the future, or +30s from now")
	}
	return t, nil
}

// WholeSecondAfter is t when it falls on a whole second, else the next whole second.
func WholeSecondAfter(t time.Time) time.Time {
	if w := t.Truncate(time.Second); !w.Equal(t) {
		return w.Add(time.Second)
	}
	return t
}
