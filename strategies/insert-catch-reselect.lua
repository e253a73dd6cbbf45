-- insert-catch-reselect (Lua twin): INSERT first; on 1062 the row exists, so read it back and
-- succeed. A port of models/strategies/insert_catch_reselect.cpp that gives the same results on
-- the same seeds.
-- C++ takes its connection (connect(r, w)) before the handler's work and holds it until bind
-- returns. The default db.* connection would be taken at its first statement, after the work, so
-- this twin takes its own with db.connect() first and gives it back as bind ends, whether bind
-- returns or raises. Only 1062 is caught, as in C++; any other error propagates.

description = "INSERT; on 1062 re-select the existing row and succeed (Lua twin)"
source = "sources/001 (swallow the duplicate key error and re-query)"
risks = "no duplicates; inside a REPEATABLE READ transaction that already read, the re-select can miss the row"

-- t_account as the C++ accounts_table builds it (columns in its order; device '', the others 0),
-- with the index of the C++ entry:
tables = {
  "CREATE TABLE t_account (id BIGINT AUTO_INCREMENT PRIMARY KEY, open_id VARCHAR(64), device VARCHAR(64), "
    .. "status BIGINT, version BIGINT, wallet BIGINT, UNIQUE KEY (open_id))",
}

local INSERT = "INSERT INTO t_account (open_id, device) VALUES (?, ?)"
local FIND = "SELECT id FROM t_account WHERE open_id = ?"

-- Returns the error kind, or nil for success.
local function insert_catch_reselect(c, req)
  work()  -- building the row
  local ok, err = pcall(c.exec, c, INSERT, req.open_id, req.device)
  if not ok then
    if type(err) ~= "table" or err.code ~= 1062 then error(err, 0) end
    if #c:query(FIND, req.open_id) == 0 then return "internal" end  -- "1062 but not found"
  end
  return nil
end

function bind(req)
  local c = db.connect()
  local ok, result = pcall(insert_catch_reselect, c, req)
  c:close()  -- the C++ connection's scope ends, on either way out
  if not ok then error(result, 0) end
  if result ~= nil then return result end
end
