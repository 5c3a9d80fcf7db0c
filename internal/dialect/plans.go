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

// PlanStep is how a query plan reaches one table: the access in common words (Accesses), the
// engine's own name for it, and the index used, if any.
type PlanStep struct {
	Table, Access, EngineAccess, Index string
}

// The common words for a table's access path, the same on every engine.
const (
	FullScan      = "full scan"       // every row read: PostgreSQL's Seq Scan, MySQL's ALL
	FullIndexScan = "full index scan" // every entry of an index read: MySQL's index
	IndexLookup   = "index lookup"    // the rows found through an index: a key, a range, a bitmap
)

// pgAccess and innodbAccess map the engines' names for an access path to the common words.
var (
	pgAccess = map[string]string{"Seq Scan": FullScan, "Index Scan": IndexLookup, "Index Only Scan": IndexLookup,
		"Bitmap Heap Scan": IndexLookup, "Bitmap Index Scan": IndexLookup, "Tid Scan": IndexLookup}
	innodbAccess = map[string]string{"ALL": FullScan, "index": FullIndexScan, "const": IndexLookup, "system": IndexLookup,
		"eq_ref": IndexLookup, "ref": IndexLookup, "ref_or_null": IndexLookup, "range": IndexLookup, "index_merge": IndexLookup,
		"unique_subquery": IndexLookup, "index_subquery": IndexLookup, "fulltext": IndexLookup}
)

// Explain reads the plan the engine chooses for a statement with these parameters (EXPLAIN in
// JSON, which every engine here writes) and returns the access path to each table it reads,
// sorted by table: the "why" of a statement that one engine runs much slower than another.
func Explain(ctx context.Context, c sqldb.Conn, sql string, args ...any) ([]PlanStep, error) {
	prefix, relation, node, index, access := "EXPLAIN (FORMAT JSON) ", "Relation Name", "Node Type", "Index Name", pgAccess
	if c.Kind() == sqldb.MySQL || c.Kind() == sqldb.MariaDB {
		prefix, relation, node, index, access = "EXPLAIN FORMAT=JSON ", "table_name", "access_type", "key", innodbAccess
	}
	if c.Kind() == sqldb.MySQL {
		// MySQL 9 writes JSON plans in a second format by default; the first is the one MySQL 8
		// and MariaDB share (table_name, access_type, key). The variable only shapes EXPLAIN.
		_ = c.Exec(ctx, "SET SESSION explain_json_format_version = 1")
	}
	rows, err := c.Query(ctx, prefix+sql, args...)
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
		table, _ := m[relation].(string)
		if t, ok := names[strings.ToLower(table)]; ok {
			table = t // MySQL and MariaDB name a table by its alias; PostgreSQL by the table's name
		}
		kind, _ := m[node].(string)
		if table == "" || kind == "" {
			return
		}
		ix, _ := m[index].(string)
		common := access[kind]
		if common == "" {
			common = kind
		}
		steps = append(steps, PlanStep{Table: table, Access: common, EngineAccess: kind, Index: ix})
	})
	sort.SliceStable(steps, func(i, j int) bool { return steps[i].Table < steps[j].Table })
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

// PlanSummary writes steps as one line: "item: index lookup (item_pkey); stock: full scan".
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
