package dialect

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/fairbench/fairbench/internal/sqldb"
)

// PlanStep is how a query plan reaches one table: the access in common words (FullScan,
// FullIndexScan, IndexLookup, or the engine's own name where it has none), and the index used.
type PlanStep struct {
	Table, Access, Index string
}

// The common words for a table's access path, the same on every engine.
const (
	FullScan      = "full scan"       // every row read: PostgreSQL's Seq Scan, MySQL's ALL
	FullIndexScan = "full index scan" // every entry of an index read: MySQL's index
	IndexLookup   = "index lookup"    // the rows found through an index: a key, a range, a bitmap
)

// planFormat is how one engine family writes a plan in JSON: the EXPLAIN that asks for it, the
// keys of a table's name, access and index, and the engine's names for the accesses.
type planFormat struct {
	explain               string
	relation, node, index string
	access                map[string]string
	sessionSetup          string // run first on the connection, where the format needs it
}

var pgPlans = planFormat{explain: "EXPLAIN (FORMAT JSON) ", relation: "Relation Name", node: "Node Type", index: "Index Name",
	access: map[string]string{"Seq Scan": FullScan, "Index Scan": IndexLookup, "Index Only Scan": IndexLookup,
		"Bitmap Heap Scan": IndexLookup, "Bitmap Index Scan": IndexLookup, "Tid Scan": IndexLookup}}

func (postgres) planFormat() planFormat { return pgPlans }

var innodbPlans = planFormat{explain: "EXPLAIN FORMAT=JSON ", relation: "table_name", node: "access_type", index: "key",
	access: map[string]string{"ALL": FullScan, "index": FullIndexScan, "const": IndexLookup, "system": IndexLookup,
		"eq_ref": IndexLookup, "ref": IndexLookup, "ref_or_null": IndexLookup, "range": IndexLookup, "index_merge": IndexLookup,
		"unique_subquery": IndexLookup, "index_subquery": IndexLookup, "fulltext": IndexLookup}}

func (d innodb) planFormat() planFormat {
	f := innodbPlans
	if d.kind == sqldb.MySQL {
		// MySQL 9 writes JSON plans in a second format by default; the first is the one MySQL 8
		// and MariaDB share (table_name, access_type, key). The variable only shapes EXPLAIN.
		f.sessionSetup = "SET SESSION explain_json_format_version = 1"
	}
	return f
}

// Explain reads the plan the engine chooses for a statement with these parameters (EXPLAIN in
// JSON, which every engine here writes) and returns the access path to each table it reads, in
// the plan's own order (depth first: the join order, then subqueries): the "why" of a statement
// that one engine runs much slower than another, and of one that got slower after its data
// changed.
func Explain(ctx context.Context, c sqldb.Conn, sql string, args ...any) ([]PlanStep, error) {
	f := byKind(c.Kind()).planFormat()
	if f.sessionSetup != "" {
		_ = c.Exec(ctx, f.sessionSetup)
	}
	rows, err := c.Query(ctx, f.explain+sql, args...)
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 || len(rows[0]) == 0 {
		return nil, fmt.Errorf("EXPLAIN returned no plan")
	}
	var plan any
	if err := json.Unmarshal([]byte(rows[0][0]), &plan); err != nil {
		return nil, fmt.Errorf("reading the plan: %w", err)
	}
	var steps []PlanStep
	names := aliases(sql)
	walkPlan(plan, func(m map[string]any) {
		table, _ := m[f.relation].(string)
		if t, ok := names[strings.ToLower(table)]; ok {
			table = t // MySQL and MariaDB name a table by its alias; PostgreSQL by the table's name
		}
		kind, _ := m[f.node].(string)
		if table == "" || kind == "" {
			return
		}
		ix, _ := m[f.index].(string)
		access := f.access[kind]
		if access == "" {
			access = kind
		}
		steps = append(steps, PlanStep{Table: table, Access: access, Index: ix})
	})
	return steps, nil
}

// tableAlias is a table named in a FROM or JOIN, or after a comma in a FROM list, with its alias.
var tableAlias = regexp.MustCompile(`(?i)(?:\bFROM|\bJOIN|,)\s+([a-z_][a-z0-9_]*)(?:\s+(?:AS\s+)?([a-z_][a-z0-9_]*))?`)

// notAlias are the words that may follow a table's name and are not its alias.
var notAlias = map[string]bool{"where": true, "join": true, "on": true, "left": true, "right": true, "inner": true,
	"outer": true, "cross": true, "natural": true, "group": true, "order": true, "limit": true, "for": true, "using": true,
	"union": true, "having": true, "window": true, "straight_join": true, "full": true, "lateral": true}

// aliases maps each alias in sql to its table, lowercased.
func aliases(sql string) map[string]string {
	out := map[string]string{}
	for _, m := range tableAlias.FindAllStringSubmatch(sql, -1) {
		if a := strings.ToLower(m[2]); a != "" && !notAlias[a] {
			out[a] = m[1]
		}
	}
	return out
}

// walkPlan calls visit on every object of a JSON plan, depth first: both families nest the
// tables' accesses (PostgreSQL's Plans, MySQL's nested_loop and query_block) at any depth.
func walkPlan(v any, visit func(map[string]any)) {
	switch x := v.(type) {
	case map[string]any:
		visit(x)
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			walkPlan(x[k], visit)
		}
	case []any:
		for _, e := range x {
			walkPlan(e, visit)
		}
	}
}

// PlanSummary writes steps as one line, in plan order: "item: index lookup (item_pkey); stock:
// full scan". Two plans with the same summary reach the same tables the same way in the same order.
func PlanSummary(steps []PlanStep) string {
	parts := make([]string, len(steps))
	for i, s := range steps {
		parts[i] = s.Table + ": " + s.Access
		if s.Index != "" {
			parts[i] += " (" + s.Index + ")"
		}
	}
	return strings.Join(parts, "; ")
}
