package payments

import (
	"context"

	"github.com/fairbench/fairbench/internal/dialect"
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
` + workload.RoutineComment + `
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

// routineCalls call it in each SQL family: one statement, one round trip, returning the
// transfer's id or 0 (a MySQL procedure's last SELECT, a PostgreSQL function's value).
var routineCalls = map[dialect.Family]string{
	dialect.MySQLFamily:    "CALL transfer_funds(?, ?, ?)",
	dialect.PostgresFamily: "SELECT transfer_funds(?, ?, CAST(? AS DECIMAL(15,2)))",
}

// routineBodies create it in each SQL family.
var routineBodies = map[dialect.Family]string{dialect.MySQLFamily: routineMySQL, dialect.PostgresFamily: routinePostgres}

// routineState says whether transfer_funds exists, and whether fairbench created it.
func routineState(ctx context.Context, c sqldb.Conn) (workload.TableState, error) {
	return workload.RoutineState(ctx, c, routineName)
}

// claimRoutine refuses a transfer_funds fairbench did not create and drops fairbench's own, which
// ClaimTables has already allowed (force).
func claimRoutine(ctx context.Context, c sqldb.Conn) error {
	if err := workload.RefuseForeignRoutines(ctx, c, []string{routineName}); err != nil {
		return err
	}
	return workload.DropOwnedRoutines(ctx, c, []string{routineName})
}

// createRoutine creates transfer_funds and marks it as fairbench's.
func createRoutine(ctx context.Context, c sqldb.Conn) error {
	return workload.CreateOwnedRoutine(ctx, c, routineName, routineBodies[dialect.Of(c).Family()])
}
