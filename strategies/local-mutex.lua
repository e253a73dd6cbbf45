-- local-mutex (Lua twin): a mutex per OpenID inside each app server, as `synchronized` in one JVM,
-- around check-then-insert. It excludes only the threads of one node. A port of
-- models/strategies/local_mutex.cpp that gives the same results on the same seeds:
-- Strategy::check_then_insert on a connection of its own given back before the unlock, the unlock
-- on every way out of bind (the C++ LockGuard's `finally`).

description = "a mutex per OpenID in each app server around check-then-insert (Lua twin)"
source = "DOMAIN.md, Application patterns (synchronized on N app nodes)"
risks = "excludes only requests on the same node: with N nodes, copies meet on one node 1/N of the time"

local FIND = "SELECT id FROM t_account WHERE open_id = ?"
local INSERT = "INSERT INTO t_account (open_id, device) VALUES (?, ?)"

-- Strategy::check_then_insert(r, w, lock): SELECT by OpenID, the handler's work, INSERT if absent,
-- on a connection taken from the pool now and given back before returning, also when a statement
-- raises. Returns pcall's results: ok, and the error when not.
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
  local lock = locks.local_mutex(req.open_id)  -- never nil: waits its turn
  local ok, err = check_then_insert(req)
  lock:release()  -- in `finally`
  if not ok then error(err, 0) end
end
