package events

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/fairbench/fairbench/internal/workload"
)

// Check verifies what holds however many events were ingested, in this run or earlier ones
// (which is why it compares with the preload recorded in events_meta, not with a run's count):
//   - customers still has the rows prepare loaded;
//   - every preloaded event (ids 1..N) is still there, and nothing was lost: at least N rows;
//   - ids are positive and max(id) is at least the row count (ids are unique, and auto-increment
//     leaves gaps but never goes back);
//   - every event's customer exists (the foreign key should guarantee it; checked anyway,
//     since a foreign key can be switched off);
//   - every action is one the workload writes.
func (e *events) Check(ctx context.Context, env *workload.Env) error {
	c, err := env.Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	customers, preloaded, err := e.readMeta(ctx, c)
	if err != nil {
		return err
	}
	ints := func(sql string) ([]int64, error) {
		rows, err := c.Query(ctx, sql)
		if err != nil {
			return nil, e.missing(err)
		}
		out := make([]int64, len(rows[0]))
		for i, v := range rows[0] {
			if out[i], err = strconv.ParseInt(v, 10, 64); err != nil {
				return nil, fmt.Errorf("%s: %q is not a whole number", sql, v)
			}
		}
		return out, nil
	}
	var problems []string

	got, err := ints("SELECT COUNT(*) FROM customers")
	if err != nil {
		return err
	}
	if got[0] != customers {
		problems = append(problems, fmt.Sprintf("customers has %d rows, prepared with %d", got[0], customers))
	}

	ev, err := ints(fmt.Sprintf("SELECT COUNT(*), COALESCE(MIN(id), 0), COALESCE(MAX(id), 0), "+
		"COUNT(CASE WHEN id <= %d THEN 1 END) FROM events", preloaded))
	if err != nil {
		return err
	}
	count, minID, maxID, kept := ev[0], ev[1], ev[2], ev[3]
	if count < preloaded {
		problems = append(problems, fmt.Sprintf("events has %d rows, fewer than the %d preloaded: events were lost", count, preloaded))
	}
	if kept != preloaded {
		problems = append(problems, fmt.Sprintf("%d of the %d preloaded events (ids 1..%d) are there", kept, preloaded, preloaded))
	}
	if count > 0 && (minID < 1 || maxID < count) {
		problems = append(problems, fmt.Sprintf("event ids run from %d to %d over %d rows: ids must be positive and unique", minID, maxID, count))
	}

	orphans, err := c.Query(ctx, "SELECT COUNT(*), MIN(e.id) FROM events e LEFT JOIN customers c ON c.id = e.customer_id WHERE c.id IS NULL")
	if err != nil {
		return e.missing(err)
	}
	if orphans[0][0] != "0" {
		problems = append(problems, fmt.Sprintf("%s events reference a customer that does not exist (the first is event %s)", orphans[0][0], orphans[0][1]))
	}

	quoted := make([]string, len(actions))
	for i, a := range actions {
		quoted[i] = "'" + a + "'"
	}
	odd, err := ints("SELECT COUNT(*) FROM events WHERE action NOT IN (" + strings.Join(quoted, ", ") + ")")
	if err != nil {
		return err
	}
	if odd[0] != 0 {
		problems = append(problems, fmt.Sprintf("%d events have an action the workload never writes", odd[0]))
	}
	if len(problems) > 0 {
		return fmt.Errorf("events check failed: %s", strings.Join(problems, "; "))
	}
	return nil
}
