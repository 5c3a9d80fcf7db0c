package dialect

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/fairbench/fairbench/internal/sqldb"
)

// CatalogColumn is a column as the engine's catalog describes it.
type CatalogColumn struct {
	Table, Name string
	// Type is the engine's own spelling: information_schema's data_type on PostgreSQL
	// ("character varying"), column_type on MySQL and MariaDB ("tinyint(1)", "int unsigned").
	Type             string
	Length           int // characters of a varchar or char
	Precision, Scale int // of a decimal
	Nullable         bool
}

// CatalogIndex is an index (or the primary key) on plain columns; one on expressions is left out.
type CatalogIndex struct {
	Table, Name     string
	Columns         []string
	Primary, Unique bool
}

// CatalogForeignKey is columns of Table that reference RefColumns of RefTable.
type CatalogForeignKey struct {
	Table      string
	Columns    []string
	RefTable   string
	RefColumns []string
}

// Catalog reads the base tables of the connection's database (PostgreSQL: its current schema):
// what `fairbench capture` turns into a workload file. Reads only.
type Catalog interface {
	Columns(ctx context.Context, c sqldb.Conn) ([]CatalogColumn, error)
	Indexes(ctx context.Context, c sqldb.Conn) ([]CatalogIndex, error)
	ForeignKeys(ctx context.Context, c sqldb.Conn) ([]CatalogForeignKey, error)
	// RowEstimates is each table's row count as the engine estimates it (PostgreSQL's reltuples,
	// InnoDB's table_rows): cheap on a large table, and -1 or 0 before the first ANALYZE.
	RowEstimates(ctx context.Context, c sqldb.Conn) (map[string]int64, error)
}

// CatalogFor is the catalog reader of an engine kind.
func CatalogFor(k sqldb.Kind) Catalog { return byKind(k) }

// columnsQuery is information_schema's columns of base tables, which both families have; the
// schema is named by SCHEMA and the type by TYPE, which differ.
const columnsQuery = "SELECT c.table_name, c.column_name, TYPE, coalesce(c.character_maximum_length, 0), " +
	"coalesce(c.numeric_precision, 0), coalesce(c.numeric_scale, 0), c.is_nullable " +
	"FROM information_schema.columns c JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name " +
	"WHERE c.table_schema = SCHEMA AND t.table_type = 'BASE TABLE' ORDER BY c.table_name, c.ordinal_position"

func readColumns(ctx context.Context, c sqldb.Conn, schema, typ string) ([]CatalogColumn, error) {
	q := strings.NewReplacer("SCHEMA", schema, "TYPE", typ).Replace(columnsQuery)
	rows, err := c.Query(ctx, q)
	if err != nil {
		return nil, err
	}
	out := make([]CatalogColumn, 0, len(rows))
	for _, r := range rows {
		out = append(out, CatalogColumn{Table: r[0], Name: r[1], Type: strings.ToLower(r[2]), Length: int(atoi(r[3])),
			Precision: int(atoi(r[4])), Scale: int(atoi(r[5])), Nullable: r[6] == "YES"})
	}
	return out, nil
}

func (postgres) Columns(ctx context.Context, c sqldb.Conn) ([]CatalogColumn, error) {
	return readColumns(ctx, c, "current_schema()", "c.data_type")
}

func (innodb) Columns(ctx context.Context, c sqldb.Conn) ([]CatalogColumn, error) {
	return readColumns(ctx, c, "DATABASE()", "c.column_type")
}

// pgColumnList is the names of attributes ATTS of relation REL in their order, comma separated.
const pgColumnList = "array_to_string(ARRAY(SELECT a.attname FROM unnest(ATTS) WITH ORDINALITY k(n, o) " +
	"JOIN pg_attribute a ON a.attrelid = REL AND a.attnum = k.n ORDER BY k.o), ',')"

func pgColumns(atts, rel string) string {
	return strings.NewReplacer("ATTS", atts, "REL", rel).Replace(pgColumnList)
}

var pgIndexes = "SELECT t.relname, i.relname, ix.indisprimary, ix.indisunique, " + pgColumns("ix.indkey", "t.oid") + ", " +
	"ix.indexprs IS NULL FROM pg_index ix JOIN pg_class t ON t.oid = ix.indrelid JOIN pg_class i ON i.oid = ix.indexrelid " +
	"JOIN pg_namespace n ON n.oid = t.relnamespace WHERE n.nspname = current_schema() AND t.relkind = 'r' ORDER BY 1, 2"

