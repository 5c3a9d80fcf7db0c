package tpcc

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/fairbench/fairbench/internal/dialect"
	"github.com/fairbench/fairbench/internal/randgen"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/workload"
)

// sbWorker runs sysbench-tpcc's event: the statements of its tpcc_run.lua, sent as text with
// their values written in, as sysbench does, in the same order and the same number, with the same
// random inputs. Where sysbench-tpcc departs from TPC-C, fairbench does what sysbench-tpcc does,
// since the point is to sit beside its figures:
//   - its "other warehouse" is always the home one (the loop in other_ware ends when the draw
//     equals the home warehouse), so 1% of order lines and 15% of payments are marked remote but
//     stay local;
//   - NURand's constant C is drawn anew on every call (its init flag is 0, which Lua takes as true);
//   - the rolled-back NewOrder's unused item is the second to last, not the last;
//   - OrderStatus reads the order lines of order number D_ID, not of the customer's last order
//     (its format arguments are shifted), and its last-order query has no LIMIT;
//   - Payment writes the customer's balance computed by the client and leaves C_PAYMENT_CNT alone.
//
// What fairbench does not copy: it never turns foreign-key checks off (sysbench-tpcc does on MySQL
// only), and a deadlock or serialization failure is retried up to --max-tries with the same
// redrawn-each-time inputs sysbench's restart gives, not forever.
type sbWorker struct {
	s     *sbtpcc
	conn  sqldb.Conn
	d     dialect.Dialect
	g     gen
	lines []olInput
}

// NewWorker sets the session's isolation level as sysbench-tpcc's connection init does (on every
// engine: it sets it on MySQL and PostgreSQL alike).
func (s *sbtpcc) NewWorker(ctx context.Context, conn sqldb.Conn, rng *randgen.Rand, thread, threads int) (workload.Worker, error) {
	if thread == 0 {
		if err := s.checkPrepared(ctx, conn); err != nil {
			return nil, err
		}
	}
	d := dialect.Of(conn)
	if err := conn.Exec(ctx, d.Isolation(s.isolation)); err != nil {
		return nil, err
	}
	return &sbWorker{s: s, conn: conn, d: d, g: gen{rng}, lines: make([]olInput, 0, 15)}, nil
}

// Transaction is one sysbench event: a transaction type uniform over 23 (NewOrder 10, Payment 10,
// OrderStatus, Delivery and StockLevel 1 each) on a random table set and warehouse. A retry
// draws anew, as sysbench's restarted event() does.
func (w *sbWorker) Transaction(ctx context.Context, q *workload.Txn) error {
	r := w.g.intn(1, 23)
	set, wh := w.g.intn(1, w.s.tables), w.g.intn(1, w.s.scale)
	if err := w.other(ctx, "BEGIN"); err != nil {
		return err
	}
	var err error
	switch {
	case r <= 10:
		q.Kind = kindNewOrder
		err = w.newOrder(ctx, set, wh)
	case r <= 20:
		q.Kind = kindPayment
		err = w.payment(ctx, set, wh)
	case r <= 21:
		q.Kind = kindOrderStatus
		err = w.orderStatus(ctx, set, wh)
	case r <= 22:
		q.Kind = kindDelivery
		err = w.delivery(ctx, set, wh)
	default:
		q.Kind = kindStockLevel
		err = w.stockLevel(ctx, set, wh)
	}
	if err != nil {
		return err
	}
	return w.other(ctx, "COMMIT")
}

func (w *sbWorker) other(ctx context.Context, sql string) error {
	return w.conn.Exec(ctx, sql)
}

func (w *sbWorker) write(ctx context.Context, format string, args ...any) error {
	return w.conn.Exec(ctx, fmt.Sprintf(format, args...))
}

func (w *sbWorker) read(ctx context.Context, format string, args ...any) ([][]string, error) {
	return w.conn.Query(ctx, fmt.Sprintf(format, args...))
}

// readRow is sysbench's query_row: the first row, which must be there.
func (w *sbWorker) readRow(ctx context.Context, format string, args ...any) ([]string, error) {
	rows, err := w.read(ctx, format, args...)
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("sbtpcc: no row for %s", strings.TrimSpace(fmt.Sprintf(format, args...)))
	}
	return rows[0], nil
}

// quote writes a generated string as a literal; the loader's strings hold only letters, digits
// and spaces, but a quote must never end a literal early.
func (w *sbWorker) quote(s string) string { return w.d.Literal(s) }

