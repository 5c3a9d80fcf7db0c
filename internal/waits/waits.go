// Package waits samples where the clients' time goes on the server, the same way on every engine:
// every few milliseconds over the measured window, each client session's state and wait event,
// read from the engine's activity views (dialect.SessionSampler) and folded into categories that
// mean the same everywhere (result.WaitCategories). It is HammerDB's active session history, taken
// for fairbench's own sessions only, idle ones included: a session idle between statements is
// time spent in the client and on the wire, which is where a point select's time goes.
package waits

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fairbench/fairbench/internal/dialect"
	"github.com/fairbench/fairbench/internal/result"
	"github.com/fairbench/fairbench/internal/sqldb"
)

// DefaultEvery is how often the sessions are read: 10 times a second gives a 3-second run 30
// rounds of every session, 150 over the quick suite's 5 rounds. Every 25 ms cost PostgreSQL's
// point selects 20% of their throughput here (reading pg_stat_activity copies every backend's
// status), against none measurable on MySQL and MariaDB (bench/instrument-overhead.sh,
// docs/measurements.md).
const DefaultEvery = 100 * time.Millisecond

// Clients is the set of the measured clients' sessions, filled as they connect.
type Clients struct {
	mu  sync.Mutex
	ids []int64
}

// Add records a client's session.
func (c *Clients) Add(id int64) {
	c.mu.Lock()
	c.ids = append(c.ids, id)
	c.mu.Unlock()
}

// IDs is the sessions recorded so far.
func (c *Clients) IDs() []int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.ids)
}

// Sampler reads the clients' sessions over a connection of its own until stopped.
type Sampler struct {
	conn    sqldb.Conn
	view    dialect.SessionSampler
	every   time.Duration
	clients *Clients

	last     []dialect.Session // the last round's sessions, and when they were read
	lastAt   time.Time
	firstTry time.Time // when the first round asked

	stop   chan struct{}      // ends the loop after the read in flight
	cancel context.CancelFunc // cuts short a read a frozen server never answers
	done   chan struct{}
	mu     sync.Mutex // the counts, read by Stop even if the loop has not returned
	w      result.Waits
	cats   map[string]int
	evs    map[[2]string]int
}

// Start samples the clients' sessions every `every` over conn until Stop.
func Start(ctx context.Context, conn sqldb.Conn, every time.Duration, clients *Clients) *Sampler {
	ctx, cancel := context.WithCancel(ctx)
	s := &Sampler{conn: conn, view: dialect.SamplerFor(conn.Kind()), every: every, clients: clients,
		stop: make(chan struct{}), cancel: cancel, done: make(chan struct{}), cats: map[string]int{}, evs: map[[2]string]int{}}
	s.w.EveryMS = float64(every) / float64(time.Millisecond)
	go s.loop(ctx)
	return s
}

func (s *Sampler) loop(ctx context.Context) {
	defer close(s.done)
	tick := time.NewTicker(s.every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.stop:
			return
		case <-tick.C:
			if err := s.sample(ctx); err != nil {
				if ctx.Err() == nil {
					s.mu.Lock()
					s.w.Error = err.Error()
					s.mu.Unlock()
				}
				return
			}
		}
	}
}

// sample reads the sessions once and counts them.
func (s *Sampler) sample(ctx context.Context) error {
	ids := s.clients.IDs()
	if len(ids) == 0 {
		return nil
	}
	began := time.Now()
	s.mu.Lock()
	if s.firstTry.IsZero() {
		s.firstTry = began
	}
	s.mu.Unlock()
	sessions, err := s.view.Sessions(ctx, s.conn, ids)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.w.SamplerMS += float64(time.Since(began)) / float64(time.Millisecond)
	if err != nil {
		return err
	}
	s.w.Rounds++
	s.last, s.lastAt = sessions, time.Now()
	for _, se := range sessions {
		s.w.Sessions++
		s.cats[se.Category]++
		s.evs[[2]string{se.Category, se.Event}]++
	}
	return nil
}

// stopWait bounds how long Stop waits for a read in flight to end, and then once more for it
// to give up when cancelled: a frozen server must not hold the step's end up.
const stopWait = time.Second

// Stop ends sampling and returns what it counted (nil when no round read a session), and whether
// the connection is free again: false when a read in flight did not give up within stopWait.
func (s *Sampler) Stop() (*result.Waits, bool) {
	close(s.stop)
	idle := true
	select {
	case <-s.done:
	case <-time.After(stopWait):
		idle = false // cancelled mid-read: the driver may have closed the connection
		s.cancel()
		select {
		case <-s.done:
		case <-time.After(stopWait):
		}
	}
	s.cancel()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.w.Sessions == 0 && s.w.Error == "" {
		return nil, idle
	}
	w := s.w
	for _, c := range result.WaitCategories {
		if n := s.cats[c]; n > 0 {
			w.Categories = append(w.Categories, result.WaitCount{Category: c, Count: n})
		}
	}
	for k, n := range s.evs {
		w.Events = append(w.Events, result.WaitEvent{Category: k[0], Event: k[1], Count: n})
	}
	result.SortWaitEvents(w.Events)
	w.SamplerMS = float64(int64(w.SamplerMS*10)) / 10
	return &w, idle
}

// StallView is the server's view of the clients' sessions for a stall: what the last round read
// them doing, or, when the server has not answered the sampler for longer than a few periods,
// that it stopped answering. So a reader can tell a server that kept working (a long statement,
// a full disk queue) from one that froze.
func (s *Sampler) StallView() string {
	if s == nil {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.firstTry.IsZero():
		return "" // no round asked yet: nothing to say
	case s.lastAt.IsZero():
		return fmt.Sprintf("the server answered none of the wait sampler's reads (the first %.1f s before): it stopped answering", time.Since(s.firstTry).Seconds())
	}
	return describeStall(s.last, time.Since(s.lastAt), s.every)
}

// describeStall says what the sessions read age ago were doing: the ones inside a statement by
// category, the engine's own name for the commonest of each, then how many were idle.
func describeStall(sessions []dialect.Session, age, every time.Duration) string {
	if age > 3*every+time.Second {
		return fmt.Sprintf("the server last answered the wait sampler %.1f s before: it stopped answering", age.Seconds())
	}
	busy, idle := map[string]map[string]int{}, 0
	for _, se := range sessions {
		if se.Category == result.WaitClient {
			idle++
			continue
		}
		if busy[se.Category] == nil {
			busy[se.Category] = map[string]int{}
		}
		busy[se.Category][se.Event]++
	}
	var parts []string
	for _, c := range result.WaitCategories {
		if evs := busy[c]; evs != nil {
			n, top, topN := 0, "", 0
			for ev, k := range evs {
				n += k
				if k > topN || (k == topN && ev < top) {
					top, topN = ev, k
				}
			}
			parts = append(parts, fmt.Sprintf("%d %s (%s)", n, c, top))
		}
	}
	inStatement := "none in a statement"
	if len(parts) > 0 {
		inStatement = "in a statement: " + strings.Join(parts, ", ")
	}
	return fmt.Sprintf("the server's view of the clients' sessions %.1f s before: %s; %d idle", age.Seconds(), inStatement, idle)
}
