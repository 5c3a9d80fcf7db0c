package tpcc

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/fairbench/fairbench/internal/dialect"
	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/workload"
)

// --style routines is TPC-C as HammerDB runs it: each transaction is one CALL of a server-side
// routine that begins, does the transaction's statements, and commits (or rolls back) itself, so
// a transaction is one round trip. The routines are the statements style's transactions moved
// into the server, statement for statement and row for row, on every engine: PL/pgSQL procedures
// on PostgreSQL (which may COMMIT and ROLLBACK since PostgreSQL 11, and return OUT parameters
// since 14), stored procedures in START TRANSACTION .. COMMIT on MySQL and MariaDB. Each returns
// one row. NewOrder's unused item makes the routine roll back and return order id 0, which the
// client counts as the rollback it is. Deadlocks and serialization failures reach the client as
// the engine's own error (the MySQL-family procedures roll back and RESIGNAL), and the runner
// retries the same call.
//
// The order lines of NewOrder travel as three comma-separated lists (items, supplying
// warehouses, quantities), a form both dialects split without arrays (MySQL has none). Payment
// and OrderStatus find a customer by last name with a count and then the row at offset
// (n-1)/2 by first name, the spec's middle row. Procedures, not functions, on MySQL and MariaDB
// need no DETERMINISTIC flag and no log_bin_trust_function_creators with the binary log on.

// routineNames are the five procedures, in the order of kinds.
var routineNames = []string{"tpcc_new_order", "tpcc_payment", "tpcc_order_status", "tpcc_delivery", "tpcc_stock_level"}

// distCase picks the S_DIST_xx column of district p_d_id, as the statements style's per-district
// statement does.
var distCase = func() string {
	var b strings.Builder
	b.WriteString("CASE p_d_id")
	for d := 1; d <= districtsPerWH; d++ {
		fmt.Fprintf(&b, " WHEN %d THEN s_dist_%02d", d, d)
	}
	b.WriteString(" END")
	return b.String()
}()

// callSQL are the CALL statements, one per kind. PostgreSQL's CALL names its OUT parameters with
// NULLs and returns them as a row; the MySQL family's procedures end in a SELECT.
func callSQL(d dialect.Dialect) []string {
	args := []string{"?, ?, ?, ?, ?, ?, ?, ?", "?, ?, ?, ?, ?, ?, ?, ?", "?, ?, ?, ?, ?", "?, ?", "?, ?, ?"}
	outs := map[dialect.Family][]string{
		dialect.PostgresFamily: {", NULL, NULL", ", NULL", ", NULL, NULL, NULL", ", NULL", ", NULL"},
		dialect.MySQLFamily:    make([]string, len(routineNames)),
	}[d.Family()]
	calls := make([]string, len(routineNames))
	for i, n := range routineNames {
		calls[i] = "CALL " + n + "(" + args[i] + outs[i] + ")"
	}
	return calls
}

// routineCalls are callSQL's statements, ready to run, each counted as what its routine does:
// NewOrder, Payment and Delivery write, OrderStatus and StockLevel read. A CALL's words do not
// say, and a call is the one statement the client sends for its transaction.
func routineCalls(d dialect.Dialect) [5]valueQuery {
	var calls [5]valueQuery
	for i, sql := range callSQL(d) {
		class := sqldb.Write
		if i == kindOrderStatus || i == kindStockLevel {
			class = sqldb.Read
		}
		calls[i] = valueSQL(sql).CountAs(class)
	}
	return calls
}

// routineBodies are the CREATE statements of the routines in each SQL family, in kinds' order.
var routineBodies = map[dialect.Family][]string{
	dialect.PostgresFamily: {pgNewOrder, pgPayment, pgOrderStatus, pgDelivery, pgStockLevel},
	dialect.MySQLFamily:    {myNewOrder, myPayment, myOrderStatus, myDelivery, myStockLevel},
}

// routineSQL is the CREATE statement of each routine in d's family, its templates filled.
func routineSQL(d dialect.Dialect) []string {
	sqls := slices.Clone(routineBodies[d.Family()])
	for i := range sqls {
		sqls[i] = strings.ReplaceAll(sqls[i], "{dist}", distCase)
	}
	return sqls
}

