-- redis-token-cas-unlock (Lua twin): SET lock NX PX with a unique value, retrying until an acquire
-- timeout; check-then-insert; unlock with the compare-and-delete script. A port of
-- models/strategies/redis_token_cas_unlock.cpp (RedisTokenLock without duplicate_is_done) that
-- gives the same results on the same seeds: Strategy::check_then_insert on a connection of its
-- own given back before the unlock, the unlock on every way out of bind (the C++ LockGuard's
-- `finally`), a database error re-raised after it.

description = "SET NX PX with a unique value, retry until a timeout; compare-and-delete unlock (Lua twin)"
source = "sources/004 (Redis lock with unique id, acquire timeout, Lua unlock)"
risks = "no wrong unlocks; a pause past the TTL still lets a second holder in"

params = { ttl_ms = 10000, acquire_timeout_ms = 1000, retry_ms = 10 }
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
  -- SET NX PX with our own value, retried until the acquire timeout; the compare-and-delete unlock.
  local lock = locks.redis("lock:" .. req.open_id,
                           { ttl_ms = params.ttl_ms, wait_ms = params.acquire_timeout_ms, pause_ms = params.retry_ms })
  if not lock then return "lock_busy" end
  local ok, err = check_then_insert(req)
  lock:release()  -- compare-and-delete, in `finally`: a failure here replaces the body's error
  if not ok then error(err, 0) end
end