func (postgres) Indexes(ctx context.Context, c sqldb.Conn) ([]CatalogIndex, error) {
	return readIndexes(ctx, c, pgIndexes)
}

// readIndexes reads table, index, primary, unique, the columns comma separated, and whether
// every part is a plain column, the booleans as either family writes them (t or 1).
func readIndexes(ctx context.Context, c sqldb.Conn, q string) ([]CatalogIndex, error) {
	rows, err := c.Query(ctx, q)
	if err != nil {
		return nil, err
	}
	yes := func(s string) bool { return s == "t" || s == "1" }
	var out []CatalogIndex
	for _, r := range rows {
		if yes(r[5]) && r[4] != "" {
			out = append(out, CatalogIndex{Table: r[0], Name: r[1], Primary: yes(r[2]), Unique: yes(r[3]), Columns: strings.Split(r[4], ",")})
		}
	}
	return out, nil
}

// innodbIndexes leaves out indexes with an expression part (MySQL 8's functional indexes have no
// column_name).
const innodbIndexes = "SELECT table_name, index_name, index_name = 'PRIMARY', non_unique = 0, " +
	"GROUP_CONCAT(column_name ORDER BY seq_in_index SEPARATOR ','), SUM(column_name IS NULL) = 0 " +
	"FROM information_schema.statistics WHERE table_schema = DATABASE() GROUP BY table_name, index_name, non_unique ORDER BY 1, 2"

func (innodb) Indexes(ctx context.Context, c sqldb.Conn) ([]CatalogIndex, error) {
	return readIndexes(ctx, c, innodbIndexes)
}

var pgForeignKeys = "SELECT cl.relname, " + pgColumns("co.conkey", "co.conrelid") + ", rc.relname, " + pgColumns("co.confkey", "co.confrelid") +
	" FROM pg_constraint co JOIN pg_class cl ON cl.oid = co.conrelid JOIN pg_class rc ON rc.oid = co.confrelid " +
	"JOIN pg_namespace n ON n.oid = cl.relnamespace WHERE co.contype = 'f' AND n.nspname = current_schema() ORDER BY 1, co.conname"

func (postgres) ForeignKeys(ctx context.Context, c sqldb.Conn) ([]CatalogForeignKey, error) {
	return readForeignKeys(ctx, c, pgForeignKeys)
}

const innodbForeignKeys = "SELECT table_name, GROUP_CONCAT(column_name ORDER BY ordinal_position SEPARATOR ','), referenced_table_name, " +
	"GROUP_CONCAT(referenced_column_name ORDER BY ordinal_position SEPARATOR ',') FROM information_schema.key_column_usage " +
	"WHERE table_schema = DATABASE() AND referenced_table_name IS NOT NULL GROUP BY table_name, constraint_name, referenced_table_name ORDER BY 1, constraint_name"

func (innodb) ForeignKeys(ctx context.Context, c sqldb.Conn) ([]CatalogForeignKey, error) {
	return readForeignKeys(ctx, c, innodbForeignKeys)
}

func readForeignKeys(ctx context.Context, c sqldb.Conn, q string) ([]CatalogForeignKey, error) {
	rows, err := c.Query(ctx, q)
	if err != nil {
		return nil, err
	}
	out := make([]CatalogForeignKey, 0, len(rows))
	for _, r := range rows {
		out = append(out, CatalogForeignKey{Table: r[0], Columns: strings.Split(r[1], ","), RefTable: r[2], RefColumns: strings.Split(r[3], ",")})
	}
	return out, nil
}

const pgRowEstimates = "SELECT c.relname, c.reltuples::bigint FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace " +
	"WHERE c.relkind = 'r' AND n.nspname = current_schema()"

func (postgres) RowEstimates(ctx context.Context, c sqldb.Conn) (map[string]int64, error) {
	return readEstimates(ctx, c, pgRowEstimates)
}

const innodbRowEstimates = "SELECT table_name, coalesce(table_rows, -1) FROM information_schema.tables " +
	"WHERE table_schema = DATABASE() AND table_type = 'BASE TABLE'"

func (innodb) RowEstimates(ctx context.Context, c sqldb.Conn) (map[string]int64, error) {
	return readEstimates(ctx, c, innodbRowEstimates)
}

