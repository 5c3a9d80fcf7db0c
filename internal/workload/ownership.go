package workload

import (
	"context"
	"strings"

	"github.com/fairbench/fairbench/internal/dialect"
	"github.com/fairbench/fairbench/internal/sqldb"
)

// Marker is stored as the comment of every table fairbench creates: cleanup and --force drop a
// table only when it carries it, so fairbench never drops a table it did not create.
const Marker = "created by fairbench"

// TableState is what is on the server under a table name.
type TableState int

const (
	Absent TableState = iota
	Ours
	Foreign
)

// StateOf looks a table up in the connection's current database (MySQL) or schema (PostgreSQL).
func StateOf(ctx context.Context, c sqldb.Conn, name string) (TableState, error) {
	rows, err := c.Query(ctx, dialect.Of(c).TableCommentQuery(), name)
	if err != nil {
		return Absent, err
	}
	if len(rows) == 0 {
		return Absent, nil
	}
	if rows[0][0] == Marker {
		return Ours, nil
	}
	return Foreign, nil
}

// CreateOwned creates a table and marks it as fairbench's in one step, so that no interruption
// can leave a table of fairbench's without its mark, which cleanup would then refuse to drop.
func CreateOwned(ctx context.Context, c sqldb.Conn, name, createSQL string) error {
	return c.Exec(ctx, dialect.Of(c).CreateCommented(createSQL, name, Marker))
}

// MarkOwned records that fairbench created the table; CreateOwned is the safer way.
func MarkOwned(ctx context.Context, c sqldb.Conn, name string) error {
	return c.Exec(ctx, dialect.Of(c).CommentOn(name, Marker))
}

// ConnectClaiming opens the connection a Prepare works on and claims the workload's tables on it
// (ClaimTables); the caller closes it. It is how a Prepare starts whose tables are all it must
// claim first.
func ConnectClaiming(ctx context.Context, env *Env, workloadName string, names []string) (sqldb.Conn, error) {
	c, err := env.Connect(ctx)
	if err != nil {
		return nil, err
	}
	if err := ClaimTables(ctx, c, workloadName, names, env.Force); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// ClaimTables is what every Prepare does first: it looks at all the workload's tables before
// touching any, refuses if one belongs to someone else, refuses if fairbench's own are there
// unless force, and with force drops fairbench's own (children first: list parents first).
// Then it tells the context's OnClaim hook which tables are claimed: job records the data set
// as being prepared from that moment on.
func ClaimTables(ctx context.Context, c sqldb.Conn, workloadName string, names []string, force bool) error {
	for _, n := range names {
		st, err := StateOf(ctx, c, n)
		if err != nil {
			return err
		}
		switch {
		case st == Foreign:
			return Refusef("table %s exists and was not created by fairbench: it will not be touched; use another database or drop it yourself", n)
		case st == Ours && !force:
			return Refusef("table %s already exists: run 'fairbench cleanup --workload %s' first, or pass --force to recreate fairbench's tables", n, workloadName)
		}
	}
	if force {
		if _, err := dropOurs(ctx, c, names); err != nil {
			return err
		}
	}
	return notifyClaim(ctx, names)
}

// DropOwned is Cleanup: it drops the tables fairbench created (children first: list parents
// first) and says which ones it left because they are not fairbench's.
func DropOwned(ctx context.Context, c sqldb.Conn, names []string) error {
	left, err := dropOurs(ctx, c, names)
	if err != nil {
		return err
	}
	if len(left) > 0 {
		return Refusef("left %s in place: not created by fairbench", strings.Join(left, ", "))
	}
	return nil
}

func dropOurs(ctx context.Context, c sqldb.Conn, names []string) (left []string, err error) {
	for i := len(names) - 1; i >= 0; i-- {
		st, err := StateOf(ctx, c, names[i])
		if err != nil {
			return nil, err
		}
		switch st {
		case Ours:
			if err := c.Exec(ctx, "DROP TABLE "+names[i]); err != nil {
				return nil, err
			}
		case Foreign:
			left = append([]string{names[i]}, left...)
		}
	}
	return left, nil
}
