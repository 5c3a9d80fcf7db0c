package tpcc

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/workload"
)

// condition is one query that returns the rows breaking a condition (none when it holds). Every
// ? is the number of warehouses: the conditions are checked over warehouses 1..N, the ones a run
// with --warehouses N works on.
type condition struct {
	n    int
	name string
	sql  string
	// row describes one offending row.
	row func(r []string) string
	// holds says what was verified, for the verdict of a condition that holds.
	holds string
}

// The subqueries group whole tables by warehouse and district, so each condition costs a few
// scans, not a query per district or customer.
var conditions = []condition{
	{1, "W_YTD = sum(D_YTD)",
		`SELECT w_id, w_ytd, COALESCE(d.s, 0) FROM warehouse
		 LEFT JOIN (SELECT d_w_id, SUM(d_ytd) s FROM district WHERE d_w_id <= ? GROUP BY d_w_id) d ON d.d_w_id = w_id
		 WHERE w_id <= ? AND w_ytd <> COALESCE(d.s, 0) ORDER BY w_id`,
		func(r []string) string { return fmt.Sprintf("warehouse %s: W_YTD %s, sum(D_YTD) %s", r[0], r[1], r[2]) },
		"every warehouse"},
	{2, "D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)",
		`SELECT d_w_id, d_id, d_next_o_id - 1, COALESCE(o.m, 0), COALESCE(n.m, 0) FROM district
		 LEFT JOIN (SELECT o_w_id, o_d_id, MAX(o_id) m FROM orders WHERE o_w_id <= ? GROUP BY o_w_id, o_d_id) o
		   ON o.o_w_id = d_w_id AND o.o_d_id = d_id
		 LEFT JOIN (SELECT no_w_id, no_d_id, MAX(no_o_id) m FROM new_order WHERE no_w_id <= ? GROUP BY no_w_id, no_d_id) n
		   ON n.no_w_id = d_w_id AND n.no_d_id = d_id
		 WHERE d_w_id <= ? AND (o.m IS NULL OR d_next_o_id - 1 <> o.m OR (n.m IS NOT NULL AND n.m <> o.m)) ORDER BY d_w_id, d_id`,
		func(r []string) string {
			return fmt.Sprintf("district %s/%s: D_NEXT_O_ID-1 %s, max(O_ID) %s, max(NO_O_ID) %s", r[0], r[1], r[2], r[3], r[4])
		},
		"every district (max(NO_O_ID) where the district has new orders)"},
	{3, "max(NO_O_ID) - min(NO_O_ID) + 1 = count(new_order)",
		`SELECT no_w_id, no_d_id, MAX(no_o_id) - MIN(no_o_id) + 1, COUNT(*) FROM new_order WHERE no_w_id <= ?
		 GROUP BY no_w_id, no_d_id HAVING MAX(no_o_id) - MIN(no_o_id) + 1 <> COUNT(*) ORDER BY no_w_id, no_d_id`,
		func(r []string) string {
			return fmt.Sprintf("district %s/%s: range %s, rows %s", r[0], r[1], r[2], r[3])
		},
		"every district"},
	{4, "sum(O_OL_CNT) = count(order_line)",
		`SELECT o.o_w_id, o.o_d_id, o.s, COALESCE(l.c, 0) FROM
		   (SELECT o_w_id, o_d_id, SUM(o_ol_cnt) s FROM orders WHERE o_w_id <= ? GROUP BY o_w_id, o_d_id) o
		 LEFT JOIN (SELECT ol_w_id, ol_d_id, COUNT(*) c FROM order_line WHERE ol_w_id <= ? GROUP BY ol_w_id, ol_d_id) l
		   ON l.ol_w_id = o.o_w_id AND l.ol_d_id = o.o_d_id
		 WHERE o.s <> COALESCE(l.c, 0) ORDER BY o.o_w_id, o.o_d_id`,
		func(r []string) string {
			return fmt.Sprintf("district %s/%s: sum(O_OL_CNT) %s, order lines %s", r[0], r[1], r[2], r[3])
		},
		"every district"},
	{5, "O_CARRIER_ID is null iff a new_order row exists",
		`SELECT o_w_id, o_d_id, o_id, COALESCE(o_carrier_id, 0), CASE WHEN no_o_id IS NULL THEN 'no' ELSE 'a' END FROM orders
		 LEFT JOIN new_order ON no_w_id = o_w_id AND no_d_id = o_d_id AND no_o_id = o_id
		 WHERE o_w_id <= ? AND ((o_carrier_id IS NULL AND no_o_id IS NULL) OR (o_carrier_id IS NOT NULL AND no_o_id IS NOT NULL))
		 UNION ALL
		 SELECT no_w_id, no_d_id, no_o_id, -1, 'a' FROM new_order
		 LEFT JOIN orders ON o_w_id = no_w_id AND o_d_id = no_d_id AND o_id = no_o_id
		 WHERE no_w_id <= ? AND o_id IS NULL`,
		func(r []string) string {
			switch r[3] {
			case "-1":
				return fmt.Sprintf("new order %s/%s/%s has no order", r[0], r[1], r[2])
			case "0":
				return fmt.Sprintf("order %s/%s/%s: O_CARRIER_ID null and %s new_order row", r[0], r[1], r[2], r[4])
			}
			return fmt.Sprintf("order %s/%s/%s: O_CARRIER_ID %s and %s new_order row", r[0], r[1], r[2], r[3], r[4])
		},
		"every order"},
	{6, "O_OL_CNT = count of the order's lines",
		`SELECT o_w_id, o_d_id, o_id, o_ol_cnt, COALESCE(l.c, 0) FROM orders
		 LEFT JOIN (SELECT ol_w_id, ol_d_id, ol_o_id, COUNT(*) c FROM order_line WHERE ol_w_id <= ?
		            GROUP BY ol_w_id, ol_d_id, ol_o_id) l ON l.ol_w_id = o_w_id AND l.ol_d_id = o_d_id AND l.ol_o_id = o_id
		 WHERE o_w_id <= ? AND o_ol_cnt <> COALESCE(l.c, 0)`,
		func(r []string) string {
			return fmt.Sprintf("order %s/%s/%s: O_OL_CNT %s, order lines %s", r[0], r[1], r[2], r[3], r[4])
		},
		"every order"},
	{7, "OL_DELIVERY_D is null iff O_CARRIER_ID is null",
		`SELECT o_w_id, o_d_id, o_id, ol_number, CASE WHEN o_carrier_id IS NULL THEN 'null' ELSE 'set' END FROM orders
		 JOIN order_line ON ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id
		 WHERE o_w_id <= ? AND ol_w_id <= ?
		   AND ((o_carrier_id IS NULL AND ol_delivery_d IS NOT NULL) OR (o_carrier_id IS NOT NULL AND ol_delivery_d IS NULL))`,
		func(r []string) string {
			if r[4] == "null" {
				return fmt.Sprintf("order line %s/%s/%s/%s: O_CARRIER_ID null but OL_DELIVERY_D set", r[0], r[1], r[2], r[3])
			}
			return fmt.Sprintf("order line %s/%s/%s/%s: O_CARRIER_ID set but OL_DELIVERY_D null", r[0], r[1], r[2], r[3])
		},
		"every order line"},
	{8, "W_YTD = sum(H_AMOUNT)",
		`SELECT w_id, w_ytd, COALESCE(h.s, 0) FROM warehouse
		 LEFT JOIN (SELECT h_w_id, SUM(h_amount) s FROM history WHERE h_w_id <= ? GROUP BY h_w_id) h ON h.h_w_id = w_id
		 WHERE w_id <= ? AND w_ytd <> COALESCE(h.s, 0) ORDER BY w_id`,
		func(r []string) string {
			return fmt.Sprintf("warehouse %s: W_YTD %s, sum(H_AMOUNT) %s", r[0], r[1], r[2])
		},
		"every warehouse"},
	{9, "D_YTD = sum(H_AMOUNT)",
		`SELECT d_w_id, d_id, d_ytd, COALESCE(h.s, 0) FROM district
		 LEFT JOIN (SELECT h_w_id, h_d_id, SUM(h_amount) s FROM history WHERE h_w_id <= ? GROUP BY h_w_id, h_d_id) h
		   ON h.h_w_id = d_w_id AND h.h_d_id = d_id
		 WHERE d_w_id <= ? AND d_ytd <> COALESCE(h.s, 0) ORDER BY d_w_id, d_id`,
		func(r []string) string {
			return fmt.Sprintf("district %s/%s: D_YTD %s, sum(H_AMOUNT) %s", r[0], r[1], r[2], r[3])
		},
		"every district"},
	// Clause 3.3.2.11 states count(orders) - count(new_order) = 2100 for the initial database:
	// the 2100 orders per district delivered at load. Every Delivery since moves one more order
	// per district out of new_order, so the form that holds at any time counts those too:
	// count(O) - count(NO) = 2100 + delivered orders with O_ID > 2100. Right after prepare that
	// is the spec's equation exactly.
	{11, "count(orders) - count(new_order) = 2100 + orders delivered since the load",
		`SELECT d_w_id, d_id, COALESCE(o.c, 0), COALESCE(n.c, 0), COALESCE(o.late, 0) FROM district
		 LEFT JOIN (SELECT o_w_id, o_d_id, COUNT(*) c, SUM(CASE WHEN o_id > 2100 AND o_carrier_id IS NOT NULL THEN 1 ELSE 0 END) late
		            FROM orders WHERE o_w_id <= ? GROUP BY o_w_id, o_d_id) o ON o.o_w_id = d_w_id AND o.o_d_id = d_id
		 LEFT JOIN (SELECT no_w_id, no_d_id, COUNT(*) c FROM new_order WHERE no_w_id <= ? GROUP BY no_w_id, no_d_id) n
		   ON n.no_w_id = d_w_id AND n.no_d_id = d_id
		 WHERE d_w_id <= ? AND COALESCE(o.c, 0) - COALESCE(n.c, 0) <> 2100 + COALESCE(o.late, 0) ORDER BY d_w_id, d_id`,
		func(r []string) string {
			return fmt.Sprintf("district %s/%s: %s orders - %s new orders, %s delivered since the load", r[0], r[1], r[2], r[3], r[4])
		},
		"every district"},
}

