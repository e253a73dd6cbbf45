-- zookeeper-recipe (Lua twin of models/strategies/zookeeper_recipe.cpp: ZookeeperLock, next_lower,
-- not fenced): Curator's InterProcessMutex (ephemeral sequential node, watch the next lower) at
-- /locks/<openid> around check-then-insert on a connection of its own, given back before the unlock.

description = "ZooKeeper lock recipe (ephemeral sequential node, watch the next lower) around check-then-insert (Lua twin)"
source = "docs/models.md, Lock services (ZooKeeper/Curator recipe; ZOOKEEPER-1262 protected nodes)"
risks = "a pause longer than the session timeout deletes the lock node: a second holder gets in while the first, paused, has not yet heard"

params = { wait_ms = 10000 }
uses = { "zookeeper" }

local FIND = "SELECT id FROM t_account WHERE open_id = ?"
local INSERT = "INSERT INTO t_account (open_id, device) VALUES (?, ?)"

function bind(req)
  local lock = locks.zookeeper("/locks/" .. req.open_id, { wait_ms = params.wait_ms, herd = false })
  if not lock then return "lock_busy" end
  local c = db.connect()
  if #c:query(FIND, req.open_id) == 0 then
    work()
    c:exec(INSERT, req.open_id, req.device)
  end
  c:close()
  lock:release()
end
