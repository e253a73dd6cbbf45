-- db-lock-table (Lua twin of models/strategies/db_lock_table.cpp): a lock table in the database:
-- INSERT the lock row (its unique key taken: busy), check-then-insert, DELETE the lock row; all on
-- one connection (the default one, held until bind ends). No expiry: a holder that dies in between
-- leaves the row.

description = "INSERT a row into a lock table (unique key: busy), check-then-insert, DELETE it (Lua twin)"
source = "sources/004 (database-table distributed lock)"
risks = "a holder crashing before its DELETE leaves the lock row for good (stuck lock); busy is an error to the caller"

uses = { "lock_table" }

local FIND = "SELECT id FROM t_account WHERE open_id = ?"
local INSERT = "INSERT INTO t_account (open_id, device) VALUES (?, ?)"

function bind(req)
  local lock = locks.table("bind:" .. req.open_id)  -- INSERT INTO t_lock on the default connection
  if not lock then return "lock_busy" end
  if #db.query(FIND, req.open_id) == 0 then
    work()
    db.exec(INSERT, req.open_id, req.device)
  end
  lock:release()  -- DELETE the lock row
end
