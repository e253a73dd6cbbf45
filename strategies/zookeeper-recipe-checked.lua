-- zookeeper-recipe-checked (Lua twin of models/strategies/zookeeper_checked.cpp): Curator's
-- InterProcessMutex at /locks/<openid> around check-then-insert, with Curator's advice followed
-- just before the write: the client's connection state CONNECTED or RECONNECTED, of the session
-- the lock was taken with; otherwise the write is given up. The connection goes back to the pool
-- before the unlock.

description = "zookeeper-recipe, with the client's connection state (Curator's SUSPENDED / LOST) checked before the write (Lua twin)"
source = "Curator's InterProcessMutex documentation (watch for SUSPENDED and LOST: after SUSPENDED the lock is uncertain until RECONNECTED, after LOST it is gone); docs/models.md, Lock services"
risks = "a pause of the holder: when it wakes, its write starts before its client has noticed anything"

params = { wait_ms = 10000 }

local FIND = "SELECT id FROM t_account WHERE open_id = ?"
local INSERT = "INSERT INTO t_account (open_id, device) VALUES (?, ?)"

function bind(req)
  local lock = locks.zookeeper("/locks/" .. req.open_id, { wait_ms = params.wait_ms })
  if not lock then return "lock_busy" end
  local _, session = locks.zookeeper_state()
  local trusted = true
  local c = db.connect()
  if #c:query(FIND, req.open_id) == 0 then
    work()
    local state, now = locks.zookeeper_state()
    trusted = now == session and (state == "CONNECTED" or state == "RECONNECTED")
    if trusted then c:exec(INSERT, req.open_id, req.device) end
  end
  c:close()
  lock:release()
  if not trusted then return "session_expired" end
end
