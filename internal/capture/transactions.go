package capture

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fairbench/fairbench/internal/dialect"
	"github.com/fairbench/fairbench/internal/sqldb"
)

// The statement accounts say how often each statement ran, not which ran together. Capture
// watches the source's open transactions for a while (dialect.TransactionWatcher: which statement
// each session runs inside which transaction) and groups the statements seen together into one
// transaction kind, so that a replay commits as often as the source did. Statements never seen
// beside another stay transactions of their own.

// DefaultWatchEvery is how often the open transactions are read while watching: a transaction of
// a few milliseconds must be seen at two of its statements to link them, so the reads come about
// as often as statements end. Each read costs the source a fraction of a millisecond of CPU: on
// a 2-core machine shared with the clients, a pgbench source ran about a quarter slower while
// watched (docs/workload-files.md, Capture).
const DefaultWatchEvery = 2 * time.Millisecond

// observed is what a watch saw: per source transaction, each statement's earliest offset in it.
type observed map[[2]string]map[string]float64

// watchTransactions reads the open transactions every interval for d. An engine that shows
// none, or a read that fails, ends the watch with a note saying why and what turns the view on.
func watchTransactions(ctx context.Context, c sqldb.Conn, d, every time.Duration) (observed, string) {
	w := dialect.TransactionWatcherFor(c.Kind())
	seen := observed{}
	tick := time.NewTicker(every)
	defer tick.Stop()
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		ss, err := w.Sightings(ctx, c)
		if err != nil {
			return seen, fmt.Sprintf("the source's open transactions could not be read (%v); they need %s", firstLine(err), w.TransactionsSetting())
		}
		for _, s := range ss {
			k := [2]string{s.Session, s.Transaction}
			if seen[k] == nil {
				seen[k] = map[string]float64{}
			}
			if off, ok := seen[k][s.Statement]; !ok || s.Offset < off {
				seen[k][s.Statement] = s.Offset
			}
		}
		select {
		case <-ctx.Done():
			return seen, "the watch of the source's transactions was cut short"
		case <-tick.C:
		}
	}
	if len(seen) == 0 {
		return seen, fmt.Sprintf("no statement was seen inside a transaction in %v of watching; the view needs %s", d, w.TransactionsSetting())
	}
	return seen, ""
}

// group is captured statements that ran together in one transaction on the source: each with
// its copies per transaction, in the order they ran, and how many such transactions the source
// ran (estimated from the statements' calls).
type group struct {
	members   []member
	count     int64
	seen      int // source transactions in which two or more of its statements were seen
	shareCall float64
	shareTime float64
}

type member struct {
	st     *txn
	copies int64
	chance float64 // of one more copy: what the copies leave of its calls, per transaction
	offset float64 // mean offset into the transaction where seen
	index  int     // in the kept statements
}

// runs is the member's copies, numbered from 0, and one more (numbered copies) when it has a
// chance of one.
func (m member) runs() int64 {
	if m.chance > 0 {
		return m.copies + 1
	}
	return m.copies
}

// maxCopies bounds a statement's copies in one grouped transaction; the calls beyond stay a
// transaction of their own.
const maxCopies = 100

