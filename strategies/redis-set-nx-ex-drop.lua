-- redis-set-nx-ex-drop (Lua twin): the article's final fix. SET lock:<openid> <value> NX PX ttl; if
-- the lock is busy, drop the request; else check-then-insert and DEL the lock. (The value is this
-- attempt's own, which the strategy never reads: it only lets the checkers tell holders apart.)
-- A port of models/strategies/redis_set_nx_ex_drop.cpp that gives the same results on the same
-- seeds: one SET attempt, Strategy::check_then_insert on a connection of its own given back before
-- the unlock, and the unlock a plain DEL on every way out of bind (the C++ LockGuard's `finally`),
-- never the runtime's compare-and-delete.

description = "SET NX EX 3 s; busy: drop the request; else check-then-insert, DEL (Lua twin)"
source = "sources/003 section 4 (the fix adopted)"
risks = "a pause or slow insert past the TTL lets a second holder in; DEL can remove another's lock; dropped writes"

params = { ttl_ms = 3000 }
uses = { "redis" }

local FIND = "SELECT id FROM t_account WHERE open_id = ?"
local INSERT = "INSERT INTO t_account (open_id, device) VALUES (?, ?)"

-- Strategy::check_then_insert(r, w, lock): SELECT by OpenID, the handler's work, INSERT if absent,
-- on a connection taken from the pool now and given back before returning, also when a statement
-- raises. The INSERT is a critical-section step of the held lock (the runtime records it).
-- Returns pcall's results: ok, and the error when not.
local function check_then_insert(req)
  local c = db.connect()
  local ok, err = pcall(function()
    if #c:query(FIND, req.open_id) == 0 then
      work()
      c:exec(INSERT, req.open_id, req.device)
    end
  end)
  c:close()
  return ok, err
end

function bind(req)
  local lock = locks.redis("lock:" .. req.open_id, { ttl_ms = params.ttl_ms })
  if not lock then return "dropped" end  -- another copy holds it: drop this one
  local ok, err = check_then_insert(req)
  lock:release_with_del()  -- DEL, in `finally`: a failure here replaces the body's error
  if not ok then error(err, 0) end
end
