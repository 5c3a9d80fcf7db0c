package dialect

import "strings"

// Objects are the statements that name, mark and remove a table or a routine. fairbench marks
// what it creates with a comment (workload.Marker) and drops only what carries it, so each
// engine's way of reading and writing a comment lives here.
type Objects interface {
	// CurrentSchema is an SQL expression for where unqualified names resolve: PostgreSQL's
	// current schema, or the MySQL family's current database.
	CurrentSchema() string
	// Quote is an identifier quoted for this engine.
	Quote(name string) string
	// TableCommentQuery reads a table's (or view's) comment by name, its one parameter: one row
	// with the comment ("" for none), or no row where there is no such table.
	TableCommentQuery() string
	// RoutineCommentQuery is the same for a routine (function or procedure): a row per routine
	// of that name.
	RoutineCommentQuery() string
	// CreateCommented is createSQL (a CREATE TABLE of table) with the comment set in the same
	// step, so that no interruption leaves the table without it.
	CreateCommented(createSQL, table, comment string) string
	// CommentOn sets an existing table's comment.
	CommentOn(table, comment string) string
	// CreateCommentedRoutine is CreateCommented for a routine. On the MySQL family the comment is
	// a characteristic of CREATE PROCEDURE itself, so createSQL already carries it.
	CreateCommentedRoutine(createSQL, name, comment string) string
	// DropRoutine drops the one routine of that name.
	DropRoutine(name string) string
	// Literal is s as a string constant.
	Literal(s string) string
}

func (postgres) CurrentSchema() string { return "current_schema()" }

func (postgres) Quote(name string) string { return quoteWith(name, `"`) }

func (postgres) TableCommentQuery() string {
	return "SELECT coalesce(obj_description(c.oid, 'pg_class'), '') FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace " +
		"WHERE n.nspname = current_schema() AND c.relname = ? AND c.relkind IN ('r', 'p', 'v')"
}

func (postgres) RoutineCommentQuery() string {
	return "SELECT coalesce(obj_description(p.oid, 'pg_proc'), '') FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace " +
		"WHERE n.nspname = current_schema() AND p.proname = ?"
}

// CreateCommented: both statements in one simple-protocol message are one implicit transaction.
func (postgres) CreateCommented(createSQL, table, comment string) string {
	return createSQL + ";\nCOMMENT ON TABLE " + table + " IS " + literal(comment)
}

func (postgres) CommentOn(table, comment string) string {
	return "COMMENT ON TABLE " + table + " IS " + literal(comment)
}

func (postgres) CreateCommentedRoutine(createSQL, name, comment string) string {
	return createSQL + ";\nCOMMENT ON ROUTINE " + name + " IS " + literal(comment)
}

// DropRoutine: DROP ROUTINE takes a function or a procedure without its argument types when the
// name is unique.
func (postgres) DropRoutine(name string) string { return "DROP ROUTINE " + name }

func (innodb) CurrentSchema() string { return "DATABASE()" }

func (innodb) Quote(name string) string { return quoteWith(name, "`") }

func (innodb) TableCommentQuery() string {
	return "SELECT table_comment FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?"
}

func (innodb) RoutineCommentQuery() string {
	return "SELECT routine_comment FROM information_schema.routines WHERE routine_schema = DATABASE() AND routine_name = ?"
}

// CreateCommented: the comment is a table option of the CREATE TABLE itself.
func (d innodb) CreateCommented(createSQL, _, comment string) string {
	return createSQL + " COMMENT = " + d.Literal(comment)
}

func (d innodb) CommentOn(table, comment string) string {
	return "ALTER TABLE " + table + " COMMENT = " + d.Literal(comment)
}

func (innodb) CreateCommentedRoutine(createSQL, _, _ string) string { return createSQL }

func (innodb) DropRoutine(name string) string { return "DROP PROCEDURE " + name }

// quoteWith quotes an identifier, doubling the quote character inside it.
func quoteWith(name, q string) string { return q + strings.ReplaceAll(name, q, q+q) + q }

// literal is a string constant in single quotes, which every engine here reads alike when the
// text has no backslash (the comments fairbench writes have none).
func literal(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// Literal: standard_conforming_strings (on since PostgreSQL 9.1) reads a backslash as itself.
func (postgres) Literal(s string) string { return literal(s) }

// Literal: the MySQL family reads a backslash in a literal as an escape unless sql_mode says
// NO_BACKSLASH_ESCAPES, so it is doubled; a doubled backslash would be two there, so this is for
// servers in the default mode, which fairbench's profile keeps.
func (innodb) Literal(s string) string { return literal(strings.ReplaceAll(s, `\`, `\\`)) }