// createRoutines creates the five routines, each marked as fairbench's; Prepare has made room.
func createRoutines(ctx context.Context, c sqldb.Conn) error {
	for i, sql := range routineSQL(dialect.Of(c)) {
		if err := workload.CreateOwnedRoutine(ctx, c, routineNames[i], sql); err != nil {
			return fmt.Errorf("creating routine %s: %w", routineNames[i], err)
		}
	}
	return nil
}

// ensureRoutines is a routines run's start: the routines prepare made are used as they are, any
// missing (tables prepared by an older fairbench, a routine dropped by hand) are created, and
// one fairbench did not create stops the run before anything is called.
func ensureRoutines(ctx context.Context, c sqldb.Conn) error {
	sqls := routineSQL(dialect.Of(c))
	for i, n := range routineNames {
		switch st, err := workload.RoutineState(ctx, c, n); {
		case err != nil:
			return err
		case st == workload.Foreign:
			return workload.Refusef("a routine %s exists and was not created by fairbench: --style routines will not call or replace it; use another database", n)
		case st == workload.Absent:
			if err := workload.CreateOwnedRoutine(ctx, c, n, sqls[i]); err != nil {
				return fmt.Errorf("creating routine %s: %w", n, err)
			}
		}
	}
	return nil
}

// PostgreSQL: PL/pgSQL procedures, each ending in COMMIT (transaction control in a procedure
// CALLed outside a transaction block).
const pgNewOrder = `CREATE PROCEDURE tpcc_new_order(p_w_id integer, p_d_id integer, p_c_id integer, p_ol_cnt integer,
  p_all_local integer, p_items text, p_supply text, p_qty text, OUT out_o_id integer, OUT out_total decimal(12,2))
LANGUAGE plpgsql AS $$
DECLARE
  v_items integer[] := string_to_array(p_items, ',')::integer[];
  v_supply integer[] := string_to_array(p_supply, ',')::integer[];
  v_qty integer[] := string_to_array(p_qty, ',')::integer[];
  v_w_tax decimal(4,4); v_d_tax decimal(4,4); v_discount decimal(4,4); v_c_last varchar(16); v_c_credit char(2);
  v_price decimal(5,2); v_i_name varchar(24); v_i_data varchar(50);
  v_o_id integer; v_s_qty integer; v_s_data varchar(50); v_dist char(24); v_amount decimal(6,2); v_sum decimal(12,2) := 0;
BEGIN
  SELECT w_tax INTO v_w_tax FROM warehouse WHERE w_id = p_w_id;
  SELECT d_tax, d_next_o_id INTO v_d_tax, v_o_id FROM district WHERE d_w_id = p_w_id AND d_id = p_d_id FOR UPDATE;
  UPDATE district SET d_next_o_id = v_o_id + 1 WHERE d_w_id = p_w_id AND d_id = p_d_id;
  SELECT c_discount, c_last, c_credit INTO v_discount, v_c_last, v_c_credit FROM customer
    WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_id = p_c_id;
  INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)
    VALUES (v_o_id, p_d_id, p_w_id, p_c_id, CURRENT_TIMESTAMP, NULL, p_ol_cnt, p_all_local);
  INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (v_o_id, p_d_id, p_w_id);
  FOR i IN 1 .. p_ol_cnt LOOP
    SELECT i_price, i_name, i_data INTO v_price, v_i_name, v_i_data FROM item WHERE i_id = v_items[i];
    IF NOT FOUND THEN
      ROLLBACK;
      out_o_id := 0;
      RETURN;
    END IF;
    SELECT s_quantity, s_data, {dist} INTO v_s_qty, v_s_data, v_dist FROM stock
      WHERE s_i_id = v_items[i] AND s_w_id = v_supply[i] FOR UPDATE;
    IF v_s_qty >= v_qty[i] + 10 THEN
      v_s_qty := v_s_qty - v_qty[i];
    ELSE
      v_s_qty := v_s_qty - v_qty[i] + 91;
    END IF;
    UPDATE stock SET s_quantity = v_s_qty, s_ytd = s_ytd + v_qty[i], s_order_cnt = s_order_cnt + 1,
      s_remote_cnt = s_remote_cnt + CASE WHEN v_supply[i] <> p_w_id THEN 1 ELSE 0 END
      WHERE s_i_id = v_items[i] AND s_w_id = v_supply[i];
    v_amount := v_qty[i] * v_price;
    v_sum := v_sum + v_amount;
    INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
      VALUES (v_o_id, p_d_id, p_w_id, i, v_items[i], v_supply[i], NULL, v_qty[i], v_amount, v_dist);
  END LOOP;
  out_o_id := v_o_id;
  out_total := v_sum * (1 - v_discount) * (1 + v_w_tax + v_d_tax);
  COMMIT;
END
$$`

