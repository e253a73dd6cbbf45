-- redisson-watchdog (Lua twin of models/strategies/redisson_watchdog.cpp): Redisson's RLock without
-- a lease time. The lock is a hash owned by this attempt, taken with a 30 s lease
-- (lockWatchdogTimeout) and renewed every 10 s by a watchdog on the holder's node while it holds;
-- tryLock waits up to a limit. Check-then-insert on a connection of its own, given back before the
-- unlock; the unlock is the owner-checked script.

description = "Redisson RLock: 30 s lease renewed every 10 s by a watchdog; tryLock wait; owner-checked unlock (Lua twin)"
source = "docs/models.md, Lock services (Redisson lockWatchdogTimeout 30 s, renewal every 10 s)"
risks = "a pause or partition longer than 30 s stops the watchdog too: a second holder gets in"

params = { watchdog_ms = 30000, wait_ms = 1000, retry_ms = 10 }
uses = { "redis" }

local FIND = "SELECT id FROM t_account WHERE open_id = ?"
local INSERT = "INSERT INTO t_account (open_id, device) VALUES (?, ?)"

function bind(req)
  local lock = locks.redisson("lock:" .. req.open_id,
                              { lease_ms = params.watchdog_ms, wait_ms = params.wait_ms, pause_ms = params.retry_ms })
  if not lock then return "lock_busy" end
  local c = db.connect()
  if #c:query(FIND, req.open_id) == 0 then
    work()
    c:exec(INSERT, req.open_id, req.device)
  end
  c:close()
  lock:release()  -- the owner-checked unlock
end
