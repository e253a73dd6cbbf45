-- local-mutex (Lua twin of models/strategies/local_mutex.cpp): a mutex per OpenID inside each app
-- server, as `synchronized` in one JVM, around check-then-insert on a connection of its own, given
-- back before the unlock. It excludes only the threads of one node.

description = "a mutex per OpenID in each app server around check-then-insert (Lua twin)"
source = "docs/models.md, Application patterns (synchronized on N app nodes)"
risks = "excludes only requests on the same node: with N nodes, copies meet on one node 1/N of the time"

local FIND = "SELECT id FROM t_account WHERE open_id = ?"
local INSERT = "INSERT INTO t_account (open_id, device) VALUES (?, ?)"

function bind(req)
  local lock = locks.local_mutex(req.open_id)  -- never nil: waits its turn
  local c = db.connect()
  if #c:query(FIND, req.open_id) == 0 then
    work()
    c:exec(INSERT, req.open_id, req.device)
  end
  c:close()
  lock:release()
end
