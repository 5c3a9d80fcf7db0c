package fault

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/runspec"
)

// Check refuses, before anything is loaded, faults the cluster cannot take: a node it does not
// have, or kill-leader on a cluster where every node takes writes. c nil is a single server,
// which takes none.
func Check(c Cluster, faults []runspec.Fault) error {
	if len(faults) == 0 {
		return nil
	}
	if c == nil {
		return fmt.Errorf("--fault %s needs a cluster fairbench starts (--engines galera or postgres-ha): a single server or a --target has no node to fail over to", faults[0])
	}
	nodes := c.Nodes()
	for _, f := range faults {
		if f.Node != "" && !slices.Contains(nodes, f.Node) {
			return fmt.Errorf("--fault %s: no node %q in this cluster (its nodes: %v)", f, f.Node, nodes)
		}
		if f.Kind == runspec.KillLeader {
			if _, isLeaderless := c.(Leaderless); isLeaderless {
				return fmt.Errorf("--fault %s: every node of this cluster takes writes, so none leads; use kill-node@%s instead", f, f.At)
			}
		}
	}
	return nil
}

// Leaderless is implemented by clusters where every node takes writes (Galera), whose Leader is
// always "": kill-leader means nothing there.
type Leaderless interface{ EveryNodeWrites() }

// Schedule is the faults of one run, fired at their offsets from the measured window's start.
type Schedule struct {
	c      Cluster
	log    io.Writer
	start  time.Time
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	events []result.FaultEvent
	// undo holds what must be undone if the run ends first: thaw or heal, by node.
	undo map[string]func() error
}

// Start fires faults against c, each at start plus its offset, on goroutines of its own; it
// returns at once. log, when set, gets one line per fault and per end.
func Start(ctx context.Context, c Cluster, faults []runspec.Fault, start time.Time, log io.Writer) *Schedule {
	ctx, cancel := context.WithCancel(ctx)
	s := &Schedule{c: c, log: log, start: start, cancel: cancel, undo: map[string]func() error{}}
	for _, f := range faults {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.fire(ctx, f)
		}()
	}
	return s
}

// Stop ends the schedule: faults not yet fired never fire, stops and partitions still on are
// undone now, and the events are returned in the order they fired.
func (s *Schedule) Stop() []result.FaultEvent {
	s.cancel()
	s.wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	slices.SortStableFunc(s.events, func(a, b result.FaultEvent) int {
		switch {
		case a.AtS < b.AtS:
			return -1
		case a.AtS > b.AtS:
			return 1
		}
		return 0
	})
	return s.events
}

// fire waits for f's moment, injects it and, for a stop or a partition, undoes it after f.For.
func (s *Schedule) fire(ctx context.Context, f runspec.Fault) {
	if !sleepUntil(ctx, s.start.Add(f.At)) {
		return
	}
	ev := result.FaultEvent{Spec: f.String(), Kind: f.Kind, Node: f.Node}
	inject, undo, err := s.plan(ctx, f, &ev)
	ev.AtS = s.since()
	if err == nil {
		err = inject(ev.Node)
	}
	if err != nil {
		ev.Error = err.Error()
		s.record(ev, "could not inject: "+err.Error())
		return
	}
	if undo == nil {
		ev.EndS = ev.AtS
		s.record(ev, "injected")
		return
	}
	s.hold(ev.Node, func() error { return undo(ev.Node) })
	s.logf("fault %s on %s at %.3f s", ev.Spec, ev.Node, ev.AtS)
	sleepUntil(ctx, s.start.Add(f.At+f.For))
	uerr := s.release(ev.Node)
	ev.EndS = s.since()
	if uerr != nil {
		ev.Error = "undoing it: " + uerr.Error()
	}
	s.record(ev, "ended")
}

// plan resolves f's node (the leader now for kill-leader; the last node when none is given)
// and says how to inject and undo it.
func (s *Schedule) plan(ctx context.Context, f runspec.Fault, ev *result.FaultEvent) (inject, undo func(string) error, err error) {
	if ev.Node == "" {
		nodes := s.c.Nodes()
		ev.Node = nodes[len(nodes)-1]
	}
	switch f.Kind {
	case runspec.KillLeader:
		lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		leader, lerr := s.c.Leader(lctx)
		if lerr == nil && leader == "" {
			lerr = errors.New("no node leads this cluster")
		}
		ev.Node, ev.Leader = leader, leader
		return s.c.Kill, nil, lerr
	case runspec.KillNode:
		return s.c.Kill, nil, nil
	case runspec.StopNode:
		return s.c.Stop, s.c.Cont, nil
	case runspec.PartitionNode:
		return s.c.Partition, s.c.Heal, nil
	}
	return nil, nil, fmt.Errorf("unknown fault %q", f.Kind)
}

func (s *Schedule) hold(node string, undo func() error) {
	s.mu.Lock()
	s.undo[node] = undo
	s.mu.Unlock()
}

// release undoes what is held on node, once.
func (s *Schedule) release(node string) error {
	s.mu.Lock()
	undo := s.undo[node]
	delete(s.undo, node)
	s.mu.Unlock()
	if undo == nil {
		return nil
	}
	return undo()
}

func (s *Schedule) record(ev result.FaultEvent, what string) {
	s.mu.Lock()
	s.events = append(s.events, ev)
	s.mu.Unlock()
	s.logf("fault %s on %s at %.3f s: %s (%.3f s)", ev.Spec, ev.Node, ev.AtS, what, ev.EndS)
}

func (s *Schedule) logf(format string, a ...any) {
	if s.log != nil {
		fmt.Fprintf(s.log, format+"\n", a...)
	}
}

func (s *Schedule) since() float64 { return time.Since(s.start).Seconds() }

// sleepUntil waits for t; false when ctx ended first.
func sleepUntil(ctx context.Context, t time.Time) bool {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}
