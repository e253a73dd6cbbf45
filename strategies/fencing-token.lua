-- fencing-token (Lua twin of models/strategies/fencing_token.cpp: ZookeeperLock with fencing, and
-- Strategy::fenced_check_then_insert): the ZooKeeper lock (Curator's InterProcessMutex at
-- /locks/<openid>), and its node's create zxid as a fencing token the database checks before the
-- insert. The handler's work first, then one short transaction on a connection of its own (given
-- back before the unlock) that raises the lock's fence to the token unless a higher one was seen
-- (then rolls back: this holder's write is stale, `fenced`) and inserts if absent.
-- The t_fence table comes from the statements naming it; its writes are not critical-section steps.

description = "ZooKeeper lock; its create zxid as a fencing token; the database refuses a token lower than one seen (Lua twin)"
source = "docs/models.md, Lock services (Kleppmann 2016: fencing tokens; ZK zxid as the token)"
risks = "none for the data: a holder whose lock expired is refused (errors.fenced) once a later holder has written"

params = { wait_ms = 10000 }
uses = { "zookeeper", "fences" }

local FIND = "SELECT id FROM t_account WHERE open_id = ?"
local INSERT = "INSERT INTO t_account (open_id, device) VALUES (?, ?)"
local INSERT_FENCE = "INSERT IGNORE INTO t_fence (lock_key) VALUES (?)"
-- The fencing check: raises the fence to this holder's token unless a higher one was seen.
local RAISE_FENCE = "UPDATE t_fence SET token = ? WHERE lock_key = ? AND token < ?"

function bind(req)
  local lock = locks.zookeeper("/locks/" .. req.open_id, { wait_ms = params.wait_ms })
  if not lock then return "lock_busy" end
  work()  -- building the row, calling other services: before the short transaction
  local c = db.connect()
  c:begin()
  c:exec(INSERT_FENCE, req.open_id)  -- the fence row, once
  local accepted = c:exec(RAISE_FENCE, lock.token, req.open_id, lock.token) > 0
  if accepted then
    if #c:query(FIND, req.open_id) == 0 then
      c:exec(INSERT, req.open_id, req.device)
    end
    c:commit()
  else
    c:rollback()
    lock:rejected()  -- a later holder has written: this one's write is stale
  end
  c:close()
  lock:release()
  if not accepted then return "fenced" end
end