const pgPayment = `CREATE PROCEDURE tpcc_payment(p_w_id integer, p_d_id integer, p_c_w_id integer, p_c_d_id integer, p_c_id integer,
  p_by_name integer, p_c_last varchar, p_amount decimal(6,2), OUT out_c_id integer)
LANGUAGE plpgsql AS $$
DECLARE
  v_w record; v_d record; v_c record; v_n integer; v_data varchar(500); v_c_id integer;
BEGIN
  UPDATE warehouse SET w_ytd = w_ytd + p_amount WHERE w_id = p_w_id;
  SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip INTO v_w FROM warehouse WHERE w_id = p_w_id;
  UPDATE district SET d_ytd = d_ytd + p_amount WHERE d_w_id = p_w_id AND d_id = p_d_id;
  SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip INTO v_d FROM district WHERE d_w_id = p_w_id AND d_id = p_d_id;
  v_c_id := p_c_id;
  IF p_by_name = 1 THEN
    SELECT count(*) INTO v_n FROM customer WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_last = p_c_last;
    IF v_n = 0 THEN
      RAISE EXCEPTION 'no customer named % in district %/%', p_c_last, p_c_w_id, p_c_d_id;
    END IF;
    SELECT c_id INTO v_c_id FROM customer WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_last = p_c_last
      ORDER BY c_first OFFSET (v_n - 1) / 2 LIMIT 1;
  END IF;
  SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_since,
      c_credit, c_credit_lim, c_discount, c_balance INTO v_c
    FROM customer WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_id = v_c_id FOR UPDATE;
  IF v_c.c_credit = 'BC' THEN
    SELECT c_data INTO v_data FROM customer WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_id = v_c_id FOR UPDATE;
    UPDATE customer SET c_balance = c_balance - p_amount, c_ytd_payment = c_ytd_payment + p_amount, c_payment_cnt = c_payment_cnt + 1,
        c_data = substring(concat(v_c_id, ' ', p_c_d_id, ' ', p_c_w_id, ' ', p_d_id, ' ', p_w_id, ' ', p_amount, ' | ', v_data), 1, 500)
      WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_id = v_c_id;
  ELSE
    UPDATE customer SET c_balance = c_balance - p_amount, c_ytd_payment = c_ytd_payment + p_amount, c_payment_cnt = c_payment_cnt + 1
      WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_id = v_c_id;
  END IF;
  INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
    VALUES (v_c_id, p_c_d_id, p_c_w_id, p_d_id, p_w_id, CURRENT_TIMESTAMP, p_amount, concat(v_w.w_name, '    ', v_d.d_name));
  out_c_id := v_c_id;
  COMMIT;
END
$$`

const pgOrderStatus = `CREATE PROCEDURE tpcc_order_status(p_w_id integer, p_d_id integer, p_c_id integer, p_by_name integer, p_c_last varchar,
  OUT out_c_id integer, OUT out_o_id integer, OUT out_lines integer)
LANGUAGE plpgsql AS $$
DECLARE
  v_c record; v_o record; v_ol record; v_n integer; v_c_id integer; v_lines integer := 0;
BEGIN
  v_c_id := p_c_id;
  IF p_by_name = 1 THEN
    SELECT count(*) INTO v_n FROM customer WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_last = p_c_last;
    IF v_n = 0 THEN
      RAISE EXCEPTION 'no customer named % in district %/%', p_c_last, p_w_id, p_d_id;
    END IF;
    SELECT c_id, c_balance, c_first, c_middle INTO v_c FROM customer
      WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_last = p_c_last ORDER BY c_first OFFSET (v_n - 1) / 2 LIMIT 1;
    v_c_id := v_c.c_id;
  ELSE
    SELECT c_balance, c_first, c_middle, c_last INTO v_c FROM customer WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_id = p_c_id;
  END IF;
  SELECT o_id, o_carrier_id, o_entry_d INTO v_o FROM orders
    WHERE o_w_id = p_w_id AND o_d_id = p_d_id AND o_c_id = v_c_id ORDER BY o_id DESC LIMIT 1;
  FOR v_ol IN SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line
      WHERE ol_w_id = p_w_id AND ol_d_id = p_d_id AND ol_o_id = v_o.o_id LOOP
    v_lines := v_lines + 1;
  END LOOP;
  out_c_id := v_c_id;
  out_o_id := v_o.o_id;
  out_lines := v_lines;
  COMMIT;
END
$$`

