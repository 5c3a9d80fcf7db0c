package tpch

import (
	"fmt"
	"math"
	"strings"

	"github.com/fairbench/fairbench/internal/dialect"
)

// column is one column of the specification's clause 1.4 schema. numeric columns are sent
// unquoted in INSERTs.
type column struct {
	name, typ string
	numeric   bool
}

type table struct {
	name    string
	columns []column
	pk      []string
	// indexes on foreign-key columns (name -> columns) that the PK does not already lead with.
	indexes []dialect.Index
	// baseRows is the row count at SF 1 (0: fixed size, see fixedRows).
	baseRows  int64
	fixedRows int64
}

func c(name, typ string) column { return column{name: name, typ: typ} }
func n(name, typ string) column { return column{name: name, typ: typ, numeric: true} }

// tables lists parents first, as workload.ClaimTables and DropOwned expect; metaTable comes last.
var tables = []table{
	{name: "region", fixedRows: 5, pk: []string{"r_regionkey"},
		columns: []column{n("r_regionkey", "integer"), c("r_name", "char(25)"), c("r_comment", "varchar(152)")}},
	{name: "nation", fixedRows: 25, pk: []string{"n_nationkey"},
		indexes: []dialect.Index{{Name: "tpch_n_regionkey", Columns: "n_regionkey"}},
		columns: []column{n("n_nationkey", "integer"), c("n_name", "char(25)"), n("n_regionkey", "integer"), c("n_comment", "varchar(152)")}},
	{name: "part", baseRows: 200000, pk: []string{"p_partkey"},
		columns: []column{n("p_partkey", "integer"), c("p_name", "varchar(55)"), c("p_mfgr", "char(25)"), c("p_brand", "char(10)"),
			c("p_type", "varchar(25)"), n("p_size", "integer"), c("p_container", "char(10)"), n("p_retailprice", "decimal(15,2)"),
			c("p_comment", "varchar(23)")}},
	{name: "supplier", baseRows: 10000, pk: []string{"s_suppkey"},
		indexes: []dialect.Index{{Name: "tpch_s_nationkey", Columns: "s_nationkey"}},
		columns: []column{n("s_suppkey", "integer"), c("s_name", "char(25)"), c("s_address", "varchar(40)"), n("s_nationkey", "integer"),
			c("s_phone", "char(15)"), n("s_acctbal", "decimal(15,2)"), c("s_comment", "varchar(101)")}},
	{name: "partsupp", baseRows: 800000, pk: []string{"ps_partkey", "ps_suppkey"},
		indexes: []dialect.Index{{Name: "tpch_ps_suppkey", Columns: "ps_suppkey"}},
		columns: []column{n("ps_partkey", "integer"), n("ps_suppkey", "integer"), n("ps_availqty", "integer"),
			n("ps_supplycost", "decimal(15,2)"), c("ps_comment", "varchar(199)")}},
	{name: "customer", baseRows: 150000, pk: []string{"c_custkey"},
		indexes: []dialect.Index{{Name: "tpch_c_nationkey", Columns: "c_nationkey"}},
		columns: []column{n("c_custkey", "integer"), c("c_name", "varchar(25)"), c("c_address", "varchar(40)"), n("c_nationkey", "integer"),
			c("c_phone", "char(15)"), n("c_acctbal", "decimal(15,2)"), c("c_mktsegment", "char(10)"), c("c_comment", "varchar(117)")}},
	{name: "orders", baseRows: 1500000, pk: []string{"o_orderkey"},
		indexes: []dialect.Index{{Name: "tpch_o_custkey", Columns: "o_custkey"}},
		columns: []column{n("o_orderkey", "integer"), n("o_custkey", "integer"), c("o_orderstatus", "char(1)"), n("o_totalprice", "decimal(15,2)"),
			c("o_orderdate", "date"), c("o_orderpriority", "char(15)"), c("o_clerk", "char(15)"), n("o_shippriority", "integer"),
			c("o_comment", "varchar(79)")}},
	{name: "lineitem", baseRows: 6000000, pk: []string{"l_orderkey", "l_linenumber"},
		// (l_partkey, l_suppkey) is the foreign key to partsupp and also serves l_partkey's to part.
		indexes: []dialect.Index{{Name: "tpch_l_partsupp", Columns: "l_partkey, l_suppkey"}, {Name: "tpch_l_suppkey", Columns: "l_suppkey"}},
		columns: []column{n("l_orderkey", "integer"), n("l_partkey", "integer"), n("l_suppkey", "integer"), n("l_linenumber", "integer"),
			n("l_quantity", "decimal(15,2)"), n("l_extendedprice", "decimal(15,2)"), n("l_discount", "decimal(15,2)"), n("l_tax", "decimal(15,2)"),
			c("l_returnflag", "char(1)"), c("l_linestatus", "char(1)"), c("l_shipdate", "date"), c("l_commitdate", "date"),
			c("l_receiptdate", "date"), c("l_shipinstruct", "char(25)"), c("l_shipmode", "char(10)"), c("l_comment", "varchar(44)")}},
}