// nurand is sysbench-tpcc's NURand, whose constant C is drawn on every call.
func (w *sbWorker) nurand(a, x, y int) int { return w.g.nurand(a, w.g.intn(0, a), x, y) }

func (w *sbWorker) lastName() string { return string(lastName(nil, w.nurand(255, 0, 999))) }

// middle is the row sysbench-tpcc takes of n customers with one last name sorted by first name:
// it rounds an odd count above one up and reads n/2+1 rows.
func middle(n int) int {
	if n > 1 && n%2 == 1 {
		n++
	}
	return n / 2
}

func (w *sbWorker) newOrder(ctx context.Context, set, wh int) error {
	d, cID := w.g.intn(1, districtsPerWH), w.nurand(1023, 1, customersPerDist)
	n, rbk := w.g.intn(5, 15), w.g.intn(1, 100)
	w.lines = w.lines[:0]
	allLocal := 1
	for i := 1; i <= n; i++ {
		in := olInput{item: w.nurand(8191, 1, items), supplyW: wh}
		if i == n-1 && rbk == 1 {
			in.item = -1
		}
		if w.g.intn(1, 100) == 1 {
			allLocal = 0 // other_ware returns the home warehouse
		}
		in.qty = w.g.intn(1, 10)
		w.lines = append(w.lines, in)
	}
	row, err := w.readRow(ctx, "SELECT c_discount, c_last, c_credit, w_tax FROM customer%d, warehouse%d WHERE w_id = %d AND c_w_id = w_id AND c_d_id = %d AND c_id = %d",
		set, set, wh, d, cID)
	if err != nil {
		return err
	}
	discount, _ := strconv.ParseFloat(row[0], 64)
	wTax, _ := strconv.ParseFloat(row[3], 64)
	row, err = w.readRow(ctx, "SELECT d_next_o_id, d_tax FROM district%d WHERE d_w_id = %d AND d_id = %d FOR UPDATE", set, wh, d)
	if err != nil {
		return err
	}
	oID, err := strconv.Atoi(row[0])
	if err != nil {
		return fmt.Errorf("d_next_o_id %q: %w", row[0], err)
	}
	dTax, _ := strconv.ParseFloat(row[1], 64)
	if err := w.write(ctx, "UPDATE district%d SET d_next_o_id = %d WHERE d_id = %d AND d_w_id = %d", set, oID+1, d, wh); err != nil {
		return err
	}
	if err := w.write(ctx, "INSERT INTO orders%d (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_ol_cnt, o_all_local) VALUES (%d, %d, %d, %d, NOW(), %d, %d)",
		set, oID, d, wh, cID, n, allLocal); err != nil {
		return err
	}
	if err := w.write(ctx, "INSERT INTO new_orders%d (no_o_id, no_d_id, no_w_id) VALUES (%d, %d, %d)", set, oID, d, wh); err != nil {
		return err
	}
	for num, in := range w.lines {
		rows, err := w.read(ctx, "SELECT i_price, i_name, i_data FROM item%d WHERE i_id = %d", set, in.item)
		if err != nil {
			return err
		}
		if len(rows) == 0 {
			// sysbench-tpcc rolls back here and counts the event as done, and as an error.
			return workload.ErrRolledBack
		}
		price, _ := strconv.ParseFloat(rows[0][0], 64)
		row, err := w.readRow(ctx, "SELECT s_quantity, s_data, s_dist_%02d s_dist FROM stock%d WHERE s_i_id = %d AND s_w_id = %d FOR UPDATE",
			d, set, in.item, in.supplyW)
		if err != nil {
			return err
		}
		sQty, _ := strconv.Atoi(row[0])
		if sQty > in.qty {
			sQty -= in.qty
		} else {
			sQty = sQty - in.qty + 91
		}
		if err := w.write(ctx, "UPDATE stock%d SET s_quantity = %d WHERE s_i_id = %d AND s_w_id = %d", set, sQty, in.item, in.supplyW); err != nil {
			return err
		}
		// sysbench-tpcc writes the amount with %d: LuaJIT truncates it to whole units.
		amount := int64(float64(in.qty) * price * (1 + wTax + dTax) * (1 - discount))
		if err := w.write(ctx, "INSERT INTO order_line%d (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_dist_info) "+
			"VALUES (%d, %d, %d, %d, %d, %d, %d, %d, %s)", set, oID, d, wh, num+1, in.item, in.supplyW, in.qty, amount, w.quote(row[2])); err != nil {
			return err
		}
	}
	return nil
}