func readEstimates(ctx context.Context, c sqldb.Conn, q string) (map[string]int64, error) {
	rows, err := c.Query(ctx, q)
	if err != nil {
		return nil, err
	}
	out := make(map[string]int64, len(rows))
	for _, r := range rows {
		out[r[0]] = atoi(r[1])
	}
	return out, nil
}

// PortableType maps a catalog column's type, in either family's spelling, to the portable type a
// workload file uses (Types), with a note where the mapping changes what the column holds ("" when
// it does not). ok is false for a type no portable one can stand in for (arrays, JSON, binary).
func PortableType(c CatalogColumn) (portable string, length, scale int, note string, ok bool) {
	t := c.Type
	base, _, _ := strings.Cut(t, "(")
	base = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(base), " unsigned"))
	switch {
	case t == "tinyint(1)" || base == "boolean" || base == "bool":
		return "bool", 0, 0, "", true
	case base == "smallint" || base == "tinyint":
		return "smallint", 0, 0, "", true
	case base == "integer" || base == "int" || base == "mediumint":
		return "int", 0, 0, unsignedNote(t), true
	case base == "bigint":
		return "bigint", 0, 0, unsignedNote(t), true
	case base == "numeric" || base == "decimal":
		if c.Precision == 0 { // PostgreSQL's numeric without a precision
			return "decimal", 30, 6, "numeric without a precision: decimal(30,6)", true
		}
		return "decimal", c.Precision, c.Scale, "", true
	case base == "double precision" || base == "double" || base == "real" || base == "float":
		return "decimal", 30, 6, base + ": decimal(30,6), exact where the source rounds", true
	case base == "character varying" || base == "varchar":
		if c.Length == 0 {
			return "text", 0, 0, "varchar without a length: text", true
		}
		return "varchar", c.Length, 0, "", true
	case base == "character" || base == "char":
		return "varchar", max(c.Length, 1), 0, "char: varchar (no blank padding)", true
	case base == "text" || base == "tinytext" || base == "mediumtext" || base == "longtext":
		return "text", 0, 0, "", true
	case base == "date":
		return "date", 0, 0, "", true
	case strings.HasPrefix(base, "timestamp") || base == "datetime":
		note := ""
		if strings.Contains(t, "with time zone") {
			note = "timestamp with time zone: timestamp, in the server's zone"
		}
		return "timestamp", 0, 0, note, true
	case base == "uuid":
		return "varchar", 36, 0, "uuid: varchar(36)", true
	}
	return "", 0, 0, "", false
}

func unsignedNote(t string) string {
	if strings.HasSuffix(t, " unsigned") {
		return "unsigned: signed, so the largest values may not fit"
	}
	return ""
}

func (postgres) TableSizes(ctx context.Context, c sqldb.Conn, pattern string) (table, index int64, err error) {
	return readSizes(ctx, c, "SELECT COALESCE(SUM(pg_table_size(c.oid)), 0), COALESCE(SUM(pg_indexes_size(c.oid)), 0) FROM pg_class c "+
		"WHERE c.relkind = 'r' AND c.relname LIKE ? AND c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema())", pattern)
}

// TableSizes: information_schema's figures come from the persistent statistics, current once the
// tables were analyzed (Maintain); MySQL 8 caches them for a day unless told not to (MariaDB has
// no such setting, hence the error ignored).
func (innodb) TableSizes(ctx context.Context, c sqldb.Conn, pattern string) (table, index int64, err error) {
	_ = c.Exec(ctx, "SET SESSION information_schema_stats_expiry = 0")
	return readSizes(ctx, c, "SELECT COALESCE(SUM(data_length), 0), COALESCE(SUM(index_length), 0) FROM information_schema.tables "+
		"WHERE table_schema = DATABASE() AND table_name LIKE ?", pattern)
}

func readSizes(ctx context.Context, c sqldb.Conn, q, pattern string) (table, index int64, err error) {
	rows, err := c.Query(ctx, q, pattern)
	if err != nil || len(rows) != 1 || len(rows[0]) != 2 {
		return 0, 0, fmt.Errorf("reading table sizes: %v", err)
	}
	if table, err = strconv.ParseInt(rows[0][0], 10, 64); err == nil {
		index, err = strconv.ParseInt(rows[0][1], 10, 64)
	}
	return table, index, err
}