// customerBalances checks conditions 10 and 12 in one pass, since both compare a customer with
// the sum of its delivered order lines.
const customerBalances = `SELECT c_w_id, c_d_id, c_id, c_balance, c_ytd_payment, COALESCE(h.s, 0), COALESCE(o.s, 0),
  CASE WHEN c_balance <> COALESCE(o.s, 0) - COALESCE(h.s, 0) THEN 1 ELSE 0 END,
  CASE WHEN c_balance + c_ytd_payment <> COALESCE(o.s, 0) THEN 1 ELSE 0 END
FROM customer
LEFT JOIN (SELECT h_c_w_id, h_c_d_id, h_c_id, SUM(h_amount) s FROM history WHERE h_c_w_id <= ?
           GROUP BY h_c_w_id, h_c_d_id, h_c_id) h ON h.h_c_w_id = c_w_id AND h.h_c_d_id = c_d_id AND h.h_c_id = c_id
LEFT JOIN (SELECT o_w_id, o_d_id, o_c_id, SUM(ol_amount) s FROM orders
           JOIN order_line ON ol_w_id = o_w_id AND ol_d_id = o_d_id AND ol_o_id = o_id
           WHERE o_w_id <= ? AND ol_w_id <= ? AND ol_delivery_d IS NOT NULL
           GROUP BY o_w_id, o_d_id, o_c_id) o ON o.o_w_id = c_w_id AND o.o_d_id = c_d_id AND o.o_c_id = c_id
WHERE c_w_id <= ? AND (c_balance <> COALESCE(o.s, 0) - COALESCE(h.s, 0) OR c_balance + c_ytd_payment <> COALESCE(o.s, 0))`