const pgDelivery = `CREATE PROCEDURE tpcc_delivery(p_w_id integer, p_carrier integer, OUT out_delivered integer)
LANGUAGE plpgsql AS $$
DECLARE
  v_o integer; v_c integer; v_rows integer; v_sum decimal(12,2); v_delivered integer := 0;
BEGIN
  FOR d IN 1 .. 10 LOOP
    SELECT no_o_id INTO v_o FROM new_order WHERE no_w_id = p_w_id AND no_d_id = d ORDER BY no_o_id LIMIT 1 FOR UPDATE;
    CONTINUE WHEN NOT FOUND;
    DELETE FROM new_order WHERE no_w_id = p_w_id AND no_d_id = d AND no_o_id = v_o;
    GET DIAGNOSTICS v_rows = ROW_COUNT;
    CONTINUE WHEN v_rows = 0;
    SELECT o_c_id INTO v_c FROM orders WHERE o_w_id = p_w_id AND o_d_id = d AND o_id = v_o FOR UPDATE;
    IF NOT FOUND THEN
      RAISE EXCEPTION 'order %/%/% is in new_order but not in orders', p_w_id, d, v_o;
    END IF;
    UPDATE orders SET o_carrier_id = p_carrier WHERE o_w_id = p_w_id AND o_d_id = d AND o_id = v_o;
    UPDATE order_line SET ol_delivery_d = CURRENT_TIMESTAMP WHERE ol_w_id = p_w_id AND ol_d_id = d AND ol_o_id = v_o;
    SELECT coalesce(sum(ol_amount), 0) INTO v_sum FROM order_line WHERE ol_w_id = p_w_id AND ol_d_id = d AND ol_o_id = v_o;
    UPDATE customer SET c_balance = c_balance + v_sum, c_delivery_cnt = c_delivery_cnt + 1
      WHERE c_w_id = p_w_id AND c_d_id = d AND c_id = v_c;
    v_delivered := v_delivered + 1;
  END LOOP;
  out_delivered := v_delivered;
  COMMIT;
END
$$`

const pgStockLevel = `CREATE PROCEDURE tpcc_stock_level(p_w_id integer, p_d_id integer, p_threshold integer, OUT out_low integer)
LANGUAGE plpgsql AS $$
DECLARE
  v_next integer; v_low integer;
BEGIN
  SELECT d_next_o_id INTO v_next FROM district WHERE d_w_id = p_w_id AND d_id = p_d_id;
  SELECT count(DISTINCT s_i_id) INTO v_low FROM order_line, stock WHERE ol_w_id = p_w_id AND ol_d_id = p_d_id
    AND ol_o_id < v_next AND ol_o_id >= v_next - 20 AND s_w_id = p_w_id AND s_i_id = ol_i_id AND s_quantity < p_threshold;
  out_low := v_low;
  COMMIT;
END
$$`