func (w *sbWorker) payment(ctx context.Context, set, wh int) error {
	d, cID := w.g.intn(1, districtsPerWH), w.nurand(1023, 1, customersPerDist)
	amount := int64(w.g.intn(1, 5000))
	cLast := w.lastName()
	byName := w.g.intn(1, 100) <= 60
	cW, cD := wh, d
	if w.g.intn(1, 100) > 85 {
		cD = w.g.intn(1, districtsPerWH) // other_ware returns the home warehouse
	}
	if err := w.write(ctx, "UPDATE warehouse%d SET w_ytd = w_ytd + %d WHERE w_id = %d", set, amount, wh); err != nil {
		return err
	}
	wRow, err := w.readRow(ctx, "SELECT w_street_1, w_street_2, w_city, w_state, w_zip, w_name FROM warehouse%d WHERE w_id = %d", set, wh)
	if err != nil {
		return err
	}
	if err := w.write(ctx, "UPDATE district%d SET d_ytd = d_ytd + %d WHERE d_w_id = %d AND d_id = %d", set, amount, wh, d); err != nil {
		return err
	}
	dRow, err := w.readRow(ctx, "SELECT d_street_1, d_street_2, d_city, d_state, d_zip, d_name FROM district%d WHERE d_w_id = %d AND d_id = %d", set, wh, d)
	if err != nil {
		return err
	}
	if byName {
		if cID, err = w.customerByName(ctx, "c_id", 0, set, cW, cD, cLast); err != nil {
			return err
		}
	}
	c, err := w.readRow(ctx, "SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, "+
		"c_credit, c_credit_lim, c_discount, c_balance, c_ytd_payment, c_since FROM customer%d WHERE c_w_id = %d AND c_d_id = %d AND c_id = %d FOR UPDATE",
		set, cW, cD, cID)
	if err != nil {
		return err
	}
	balance := string(appendDec(nil, parseCents(c[12])-amount*100, 2))
	ytd := string(appendDec(nil, parseCents(c[13])+amount*100, 2))
	if c[9] == "BC" {
		data, err := w.readRow(ctx, "SELECT c_data FROM customer%d WHERE c_w_id = %d AND c_d_id = %d AND c_id = %d", set, cW, cD, cID)
		if err != nil {
			return err
		}
		newData := fmt.Sprintf("| %4d %2d %4d %2d %4d $%7.2f %12d %24s", cID, cD, cW, d, wh, float64(amount), time.Now().Unix(), data[0])
		if len(newData) > 500 {
			newData = newData[:500]
		}
		err = w.write(ctx, "UPDATE customer%d SET c_balance = %s, c_ytd_payment = %s, c_data = %s WHERE c_w_id = %d AND c_d_id = %d AND c_id = %d",
			set, balance, ytd, w.quote(newData), cW, cD, cID)
		if err != nil {
			return err
		}
	} else if err := w.write(ctx, "UPDATE customer%d SET c_balance = %s, c_ytd_payment = %s WHERE c_w_id = %d AND c_d_id = %d AND c_id = %d",
		set, balance, ytd, cW, cD, cID); err != nil {
		return err
	}
	return w.write(ctx, "INSERT INTO history%d (h_c_d_id, h_c_w_id, h_c_id, h_d_id, h_w_id, h_date, h_amount, h_data) VALUES (%d, %d, %d, %d, %d, NOW(), %d, %s)",
		set, cD, cW, cID, d, wh, amount, w.quote(fmt.Sprintf("%10s %10s   ", wRow[5], dRow[5])))
}

// customerByName is sysbench-tpcc's selection by last name: a count, then the customers sorted by
// first name, of which it takes the middle row's column at index idCol.
func (w *sbWorker) customerByName(ctx context.Context, cols string, idCol, set, cW, cD int, cLast string) (int, error) {
	cnt, err := w.readRow(ctx, "SELECT count(c_id) namecnt FROM customer%d WHERE c_w_id = %d AND c_d_id = %d AND c_last = %s", set, cW, cD, w.quote(cLast))
	if err != nil {
		return 0, err
	}
	n, _ := strconv.Atoi(cnt[0])
	rows, err := w.read(ctx, "SELECT %s FROM customer%d WHERE c_w_id = %d AND c_d_id = %d AND c_last = %s ORDER BY c_first", cols, set, cW, cD, w.quote(cLast))
	if err != nil {
		return 0, err
	}
	if len(rows) == 0 {
		return 0, fmt.Errorf("sbtpcc: no customer named %s in district %d/%d of table set %d", cLast, cW, cD, set)
	}
	return strconv.Atoi(rows[min(middle(n), len(rows)-1)][idCol])
}

