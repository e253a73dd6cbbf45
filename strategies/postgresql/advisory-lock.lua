-- pg-advisory-lock: a session-level PostgreSQL advisory lock on a number made from the OpenID
-- around check-then-insert, with no unique index; pg_advisory_unlock at the end, on the same
-- connection. Runs on "database": {"engine": "postgresql"} only.

description = "pg_advisory_lock(hash(open_id)); check-then-insert; pg_advisory_unlock (PostgreSQL, no unique index)"
source = "PostgreSQL manual, Advisory Locks (session level: held until unlocked or the session ends)"
risks = "no duplicates while every path unlocks on the same connection; an early return or an error before the unlock leaves the lock on the pooled connection, and every later caller of that key waits"

-- The key: a 31-bit hash of the OpenID (the same for every attempt, on every node).
local function key_of(s)
  local h = 0
  for i = 1, #s do h = (h * 31 + s:byte(i)) % 2147483647 end
  return h
end

function bind(req)
  local k = key_of(req.open_id)
  db.query("SELECT pg_advisory_lock($1)", k)
  if #db.query("SELECT id FROM t_account WHERE open_id = $1", req.open_id) == 0 then
    work()
    db.exec("INSERT INTO t_account (open_id, device) VALUES ($1, $2)", req.open_id, req.device)
  end
  db.query("SELECT pg_advisory_unlock($1)", k)
end
