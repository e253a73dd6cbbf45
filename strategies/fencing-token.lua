-- fencing-token (Lua twin): the ZooKeeper lock (Curator's InterProcessMutex at /locks/<openid>), and
-- its node's create zxid as a fencing token the database checks before the insert. A port of
-- models/strategies/fencing_token.cpp (ZookeeperLock with fencing, and
-- Strategy::fenced_check_then_insert) that gives the same results on the same seeds: the handler's
-- work first, then one short transaction on a connection of its own (given back before the
-- unlock, also when a statement raises) that raises the lock's fence to the token unless a higher
-- one was seen (then rolls back: this holder's write is stale, `fenced`) and inserts if absent;
-- the unlock on every way out of bind (the C++ LockGuard's `finally`).
-- The t_fence table comes from the statements naming it; its writes are not critical-section steps.

description = "ZooKeeper lock; its create zxid as a fencing token; the database refuses a token lower than one seen (Lua twin)"
source = "DOMAIN.md, Lock services (Kleppmann 2016: fencing tokens; ZK zxid as the token)"
risks = "none for the data: a holder whose lock expired is refused (errors.fenced) once a later holder has written"

params = { wait_ms = 10000 }
uses = { "zookeeper", "fences" }

local FIND = "SELECT id FROM t_account WHERE open_id = ?"
local INSERT = "INSERT INTO t_account (open_id, device) VALUES (?, ?)"
local INSERT_FENCE = "INSERT IGNORE INTO t_fence (lock_key) VALUES (?)"
-- The fencing check: raises the fence to this holder's token unless a higher one was seen.
local RAISE_FENCE = "UPDATE t_fence SET token = ? WHERE lock_key = ? AND token < ?"

-- Strategy::fenced_check_then_insert: returns pcall's results: ok, and then whether the write was
-- accepted (false: refused by the fence) or the error.
local function fenced_check_then_insert(req, lock)
  work()  -- building the row, calling other services: before the short transaction
  local c = db.connect()
  local ok, result = pcall(function()
    c:begin()
    c:exec(INSERT_FENCE, req.open_id)  -- the fence row, once
    if c:exec(RAISE_FENCE, lock.token, req.open_id, lock.token) == 0 then
      c:rollback()
      lock:rejected()
      return false
    end
    if #c:query(FIND, req.open_id) == 0 then
      c:exec(INSERT, req.open_id, req.device)  -- a critical-section step (the runtime records it)
    end
    c:commit()
    return true
  end)
  c:close()
  return ok, result
end

function bind(req)
  local lock = locks.zookeeper("/locks/" .. req.open_id, { wait_ms = params.wait_ms })
  if not lock then return "lock_busy" end
  local ok, accepted = fenced_check_then_insert(req, lock)
  lock:release()  -- in `finally`: a failure here replaces the body's error
  if not ok then error(accepted, 0) end
  if not accepted then return "fenced" end
end
