package fault_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fairbench/fairbench/internal/fault"
	"github.com/fairbench/fairbench/internal/runspec"
)

// fakeCluster records what was done to which node, for the scheduler's own logic.
type fakeCluster struct {
	mu     sync.Mutex
	leader string
	did    []string
}

func (c *fakeCluster) Nodes() []string { return []string{"node1", "node2", "node3"} }
func (c *fakeCluster) Leader(context.Context) (string, error) {
	if c.leader == "" {
		return "", errors.New("election under way")
	}
	return c.leader, nil
}
func (c *fakeCluster) note(what, node string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.did = append(c.did, what+" "+node)
	return nil
}
func (c *fakeCluster) Kill(n string) error      { return c.note("kill", n) }
func (c *fakeCluster) Stop(n string) error      { return c.note("stop", n) }
func (c *fakeCluster) Cont(n string) error      { return c.note("cont", n) }
func (c *fakeCluster) Partition(n string) error { return c.note("partition", n) }
func (c *fakeCluster) Heal(n string) error      { return c.note("heal", n) }

type galeraLike struct{ fakeCluster }

func (*galeraLike) EveryNodeWrites() {}

func mustFaults(t *testing.T, specs ...string) []runspec.Fault {
	t.Helper()
	fs, err := runspec.ParseFaults("--fault", specs)
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

func TestScheduleFiresAndUndoes(t *testing.T) {
	c := &fakeCluster{leader: "node2"}
	start := time.Now()
	s := fault.Start(context.Background(), c, mustFaults(t, "kill-leader@50ms", "stop-node@20ms,for=60ms,node=node1", "partition-node@10ms,for=1h"), start, nil)
	time.Sleep(200 * time.Millisecond)
	evs := s.Stop() // the partition's hour is cut short: healed now
	got := strings.Join(c.did, ", ")
	if got != "partition node3, stop node1, kill node2, cont node1, heal node3" {
		t.Fatalf("did %s", got)
	}
	if len(evs) != 3 || evs[0].Kind != runspec.PartitionNode || evs[2].Leader != "node2" || evs[2].Node != "node2" {
		t.Fatalf("events %+v", evs)
	}
	stop := evs[1]
	if stop.AtS < 0.02 || stop.EndS < 0.08 || stop.EndS > 0.15 || stop.Error != "" {
		t.Errorf("stop-node event %+v: want fired at 20 ms, ended at 80 ms", stop)
	}
	if evs[0].EndS < 0.19 {
		t.Errorf("partition healed at %.3f s, want when the schedule stopped (0.2 s)", evs[0].EndS)
	}
}

func TestScheduleLeaderUnknown(t *testing.T) {
	c := &fakeCluster{}
	evs := fault.Start(context.Background(), c, mustFaults(t, "kill-leader@1ms"), time.Now(), nil)
	time.Sleep(30 * time.Millisecond)
	got := evs.Stop()
	if len(got) != 1 || !strings.Contains(got[0].Error, "election") || len(c.did) != 0 {
		t.Fatalf("events %+v, did %v: want the fault reported not injected", got, c.did)
	}
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		c     fault.Cluster
		specs []string
		err   string
	}{
		{&fakeCluster{}, nil, ""},
		{nil, []string{"kill-node@1s"}, "needs a cluster"},
		{&fakeCluster{}, []string{"kill-node@1s,node=node9"}, `no node "node9"`},
		{&galeraLike{}, []string{"kill-leader@1s"}, "none leads"},
		{&fakeCluster{}, []string{"kill-leader@1s", "stop-node@2s,for=1s,node=node1"}, ""},
	} {
		err := fault.Check(tc.c, mustFaults(t, tc.specs...))
		if (tc.err == "") != (err == nil) || err != nil && (!strings.Contains(err.Error(), tc.err) || strings.Contains(err.Error(), "\n")) {
			t.Errorf("%v on %T: %v, want %q", tc.specs, tc.c, err, tc.err)
		}
	}
}