const (
	name10 = "C_BALANCE = sum(delivered OL_AMOUNT) - sum(H_AMOUNT)"
	name12 = "C_BALANCE + C_YTD_PAYMENT = sum(delivered OL_AMOUNT)"
)

// Conditions checks the twelve consistency conditions of clause 3.3.2 over warehouses
// 1..warehouses and returns a verdict for each, in order, named "TPC-C condition N: ...". A
// condition whose query fails is a failed verdict with the error as its detail.
func Conditions(ctx context.Context, c sqldb.Conn, warehouses int) []workload.Verdict {
	return conditionsOn(ctx, c, warehouses, nil)
}

// tableWord finds the nine tables' names in the conditions' SQL; no column or alias is one.
var tableWord = regexp.MustCompile(`\b(warehouse|district|customer|history|new_order|orders|order_line|item|stock)\b`)

// conditionsOn is Conditions over tables named by table (sysbench-tpcc's "orders1"); nil keeps
// TPC-C's names.
func conditionsOn(ctx context.Context, c sqldb.Conn, warehouses int, table func(string) string) []workload.Verdict {
	named := func(sql string) string {
		if table == nil {
			return sql
		}
		return tableWord.ReplaceAllStringFunc(sql, table)
	}
	// Indexed by condition number: 10 and 12 come from one query, after the others.
	out := make([]workload.Verdict, 13)
	for _, cd := range conditions {
		n := strings.Count(cd.sql, "?")
		args := make([]any, n)
		for i := range args {
			args[i] = warehouses
		}
		rows, err := c.Query(ctx, named(cd.sql), args...)
		out[cd.n] = verdict(cd.n, cd.name, cd.holds, rows, err, cd.row)
	}
	rows, err := c.Query(ctx, named(customerBalances), warehouses, warehouses, warehouses, warehouses)
	var r10, r12 [][]string
	for _, r := range rows {
		if r[7] == "1" {
			r10 = append(r10, r)
		}
		if r[8] == "1" {
			r12 = append(r12, r)
		}
	}
	out[10] = verdict(10, name10, "every customer", r10, err, func(r []string) string {
		return fmt.Sprintf("customer %s/%s/%s: C_BALANCE %s, delivered %s, paid %s", r[0], r[1], r[2], r[3], r[6], r[5])
	})
	out[12] = verdict(12, name12, "every customer", r12, err, func(r []string) string {
		return fmt.Sprintf("customer %s/%s/%s: C_BALANCE %s + C_YTD_PAYMENT %s, delivered %s", r[0], r[1], r[2], r[3], r[4], r[6])
	})
	return out[1:]
}

// verdict turns a condition's offending rows into its verdict, naming the first few.
func verdict(n int, name, holds string, rows [][]string, err error, row func([]string) string) workload.Verdict {
	v := workload.Verdict{Name: fmt.Sprintf("TPC-C condition %d: %s", n, name)}
	switch {
	case err != nil:
		v.Detail = "query failed: " + err.Error()
	case len(rows) == 0:
		v.OK, v.Detail = true, "holds for "+holds
	default:
		const show = 3
		parts := make([]string, 0, show)
		for _, r := range rows[:min(show, len(rows))] {
			parts = append(parts, row(r))
		}
		more := ""
		if len(rows) > show {
			more = fmt.Sprintf("; and %d more", len(rows)-show)
		}
		v.Detail = fmt.Sprintf("%d violation(s): %s%s", len(rows), strings.Join(parts, "; "), more)
	}
	return v
}