// MySQL and MariaDB: stored procedures, each its own START TRANSACTION .. COMMIT; any error rolls
// back and reaches the client as it was (RESIGNAL). c_last parameters are compared as the
// column is, byte by byte (utf8mb4_bin): a parameter in the database's default collation would
// make MySQL refuse the comparison ("illegal mix of collations").
const myNewOrder = `CREATE PROCEDURE tpcc_new_order(IN p_w_id INT, IN p_d_id INT, IN p_c_id INT, IN p_ol_cnt INT,
  IN p_all_local INT, IN p_items VARCHAR(255), IN p_supply VARCHAR(255), IN p_qty VARCHAR(255))
` + workload.RoutineComment + `
proc: BEGIN
  DECLARE v_w_tax, v_d_tax, v_discount DECIMAL(4,4);
  DECLARE v_c_last VARCHAR(16);
  DECLARE v_c_credit CHAR(2);
  DECLARE v_price DECIMAL(5,2);
  DECLARE v_i_name VARCHAR(24);
  DECLARE v_i_data, v_s_data VARCHAR(50);
  DECLARE v_o_id, v_i, v_item, v_supply, v_qty, v_s_qty INT;
  DECLARE v_dist CHAR(24);
  DECLARE v_amount DECIMAL(6,2);
  DECLARE v_sum DECIMAL(12,2) DEFAULT 0;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
  START TRANSACTION;
  SELECT w_tax INTO v_w_tax FROM warehouse WHERE w_id = p_w_id;
  SELECT d_tax, d_next_o_id INTO v_d_tax, v_o_id FROM district WHERE d_w_id = p_w_id AND d_id = p_d_id FOR UPDATE;
  UPDATE district SET d_next_o_id = v_o_id + 1 WHERE d_w_id = p_w_id AND d_id = p_d_id;
  SELECT c_discount, c_last, c_credit INTO v_discount, v_c_last, v_c_credit FROM customer
    WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_id = p_c_id;
  INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)
    VALUES (v_o_id, p_d_id, p_w_id, p_c_id, CURRENT_TIMESTAMP, NULL, p_ol_cnt, p_all_local);
  INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (v_o_id, p_d_id, p_w_id);
  SET v_i = 1;
  WHILE v_i <= p_ol_cnt DO
    SET v_item = CAST(SUBSTRING_INDEX(SUBSTRING_INDEX(p_items, ',', v_i), ',', -1) AS SIGNED);
    SET v_supply = CAST(SUBSTRING_INDEX(SUBSTRING_INDEX(p_supply, ',', v_i), ',', -1) AS SIGNED);
    SET v_qty = CAST(SUBSTRING_INDEX(SUBSTRING_INDEX(p_qty, ',', v_i), ',', -1) AS SIGNED);
    SET v_price = NULL;
    SELECT i_price, i_name, i_data INTO v_price, v_i_name, v_i_data FROM item WHERE i_id = v_item;
    IF v_price IS NULL THEN
      ROLLBACK;
      SELECT 0, NULL;
      LEAVE proc;
    END IF;
    SELECT s_quantity, s_data, {dist} INTO v_s_qty, v_s_data, v_dist FROM stock
      WHERE s_i_id = v_item AND s_w_id = v_supply FOR UPDATE;
    IF v_s_qty >= v_qty + 10 THEN
      SET v_s_qty = v_s_qty - v_qty;
    ELSE
      SET v_s_qty = v_s_qty - v_qty + 91;
    END IF;
    UPDATE stock SET s_quantity = v_s_qty, s_ytd = s_ytd + v_qty, s_order_cnt = s_order_cnt + 1,
      s_remote_cnt = s_remote_cnt + CASE WHEN v_supply <> p_w_id THEN 1 ELSE 0 END
      WHERE s_i_id = v_item AND s_w_id = v_supply;
    SET v_amount = v_qty * v_price;
    SET v_sum = v_sum + v_amount;
    INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
      VALUES (v_o_id, p_d_id, p_w_id, v_i, v_item, v_supply, NULL, v_qty, v_amount, v_dist);
    SET v_i = v_i + 1;
  END WHILE;
  COMMIT;
  SELECT v_o_id, CAST(v_sum * (1 - v_discount) * (1 + v_w_tax + v_d_tax) AS DECIMAL(12,2));
END`