// groupStatements joins the kept statements seen in one source transaction (linked through any
// statement two transactions share) into groups. A group's transaction count is the calls most
// of its statements have (a statement run once per transaction), and each member runs its calls
// divided by that count, rounded down unless within a tenth of the next whole number. What a
// member's copies leave of its calls stays in kept as a transaction of its own; a statement
// wholly grouped leaves kept. The statement mix holds either way.
func groupStatements(kept []*txn, seen observed) ([]*group, []*txn) {
	at := map[string]int{}
	for i, t := range kept {
		for _, id := range t.ids {
			at[id] = i
		}
	}
	parent := make([]int, len(kept))
	for i := range parent {
		parent[i] = i
	}
	find := func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	offsets := make([][]float64, len(kept))
	var txns [][]int                     // each source transaction's kept statements
	pairs := map[[2]int]int{}            // source transactions in which two were seen together
	withOthers := make([]int, len(kept)) // source transactions in which one was seen with any other
	before := map[[2]int]int{}           // source transactions in which the first started before the second
	for _, stmts := range seen {
		var in []int
		off := map[int]float64{}
		for id, o := range stmts {
			if i, ok := at[id]; ok && !slices.Contains(in, i) {
				in = append(in, i)
				off[i] = o
				offsets[i] = append(offsets[i], o)
			}
		}
		for a, i := range in {
			for _, j := range in[a+1:] {
				pairs[[2]int{min(i, j), max(i, j)}]++
				if off[i] < off[j] {
					before[[2]int{i, j}]++
				} else if off[j] < off[i] {
					before[[2]int{j, i}]++
				}
			}
			if len(in) > 1 {
				withOthers[i]++
			}
		}
		txns = append(txns, in)
	}
	linkedAny := make([]bool, len(kept))
	for p, n := range pairs {
		if linked(n, withOthers[p[0]], withOthers[p[1]]) {
			parent[find(p[1])] = find(p[0])
			linkedAny[p[0]], linkedAny[p[1]] = true, true
		}
	}
	byRoot := map[int][]int{}
	var roots []int
	for i := range kept {
		if !linkedAny[i] {
			continue
		}
		r := find(i)
		if byRoot[r] == nil {
			roots = append(roots, r)
		}
		byRoot[r] = append(byRoot[r], i)
	}
	var groups []*group
	for _, r := range roots {
		if g := newGroup(kept, byRoot[r], offsets, seenTogether(txns, byRoot[r])); g != nil {
			g.order(before)
			groups = append(groups, g)
		}
	}
	sort.SliceStable(groups, func(a, b int) bool { return groups[a].count > groups[b].count })
	var rest []*txn
	for _, t := range kept {
		if t.calls > 0 {
			rest = append(rest, t)
		}
	}
	return groups, rest
}

// seenTogether counts the source transactions in which two or more of the statements idx were seen.
func seenTogether(txns [][]int, idx []int) int {
	n := 0
	for _, in := range txns {
		k := 0
		for _, i := range in {
			if slices.Contains(idx, i) {
				k++
			}
		}
		if k >= 2 {
			n++
		}
	}
	return n
}

// linked says whether two statements seen together in n source transactions, each seen with
// any other statement in a and b of them, belong to one transaction kind: seen together at least
// twice, and in at least a tenth of the transactions in which the rarer was seen with others.
// Statements of one kind are seen beside each other most of the time; MySQL showed New-Order and
// Payment statements in one transaction of its performance schema in about 1% of them (a
// transaction boundary it recorded late), which a lower bar would take for one kind.
func linked(n, a, b int) bool {
	return n >= 2 && n*10 >= min(a, b)
}

// newGroup makes the group of the statements at idx, taking their calls from them; nil when
// fewer than two of them run at least once per transaction. A member runs its calls divided by
// the group's count: that many copies, rounded down unless within a tenth of the next whole
// number, and what they leave as one more copy run by chance (TPC-C's 5 to 15 order lines, 10.6
// on average: ten copies and one in 60% of the transactions; a lookup by name made in 60% of
// payments: a copy with chance 0.6), so the source's transactions and its statement mix both hold.
func newGroup(kept []*txn, idx []int, offsets [][]float64, seen int) *group {
	calls := make([]int64, len(idx))
	for j, i := range idx {
		calls[j] = kept[i].calls
	}
	count := commonCalls(calls)
	g := &group{count: count, seen: seen}
	whole := 0
	for _, i := range idx {
		copies := min(int64(float64(kept[i].calls)/float64(count)+0.1), maxCopies)
		chance := 0.0
		if left := kept[i].calls - copies*count; left*20 >= count && copies < maxCopies { // under 5%: the count's rounding
			chance = float64(left) / float64(count)
		}
		if copies >= 1 {
			whole++
		}
		if copies >= 1 || chance > 0 {
			g.members = append(g.members, member{st: kept[i], copies: copies, chance: chance, offset: mean(offsets[i]), index: i})
		}
	}
	if whole < 2 {
		return nil
	}
	for _, m := range g.members {
		// What neither the copies nor the chance took (copies beyond maxCopies) runs alone.
		left := 0.0
		if m.copies == maxCopies {
			left = max(float64(m.st.calls-m.copies*count), 0)
		}
		m.st.grouped = m.st.calls - int64(left)
		m.st.calls = int64(left)
	}
	return g
}

