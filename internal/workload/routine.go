package workload

import (
	"context"
	"strings"

	"github.com/fairbench/fairbench/internal/dialect"
	"github.com/fairbench/fairbench/internal/sqldb"
)

// Server-side routines (PL/pgSQL functions and procedures, MySQL and MariaDB stored procedures)
// are owned as tables are: fairbench marks the ones it creates with Marker as their comment, and
// drops or replaces only those.

// RoutineState says whether a routine of this name exists in the connection's current database
// (MySQL) or schema (PostgreSQL), and whether fairbench created it. Two routines of one name (a
// PostgreSQL overload) are never fairbench's.
func RoutineState(ctx context.Context, c sqldb.Conn, name string) (TableState, error) {
	rows, err := c.Query(ctx, dialect.Of(c).RoutineCommentQuery(), name)
	switch {
	case err != nil:
		return Absent, err
	case len(rows) == 0:
		return Absent, nil
	case len(rows) == 1 && rows[0][0] == Marker:
		return Ours, nil
	}
	return Foreign, nil
}

// CreateOwnedRoutine creates a routine and marks it as fairbench's in one step, as CreateOwned
// does for tables. On the MySQL family the mark is a characteristic of the CREATE PROCEDURE
// itself, so createSQL must already say COMMENT '<Marker>' (RoutineComment); on PostgreSQL the
// COMMENT ON ROUTINE goes in the same simple-protocol message, one implicit transaction.
func CreateOwnedRoutine(ctx context.Context, c sqldb.Conn, name, createSQL string) error {
	return c.Exec(ctx, dialect.Of(c).CreateCommentedRoutine(createSQL, name, Marker))
}

// RoutineComment is the characteristic a MySQL-family CREATE PROCEDURE carries to be fairbench's.
const RoutineComment = "COMMENT '" + Marker + "'"

// DropOwnedRoutines drops the routines of these names that fairbench created and says which ones
// it left because they are not fairbench's.
func DropOwnedRoutines(ctx context.Context, c sqldb.Conn, names []string) error {
	var left []string
	for _, n := range names {
		switch st, err := RoutineState(ctx, c, n); {
		case err != nil:
			return err
		case st == Ours:
			if err := c.Exec(ctx, dialect.Of(c).DropRoutine(n)); err != nil {
				return err
			}
		case st == Foreign:
			left = append(left, n)
		}
	}
	if len(left) > 0 {
		return Refusef("left routine %s in place: not created by fairbench", strings.Join(left, ", "))
	}
	return nil
}

// RefuseForeignRoutines is Prepare's first look at its routines, before it claims any table: a
// routine of one of these names that fairbench did not create is refused before anything is
// touched or recorded. Once the tables are claimed, DropOwnedRoutines makes room for new ones.
func RefuseForeignRoutines(ctx context.Context, c sqldb.Conn, names []string) error {
	for _, n := range names {
		if st, err := RoutineState(ctx, c, n); err != nil {
			return err
		} else if st == Foreign {
			return Refusef("a routine %s exists and was not created by fairbench: it will not be touched; use another database or drop it yourself", n)
		}
	}
	return nil
}