const myPayment = `CREATE PROCEDURE tpcc_payment(IN p_w_id INT, IN p_d_id INT, IN p_c_w_id INT, IN p_c_d_id INT, IN p_c_id INT,
  IN p_by_name INT, IN p_c_last VARCHAR(16) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin, IN p_amount DECIMAL(6,2))
` + workload.RoutineComment + `
BEGIN
  DECLARE v_w_name, v_d_name VARCHAR(10);
  DECLARE v_street_1, v_street_2, v_city VARCHAR(20);
  DECLARE v_state CHAR(2);
  DECLARE v_zip CHAR(9);
  DECLARE v_c_id, v_n INT;
  DECLARE v_c_first, v_c_last VARCHAR(16);
  DECLARE v_c_middle, v_c_credit CHAR(2);
  DECLARE v_c_street_1, v_c_street_2, v_c_city VARCHAR(20);
  DECLARE v_c_state CHAR(2);
  DECLARE v_c_zip CHAR(9);
  DECLARE v_c_phone CHAR(16);
  DECLARE v_c_since DATETIME;
  DECLARE v_c_credit_lim, v_c_balance DECIMAL(12,2);
  DECLARE v_c_discount DECIMAL(4,4);
  DECLARE v_data VARCHAR(500);
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
  START TRANSACTION;
  UPDATE warehouse SET w_ytd = w_ytd + p_amount WHERE w_id = p_w_id;
  SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip INTO v_w_name, v_street_1, v_street_2, v_city, v_state, v_zip
    FROM warehouse WHERE w_id = p_w_id;
  UPDATE district SET d_ytd = d_ytd + p_amount WHERE d_w_id = p_w_id AND d_id = p_d_id;
  SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip INTO v_d_name, v_street_1, v_street_2, v_city, v_state, v_zip
    FROM district WHERE d_w_id = p_w_id AND d_id = p_d_id;
  SET v_c_id = p_c_id;
  IF p_by_name = 1 THEN
    SELECT COUNT(*) INTO v_n FROM customer WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_last = p_c_last;
    IF v_n = 0 THEN
      SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'no customer of that last name in the district';
    END IF;
    SET v_n = (v_n - 1) DIV 2;
    SELECT c_id INTO v_c_id FROM customer WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_last = p_c_last
      ORDER BY c_first LIMIT v_n, 1;
  END IF;
  SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_since,
      c_credit, c_credit_lim, c_discount, c_balance
    INTO v_c_first, v_c_middle, v_c_last, v_c_street_1, v_c_street_2, v_c_city, v_c_state, v_c_zip, v_c_phone, v_c_since,
      v_c_credit, v_c_credit_lim, v_c_discount, v_c_balance
    FROM customer WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_id = v_c_id FOR UPDATE;
  IF v_c_credit = 'BC' THEN
    SELECT c_data INTO v_data FROM customer WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_id = v_c_id FOR UPDATE;
    UPDATE customer SET c_balance = c_balance - p_amount, c_ytd_payment = c_ytd_payment + p_amount, c_payment_cnt = c_payment_cnt + 1,
        c_data = SUBSTRING(CONCAT(v_c_id, ' ', p_c_d_id, ' ', p_c_w_id, ' ', p_d_id, ' ', p_w_id, ' ', p_amount, ' | ', v_data), 1, 500)
      WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_id = v_c_id;
  ELSE
    UPDATE customer SET c_balance = c_balance - p_amount, c_ytd_payment = c_ytd_payment + p_amount, c_payment_cnt = c_payment_cnt + 1
      WHERE c_w_id = p_c_w_id AND c_d_id = p_c_d_id AND c_id = v_c_id;
  END IF;
  INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
    VALUES (v_c_id, p_c_d_id, p_c_w_id, p_d_id, p_w_id, CURRENT_TIMESTAMP, p_amount, CONCAT(v_w_name, '    ', v_d_name));
  COMMIT;
  SELECT v_c_id;
END`

