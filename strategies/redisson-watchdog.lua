-- redisson-watchdog (Lua twin): Redisson's RLock without a lease time. The lock is a hash owned by
-- this attempt, taken with a 30 s lease (lockWatchdogTimeout) and renewed every 10 s by a watchdog
-- on the holder's node while it holds; tryLock waits up to a limit. Unlock is the owner-checked
-- script. A port of models/strategies/redisson_watchdog.cpp that gives the same results on the
-- same seeds: Strategy::check_then_insert on a connection of its own given back before the unlock,
-- the unlock on every way out of bind (the C++ LockGuard's `finally`).

description = "Redisson RLock: 30 s lease renewed every 10 s by a watchdog; tryLock wait; owner-checked unlock (Lua twin)"
source = "DOMAIN.md, Lock services (Redisson lockWatchdogTimeout 30 s, renewal every 10 s)"
risks = "a pause or partition longer than 30 s stops the watchdog too: a second holder gets in"

params = { watchdog_ms = 30000, wait_ms = 1000, retry_ms = 10 }
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
  local lock = locks.redisson("lock:" .. req.open_id,
                              { lease_ms = params.watchdog_ms, wait_ms = params.wait_ms, pause_ms = params.retry_ms })
  if not lock then return "lock_busy" end
  local ok, err = check_then_insert(req)
  lock:release()  -- the owner-checked unlock, in `finally`: a failure here replaces the body's error
  if not ok then error(err, 0) end
end
