-- zookeeper-recipe (Lua twin): Curator's InterProcessMutex (ephemeral sequential node, watch the
-- next lower) at /locks/<openid> around check-then-insert. A port of
-- models/strategies/zookeeper_recipe.cpp (ZookeeperLock, next_lower, not fenced) that gives the
-- same results on the same seeds: Strategy::check_then_insert on a connection of its own given
-- back before the unlock, the unlock on every way out of bind (the C++ LockGuard's `finally`).

description = "ZooKeeper lock recipe (ephemeral sequential node, watch the next lower) around check-then-insert (Lua twin)"
source = "DOMAIN.md, Lock services (ZooKeeper/Curator recipe; ZOOKEEPER-1262 protected nodes)"
risks = "a pause longer than the session timeout deletes the lock node: a second holder gets in while the first, paused, has not yet heard"

params = { wait_ms = 10000 }
uses = { "zookeeper" }

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
  local lock = locks.zookeeper("/locks/" .. req.open_id, { wait_ms = params.wait_ms, herd = false })
  if not lock then return "lock_busy" end
  local ok, err = check_then_insert(req)
  lock:release()  -- in `finally`: a failure here replaces the body's error
  if not ok then error(err, 0) end
end