const myOrderStatus = `CREATE PROCEDURE tpcc_order_status(IN p_w_id INT, IN p_d_id INT, IN p_c_id INT, IN p_by_name INT,
  IN p_c_last VARCHAR(16) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin)
` + workload.RoutineComment + `
BEGIN
  DECLARE v_c_id, v_n, v_o_id, v_carrier, v_lines, v_done INT DEFAULT 0;
  DECLARE v_c_balance DECIMAL(12,2);
  DECLARE v_c_first, v_c_last VARCHAR(16);
  DECLARE v_c_middle CHAR(2);
  DECLARE v_entry, v_delivery DATETIME;
  DECLARE v_ol_i_id, v_ol_supply_w_id, v_ol_quantity INT;
  DECLARE v_ol_amount DECIMAL(6,2);
  DECLARE c_lines CURSOR FOR SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line
    WHERE ol_w_id = p_w_id AND ol_d_id = p_d_id AND ol_o_id = v_o_id;
  DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_done = 1;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
  START TRANSACTION;
  SET v_c_id = p_c_id;
  IF p_by_name = 1 THEN
    SELECT COUNT(*) INTO v_n FROM customer WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_last = p_c_last;
    IF v_n = 0 THEN
      SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'no customer of that last name in the district';
    END IF;
    SET v_n = (v_n - 1) DIV 2;
    SELECT c_id, c_balance, c_first, c_middle INTO v_c_id, v_c_balance, v_c_first, v_c_middle FROM customer
      WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_last = p_c_last ORDER BY c_first LIMIT v_n, 1;
  ELSE
    SELECT c_balance, c_first, c_middle, c_last INTO v_c_balance, v_c_first, v_c_middle, v_c_last FROM customer
      WHERE c_w_id = p_w_id AND c_d_id = p_d_id AND c_id = p_c_id;
  END IF;
  SELECT o_id, o_carrier_id, o_entry_d INTO v_o_id, v_carrier, v_entry FROM orders
    WHERE o_w_id = p_w_id AND o_d_id = p_d_id AND o_c_id = v_c_id ORDER BY o_id DESC LIMIT 1;
  SET v_done = 0;
  OPEN c_lines;
  read_lines: LOOP
    FETCH c_lines INTO v_ol_i_id, v_ol_supply_w_id, v_ol_quantity, v_ol_amount, v_delivery;
    IF v_done = 1 THEN
      LEAVE read_lines;
    END IF;
    SET v_lines = v_lines + 1;
  END LOOP;
  CLOSE c_lines;
  COMMIT;
  SELECT v_c_id, v_o_id, v_lines;
END`

const myDelivery = `CREATE PROCEDURE tpcc_delivery(IN p_w_id INT, IN p_carrier INT)
` + workload.RoutineComment + `
BEGIN
  DECLARE v_d, v_o, v_c, v_delivered INT DEFAULT 0;
  DECLARE v_sum DECIMAL(12,2);
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
  START TRANSACTION;
  SET v_d = 1;
  WHILE v_d <= 10 DO
    SET v_o = NULL;
    SELECT no_o_id INTO v_o FROM new_order WHERE no_w_id = p_w_id AND no_d_id = v_d ORDER BY no_o_id LIMIT 1 FOR UPDATE;
    IF v_o IS NOT NULL THEN
      DELETE FROM new_order WHERE no_w_id = p_w_id AND no_d_id = v_d AND no_o_id = v_o;
      IF ROW_COUNT() > 0 THEN
        SET v_c = NULL;
        SELECT o_c_id INTO v_c FROM orders WHERE o_w_id = p_w_id AND o_d_id = v_d AND o_id = v_o FOR UPDATE;
        IF v_c IS NULL THEN
          SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'an order is in new_order but not in orders';
        END IF;
        UPDATE orders SET o_carrier_id = p_carrier WHERE o_w_id = p_w_id AND o_d_id = v_d AND o_id = v_o;
        UPDATE order_line SET ol_delivery_d = CURRENT_TIMESTAMP WHERE ol_w_id = p_w_id AND ol_d_id = v_d AND ol_o_id = v_o;
        SELECT COALESCE(SUM(ol_amount), 0) INTO v_sum FROM order_line WHERE ol_w_id = p_w_id AND ol_d_id = v_d AND ol_o_id = v_o;
        UPDATE customer SET c_balance = c_balance + v_sum, c_delivery_cnt = c_delivery_cnt + 1
          WHERE c_w_id = p_w_id AND c_d_id = v_d AND c_id = v_c;
        SET v_delivered = v_delivered + 1;
      END IF;
    END IF;
    SET v_d = v_d + 1;
  END WHILE;
  COMMIT;
  SELECT v_delivered;
END`

const myStockLevel = `CREATE PROCEDURE tpcc_stock_level(IN p_w_id INT, IN p_d_id INT, IN p_threshold INT)
` + workload.RoutineComment + `
BEGIN
  DECLARE v_next, v_low INT;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
  START TRANSACTION;
  SELECT d_next_o_id INTO v_next FROM district WHERE d_w_id = p_w_id AND d_id = p_d_id;
  SELECT COUNT(DISTINCT s_i_id) INTO v_low FROM order_line, stock WHERE ol_w_id = p_w_id AND ol_d_id = p_d_id
    AND ol_o_id < v_next AND ol_o_id >= v_next - 20 AND s_w_id = p_w_id AND s_i_id = ol_i_id AND s_quantity < p_threshold;
  COMMIT;
  SELECT v_low;
END`