// metaTable holds what prepare learned (scale factor, row counts, load times) for run and check.
const metaTable = "tpch_meta"

func tableNames() []string {
	out := make([]string, 0, len(tables)+1)
	for _, t := range tables {
		out = append(out, t.name)
	}
	return append(out, metaTable)
}

func (t table) columnNames() []string {
	out := make([]string, len(t.columns))
	for i, col := range t.columns {
		out[i] = col.name
	}
	return out
}

// expectedRows is dbgen's row count for the scale factor: base × SF, truncated, for the tables
// that scale; lineitem's count is whatever the orders drew (1 to 7 lines each), so it is only
// about 6,000,000 × SF and prepare records the exact figure.
func (t table) expectedRows(sf float64) int64 {
	if t.fixedRows > 0 {
		return t.fixedRows
	}
	// The epsilon keeps 10000 × 0.01 = 99.99999999999999 from truncating to 99.
	return int64(math.Floor(float64(t.baseRows)*sf + 1e-6))
}

// createSQL is the table's DDL. Where the engine clusters rows by the primary key (InnoDB), the
// key is declared up front: dbgen writes rows in key order, so loading into it is an append,
// where adding it afterwards would rebuild the whole table. PostgreSQL heaps are not clustered,
// so there the key is built after the load, as pg_dump does. The table options give the MySQL
// family a binary collation, so that LIKE and comparisons are case- and accent-sensitive as in
// PostgreSQL and the specification (Q16's '%Customer%Complaints%').
func (t table) createSQL(d dialect.Dialect) string {
	cols := make([]string, len(t.columns))
	for i, col := range t.columns {
		cols[i] = "  " + col.name + " " + col.typ + " NOT NULL"
	}
	if d.Caps().PrimaryKeyAtCreate {
		cols = append(cols, "  PRIMARY KEY ("+strings.Join(t.pk, ", ")+")")
	}
	return fmt.Sprintf("CREATE TABLE %s (\n%s\n)%s", t.name, strings.Join(cols, ",\n"), d.TableOptions())
}

// indexSQL builds what the load left out: the primary key where it was not declared up front,
// and the indexes on foreign-key columns.
func (t table) indexSQL(d dialect.Dialect) []string {
	var out []string
	if !d.Caps().PrimaryKeyAtCreate {
		out = append(out, fmt.Sprintf("ALTER TABLE %s ADD PRIMARY KEY (%s)", t.name, strings.Join(t.pk, ", ")))
	}
	return append(out, d.CreateIndexes(t.name, t.indexes)...)
}

const metaCreateSQL = "CREATE TABLE " + metaTable + " (k varchar(64) NOT NULL PRIMARY KEY, v varchar(255) NOT NULL)"