func (w *sbWorker) orderStatus(ctx context.Context, set, wh int) error {
	d, cID := w.g.intn(1, districtsPerWH), w.nurand(1023, 1, customersPerDist)
	cLast := w.lastName()
	var err error
	if w.g.intn(1, 100) <= 60 {
		cID, err = w.customerByName(ctx, "c_balance, c_first, c_middle, c_id", 3, set, wh, d, cLast)
	} else {
		_, err = w.readRow(ctx, "SELECT c_balance, c_first, c_middle, c_last FROM customer%d WHERE c_w_id = %d AND c_d_id = %d AND c_id = %d", set, wh, d, cID)
	}
	if err != nil {
		return err
	}
	if _, err := w.read(ctx, "SELECT o_id, o_carrier_id, o_entry_d FROM orders%d WHERE o_w_id = %d AND o_d_id = %d AND o_c_id = %d ORDER BY o_id DESC",
		set, wh, d, cID); err != nil {
		return err
	}
	// ol_o_id = D_ID, as sysbench-tpcc's shifted arguments have it.
	_, err = w.read(ctx, "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line%d WHERE ol_w_id = %d AND ol_d_id = %d AND ol_o_id = %d",
		set, wh, d, d)
	return err
}

func (w *sbWorker) delivery(ctx context.Context, set, wh int) error {
	carrier := w.g.intn(1, 10)
	for d := 1; d <= districtsPerWH; d++ {
		rows, err := w.read(ctx, "SELECT no_o_id FROM new_orders%d WHERE no_d_id = %d AND no_w_id = %d ORDER BY no_o_id ASC LIMIT 1 FOR UPDATE", set, d, wh)
		if err != nil {
			return err
		}
		if len(rows) == 0 {
			continue
		}
		oID := rows[0][0]
		if err := w.write(ctx, "DELETE FROM new_orders%d WHERE no_o_id = %s AND no_d_id = %d AND no_w_id = %d", set, oID, d, wh); err != nil {
			return err
		}
		cust, err := w.readRow(ctx, "SELECT o_c_id FROM orders%d WHERE o_id = %s AND o_d_id = %d AND o_w_id = %d", set, oID, d, wh)
		if err != nil {
			return err
		}
		if err := w.write(ctx, "UPDATE orders%d SET o_carrier_id = %d WHERE o_id = %s AND o_d_id = %d AND o_w_id = %d", set, carrier, oID, d, wh); err != nil {
			return err
		}
		if err := w.write(ctx, "UPDATE order_line%d SET ol_delivery_d = NOW() WHERE ol_o_id = %s AND ol_d_id = %d AND ol_w_id = %d", set, oID, d, wh); err != nil {
			return err
		}
		sum, err := w.readRow(ctx, "SELECT SUM(ol_amount) sm FROM order_line%d WHERE ol_o_id = %s AND ol_d_id = %d AND ol_w_id = %d", set, oID, d, wh)
		if err != nil {
			return err
		}
		total := sum[0]
		if total == "" {
			total = "0"
		}
		if err := w.write(ctx, "UPDATE customer%d SET c_balance = c_balance + %s, c_delivery_cnt = c_delivery_cnt + 1 WHERE c_id = %s AND c_d_id = %d AND c_w_id = %d",
			set, total, cust[0], d, wh); err != nil {
			return err
		}
	}
	return nil
}

func (w *sbWorker) stockLevel(ctx context.Context, set, wh int) error {
	d, level := w.g.intn(1, districtsPerWH), w.g.intn(10, 20)
	row, err := w.readRow(ctx, "SELECT d_next_o_id FROM district%d WHERE d_id = %d AND d_w_id = %d", set, d, wh)
	if err != nil {
		return err
	}
	next, err := strconv.Atoi(row[0])
	if err != nil {
		return err
	}
	_, err = w.read(ctx, "SELECT COUNT(DISTINCT (s_i_id)) FROM order_line%d, stock%d WHERE ol_w_id = %d AND ol_d_id = %d AND ol_o_id < %d "+
		"AND ol_o_id >= %d AND s_w_id = %d AND s_i_id = ol_i_id AND s_quantity < %d", set, set, wh, d, next, next-20, wh, level)
	return err
}
