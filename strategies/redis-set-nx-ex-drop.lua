-- redis-set-nx-ex-drop (Lua twin of models/strategies/redis_set_nx_ex_drop.cpp): the article's final
-- fix. SET lock:<openid> <value> NX PX ttl; if the lock is busy, drop the request; else
-- check-then-insert on a connection of its own, given back before the unlock, and DEL the lock (a
-- plain DEL, not compare-and-delete). The value is this attempt's own, which the strategy never
-- reads: it only lets the checkers tell holders apart.

description = "SET NX EX 3 s; busy: drop the request; else check-then-insert, DEL (Lua twin)"
source = "sources/003 section 4 (the fix adopted)"
risks = "a pause or slow insert past the TTL lets a second holder in; DEL can remove another's lock; dropped writes"

params = { ttl_ms = 3000 }
uses = { "redis" }

local FIND = "SELECT id FROM t_account WHERE open_id = ?"
local INSERT = "INSERT INTO t_account (open_id, device) VALUES (?, ?)"

function bind(req)
  local lock = locks.redis("lock:" .. req.open_id, { ttl_ms = params.ttl_ms, unlock = "del" })
  if not lock then return "dropped" end  -- another copy holds it: drop this one
  local c = db.connect()
  if #c:query(FIND, req.open_id) == 0 then
    work()
    c:exec(INSERT, req.open_id, req.device)
  end
  c:close()
  lock:release()  -- DEL
end
