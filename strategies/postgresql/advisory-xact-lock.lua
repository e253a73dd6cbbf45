-- pg-advisory-xact-lock: BEGIN; a transaction-level PostgreSQL advisory lock on the OpenID;
-- check-then-insert; COMMIT, which releases the lock. No unique index. Runs on
-- "database": {"engine": "postgresql"} only.

description = "BEGIN; pg_advisory_xact_lock(open_id); check-then-insert; COMMIT (PostgreSQL, no unique index)"
source = "PostgreSQL manual, Advisory Locks (transaction level: released at the transaction's end)"
risks = "no duplicates: the lock ends with the transaction on every path, after the insert commits; callers of one key queue on the database, each holding a pooled connection while it waits"

function bind(req)
  db.begin()
  -- pg_advisory_xact_lock: the checkers see the hold until the COMMIT ends it.
  locks.pg_advisory(req.open_id, {xact = true})
  if #db.query("SELECT id FROM t_account WHERE open_id = $1", req.open_id) == 0 then
    work()
    db.exec("INSERT INTO t_account (open_id, device) VALUES ($1, $2)", req.open_id, req.device)
  end
  db.commit()
end