// order puts the members in the order they ran: a member ahead of more of the others (seen
// starting before it in more of the transactions where both were seen) comes first, and the mean
// offset breaks ties. Offsets are compared within one transaction only: a mean over different
// transactions is biased towards the ones the watch happened to see (a statement that waited on
// a lock is seen more often), which swapped two of TPC-B's updates in one run.
func (g *group) order(before map[[2]int]int) {
	wins := map[int]int{}
	for _, a := range g.members {
		for _, b := range g.members {
			if before[[2]int{a.index, b.index}] > before[[2]int{b.index, a.index}] {
				wins[a.index]++
			}
		}
	}
	sort.SliceStable(g.members, func(x, y int) bool {
		a, b := g.members[x], g.members[y]
		if wins[a.index] != wins[b.index] {
			return wins[a.index] > wins[b.index]
		}
		return a.offset < b.offset
	})
}

// commonCalls is the call count most statements share within 10%: a transaction's statements
// that run once in it have about its count; the repeated ones have a multiple. Ties go to the
// smaller count.
func commonCalls(calls []int64) int64 {
	best, bestN := calls[0], 0
	for _, c := range calls {
		n := 0
		for _, d := range calls {
			if math.Abs(float64(d-c)) <= 0.1*float64(c) {
				n++
			}
		}
		if n > bestN || (n == bestN && c < best) {
			best, bestN = c, n
		}
	}
	return max(best, 1)
}

func mean(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(max(len(v), 1))
}

// paramRef is a named parameter in a captured statement's text.
var paramRef = regexp.MustCompile(`:([a-z_][a-z0-9_]*)`)

// groupParams names the parameters of a grouped transaction's statements, copy by copy: each
// copy draws values of its own (a new-order's ten stock rows), except that the statements'
// copies at one place share a value where they compare with the same column drawn the same way
// (a row read and then updated is one row, as in the source's transaction). The statement
// statistics keep no values, so this is capture's reading of the SQL, said in the file.
type groupParams struct {
	params []param
	shared map[string]int // sharedKey to its index in params
}

// add renames sql's parameters for its place in the transaction (copy is the statement's copy
// number) and returns it with the references rewritten.
func (g *groupParams) add(sql string, params []param, place int, copy int64) string {
	if g.shared == nil {
		g.shared = map[string]int{}
	}
	to := map[string]string{}
	for _, p := range params {
		key, shareable := sharedKey(p, copy)
		if i, ok := g.shared[key]; ok && shareable {
			to[p.name] = g.params[i].name
			if g.params[i].note == "" {
				g.params[i].note = "one value for every statement here that compares with " + p.name + " (the same row, as capture reads the SQL)"
			}
			continue
		}
		q := p
		q.name = p.name + "_" + strconv.Itoa(place)
		to[p.name] = q.name
		if shareable {
			g.shared[key] = len(g.params)
		}
		g.params = append(g.params, q)
	}
	return renamed(sql, to)
}

// sharedKey is what two parameters of one place in a grouped transaction share a value by: the
// column they compare with and its generator. A parameter capture could not tie to a column
// (it carries a note) or a sequence's next value is never shared.
func sharedKey(p param, copy int64) (string, bool) {
	if p.note != "" || strings.HasPrefix(p.gen, "next:") {
		return "", false
	}
	return p.name + "\x00" + p.gen + "\x00" + strconv.FormatInt(copy, 10), true
}

// renamed rewrites sql's :name references by to; a name not in to, and a PostgreSQL cast after
// one, are left alone.
func renamed(sql string, to map[string]string) string {
	return paramRef.ReplaceAllStringFunc(sql, func(m string) string {
		if name, ok := to[m[1:]]; ok {
			return ":" + name
		}
		return m
	})
}

func groupedStatements(groups []*group) int {
	n := 0
	for _, g := range groups {
		n += len(g.members)
	}
	return n
}

// shareOut gives each transaction the file runs, grouped or alone, its share of the source's
// transactions as the file runs them (so the replay's mix of transactions can be set beside it)
// and of the kept statements' server time.
func shareOut(groups []*group, alone []*txn) {
	var count int64
	var ms float64
	for _, g := range groups {
		count += g.count
		for _, m := range g.members {
			ms += float64(m.copies*g.count) * m.st.meanMS()
		}
	}
	for _, t := range alone {
		count += t.calls
		ms += float64(t.calls) * t.meanMS()
	}
	for _, g := range groups {
		g.shareCall = float64(g.count) / float64(max(count, 1))
		for _, m := range g.members {
			if ms > 0 {
				g.shareTime += float64(m.copies*g.count) * m.st.meanMS() / ms
			}
		}
	}
	for _, t := range alone {
		t.shareCall = float64(t.calls) / float64(max(count, 1))
		if ms > 0 {
			t.shareTime = float64(t.calls) * t.meanMS() / ms
		}
	}
}
