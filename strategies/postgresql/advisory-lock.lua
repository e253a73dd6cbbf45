-- pg-advisory-lock: a session-level PostgreSQL advisory lock on the OpenID around
-- check-then-insert, with no unique index; pg_advisory_unlock at the end, on the same
-- connection. Runs on "database": {"engine": "postgresql"} only.

description = "pg_advisory_lock(open_id); check-then-insert; pg_advisory_unlock (PostgreSQL, no unique index)"
source = "PostgreSQL manual, Advisory Locks (session level: held until unlocked or the session ends)"
risks = "no duplicates while every path unlocks on the same connection (the handle does, as a finally block would); code that returns early without the unlock leaves the lock on the pooled connection, and every later caller of that key waits (scenario advisory-lock-left-held)"

function bind(req)
  -- On the default connection; the checkers see the hold until the unlock.
  local lock = locks.pg_advisory(req.open_id)
  if #db.query("SELECT id FROM t_account WHERE open_id = $1", req.open_id) == 0 then
    work()
    db.exec("INSERT INTO t_account (open_id, device) VALUES ($1, $2)", req.open_id, req.device)
  end
  lock:release()
end
