package payments

import (
	"context"

	"github.com/fairbench/fairbench/internal/sqldb"
	"github.com/fairbench/fairbench/internal/workload"
)

// routineName is the server-side transfer of the published payments study ("Reserva"): one call
// updates both balances and records the transfer.
const routineName = "transfer_funds"

// The routine does the same statements on every engine: both accounts locked in id order (so two
// opposite transfers cannot deadlock), a decline without writes when the sender's balance does not
// cover the amount (it returns 0), else the debit, the credit and the transfer row, whose id it
// returns so that the client can delete that transfer later. PostgreSQL's is a PL/pgSQL function,
// run in the calling statement's transaction; MySQL's and MariaDB's a stored procedure with its
// own START TRANSACTION .. COMMIT, as the study's were.
const routinePostgres = `CREATE FUNCTION transfer_funds(p_from integer, p_to integer, p_amount decimal(15,2)) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
  v_lo decimal(15,2);
  v_hi decimal(15,2);
  v_id bigint;
BEGIN
  SELECT balance INTO v_lo FROM accounts WHERE id = LEAST(p_from, p_to) FOR UPDATE;
  SELECT balance INTO v_hi FROM accounts WHERE id = GREATEST(p_from, p_to) FOR UPDATE;
  IF (CASE WHEN p_from < p_to THEN v_lo ELSE v_hi END) < p_amount THEN
    RETURN 0;
  END IF;
  UPDATE accounts SET balance = balance - p_amount WHERE id = p_from;
  UPDATE accounts SET balance = balance + p_amount WHERE id = p_to;
  INSERT INTO transfers (from_account, to_account, amount, created_at) VALUES (p_from, p_to, p_amount, CURRENT_TIMESTAMP)
    RETURNING id INTO v_id;
  RETURN v_id;
END
$$`

const routineMySQL = `CREATE PROCEDURE transfer_funds(IN p_from integer, IN p_to integer, IN p_amount decimal(15,2))
COMMENT '` + workload.Marker + `'
BEGIN
  DECLARE v_lo decimal(15,2);
  DECLARE v_hi decimal(15,2);
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
  START TRANSACTION;
  SELECT balance INTO v_lo FROM accounts WHERE id = LEAST(p_from, p_to) FOR UPDATE;
  SELECT balance INTO v_hi FROM accounts WHERE id = GREATEST(p_from, p_to) FOR UPDATE;
  IF (CASE WHEN p_from < p_to THEN v_lo ELSE v_hi END) < p_amount THEN
    ROLLBACK;
    SELECT 0;
  ELSE
    UPDATE accounts SET balance = balance - p_amount WHERE id = p_from;
    UPDATE accounts SET balance = balance + p_amount WHERE id = p_to;
    INSERT INTO transfers (from_account, to_account, amount, created_at) VALUES (p_from, p_to, p_amount, CURRENT_TIMESTAMP);
    COMMIT;
    SELECT LAST_INSERT_ID();
  END IF;
END`

// routineCall calls it: one statement, one round trip, returning the transfer's id or 0.
func routineCall(kind sqldb.Kind) workload.ValueQuery {
	if kind.MySQLFamily() {
		return workload.NewValueQuery("CALL transfer_funds(?, ?, ?)")
	}
	return workload.NewValueQuery("SELECT transfer_funds(?, ?, CAST(? AS DECIMAL(15,2)))")
}

// routineState says whether transfer_funds exists, and whether fairbench created it (its comment
// is workload.Marker), as workload.StateOf does for tables.
func routineState(ctx context.Context, c sqldb.Conn) (workload.TableState, error) {
	q := "SELECT coalesce(obj_description(p.oid, 'pg_proc'), '') FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace " +
		"WHERE n.nspname = current_schema() AND p.proname = ?"
	if c.Kind().MySQLFamily() {
		q = "SELECT routine_comment FROM information_schema.routines WHERE routine_schema = DATABASE() AND routine_name = ?"
	}
	rows, err := c.Query(ctx, q, routineName)
	switch {
	case err != nil:
		return workload.Absent, err
	case len(rows) == 0:
		return workload.Absent, nil
	case len(rows) == 1 && rows[0][0] == workload.Marker:
		return workload.Ours, nil
	}
	return workload.Foreign, nil
}

// claimRoutine refuses a transfer_funds fairbench did not create and drops fairbench's own, which
// ClaimTables has already allowed (force).
func claimRoutine(ctx context.Context, c sqldb.Conn) error {
	st, err := routineState(ctx, c)
	if err != nil {
		return err
	}
	switch st {
	case workload.Foreign:
		return workload.Refusef("a routine %s exists and was not created by fairbench: it will not be touched; use another database or drop it yourself", routineName)
	case workload.Ours:
		return dropRoutine(ctx, c)
	}
	return nil
}

func dropRoutine(ctx context.Context, c sqldb.Conn) error {
	if c.Kind().MySQLFamily() {
		return c.Exec(ctx, "DROP PROCEDURE "+routineName)
	}
	return c.Exec(ctx, "DROP FUNCTION "+routineName+"(integer, integer, decimal)")
}

// createRoutine creates transfer_funds and marks it as fairbench's.
func createRoutine(ctx context.Context, c sqldb.Conn) error {
	if c.Kind().MySQLFamily() {
		return c.Exec(ctx, routineMySQL)
	}
	if err := c.Exec(ctx, routinePostgres); err != nil {
		return err
	}
	return c.Exec(ctx, "COMMENT ON FUNCTION "+routineName+"(integer, integer, decimal) IS '"+workload.Marker+"'")
}
