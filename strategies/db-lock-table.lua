-- db-lock-table (Lua twin): a lock table in the database: INSERT the lock row (its unique key taken:
-- busy), check-then-insert, DELETE the lock row in `finally`. No expiry: a holder that dies in
-- between leaves the row. A port of models/strategies/db_lock_table.cpp that gives the same results
-- on the same seeds: everything on one connection (the default one, held until bind ends, as C++
-- connect(r, w) is), the lock row's DELETE on every way out of bind (the C++ LockGuard's
-- `finally`), before the connection goes back.

description = "INSERT a row into a lock table (unique key: busy), check-then-insert, DELETE it (Lua twin)"
source = "sources/004 (database-table distributed lock)"
risks = "a holder crashing before its DELETE leaves the lock row for good (stuck lock); busy is an error to the caller"

uses = { "lock_table" }

local FIND = "SELECT id FROM t_account WHERE open_id = ?"
local INSERT = "INSERT INTO t_account (open_id, device) VALUES (?, ?)"

-- Strategy::check_then_insert(c, r, w, lock) on the default connection: SELECT by OpenID, the
-- handler's work, INSERT if absent.
local function check_then_insert(req)
  if #db.query(FIND, req.open_id) == 0 then
    work()
    db.exec(INSERT, req.open_id, req.device)
  end
end

function bind(req)
  local lock = locks.table("bind:" .. req.open_id)  -- INSERT INTO t_lock on the default connection
  if not lock then return "lock_busy" end
  local ok, err = pcall(check_then_insert, req)
  lock:release()  -- DELETE the lock row, in `finally`: a failure here replaces the body's error
  if not ok then error(err, 0) end
end
