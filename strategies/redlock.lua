-- redlock (Lua twin): the Redlock algorithm over every Redis instance of the world (five by default
-- in the scenarios that use it), as redlock-rb runs it; no fencing token. The holder takes the
-- validity it was told as its deadline and does not check it again (as the articles' code).
-- A port of models/strategies/redlock.cpp that gives the same results on the same seeds:
-- Strategy::check_then_insert on a connection of its own given back before the unlock, the unlock
-- (on every master) on every way out of bind (the C++ LockGuard's `finally`).
-- The world's five Redis instances come from locks.redlock in this text (no `uses` needed).

description = "Redlock over N Redis masters: quorum, validity = TTL - elapsed - drift, unlock all (Lua twin)"
source = "DOMAIN.md, Lock services (Redlock, redlock-rb parameters)"
risks = "a clock step or a restart without fsync on one master lets a second quorum form; pauses after the validity check"

params = { ttl_ms = 10000, node_timeout_ms = 50, retry_count = 3 }

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
  local lock = locks.redlock("lock:" .. req.open_id,
                             { ttl_ms = params.ttl_ms, node_timeout_ms = params.node_timeout_ms,
                               retry_count = params.retry_count })
  if not lock then return "lock_busy" end
  local ok, err = check_then_insert(req)
  lock:release()  -- on every master, in `finally`: a failure here replaces the body's error
  if not ok then error(err, 0) end
end
