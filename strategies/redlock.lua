-- redlock (Lua twin of models/strategies/redlock.cpp): the Redlock algorithm over every Redis
-- instance of the world (five by default in the scenarios that use it), as redlock-rb runs it; no
-- fencing token. The holder takes the validity it was told as its deadline and does not check it
-- again (as the articles' code). Check-then-insert on a connection of its own, given back before
-- the unlock on every master.
-- The world's five Redis instances come from locks.redlock in this text (no `uses` needed).

description = "Redlock over N Redis masters: quorum, validity = TTL - elapsed - drift, unlock all (Lua twin)"
source = "docs/models.md, Lock services (Redlock, redlock-rb parameters)"
risks = "a clock step or a restart without fsync on one master lets a second quorum form; pauses after the validity check"

params = { ttl_ms = 10000, node_timeout_ms = 50, retry_count = 3 }

local FIND = "SELECT id FROM t_account WHERE open_id = ?"
local INSERT = "INSERT INTO t_account (open_id, device) VALUES (?, ?)"

function bind(req)
  local lock = locks.redlock("lock:" .. req.open_id,
                             { ttl_ms = params.ttl_ms, node_timeout_ms = params.node_timeout_ms,
                               retry_count = params.retry_count })
  if not lock then return "lock_busy" end
  local c = db.connect()
  if #c:query(FIND, req.open_id) == 0 then
    work()
    c:exec(INSERT, req.open_id, req.device)
  end
  c:close()
  lock:release()  -- on every master
end
