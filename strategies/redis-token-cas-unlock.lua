-- redis-token-cas-unlock (Lua twin of models/strategies/redis_token_cas_unlock.cpp, RedisTokenLock
-- without duplicate_is_done): SET lock NX PX with a unique value, retried until an acquire timeout;
-- check-then-insert on a connection of its own, given back before the unlock; unlock with the
-- compare-and-delete script.

description = "SET NX PX with a unique value, retry until a timeout; compare-and-delete unlock (Lua twin)"
source = "sources/004 (Redis lock with unique id, acquire timeout, Lua unlock)"
risks = "no wrong unlocks; a pause past the TTL still lets a second holder in"

params = { ttl_ms = 10000, acquire_timeout_ms = 1000, retry_ms = 10 }
uses = { "redis" }

local FIND = "SELECT id FROM t_account WHERE open_id = ?"
local INSERT = "INSERT INTO t_account (open_id, device) VALUES (?, ?)"

function bind(req)
  local lock = locks.redis("lock:" .. req.open_id,
                           { ttl_ms = params.ttl_ms, wait_ms = params.acquire_timeout_ms, pause_ms = params.retry_ms })
  if not lock then return "lock_busy" end
  local c = db.connect()
  if #c:query(FIND, req.open_id) == 0 then
    work()
    c:exec(INSERT, req.open_id, req.device)
  end
  c:close()
  lock:release()  -- compare-and-delete
end
