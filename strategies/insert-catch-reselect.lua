-- insert-catch-reselect (Lua twin of models/strategies/insert_catch_reselect.cpp): INSERT first; on
-- 1062 the row exists, so read it back and succeed. Only 1062 is caught, as in C++; any other error
-- propagates. The connection is taken before the handler's work, as C++ connect(r, w) is.

description = "INSERT; on 1062 re-select the existing row and succeed (Lua twin)"
source = "sources/001 (swallow the duplicate key error and re-query)"
risks = "no duplicates; inside a REPEATABLE READ transaction that already read, the re-select can miss the row"

-- t_account as the C++ accounts_table builds it (columns in its order; device '', the others 0),
-- with the index of the C++ entry:
tables = {
  "CREATE TABLE t_account (id BIGINT AUTO_INCREMENT PRIMARY KEY, open_id VARCHAR(64) NOT NULL, device VARCHAR(64) NOT NULL DEFAULT '', "
    .. "status BIGINT NOT NULL DEFAULT 0, version BIGINT NOT NULL DEFAULT 0, wallet BIGINT NOT NULL DEFAULT 0, UNIQUE KEY (open_id))",
}

local INSERT = "INSERT INTO t_account (open_id, device) VALUES (?, ?)"
local FIND = "SELECT id FROM t_account WHERE open_id = ?"

function bind(req)
  local c = db.connect()
  work()  -- building the row
  local ok, e = pcall(c.exec, c, INSERT, req.open_id, req.device)
  if not ok then
    if type(e) ~= "table" or e.code ~= 1062 then error(e, 0) end
    if #c:query(FIND, req.open_id) == 0 then return "internal" end  -- "1062 but not found"
  end
  c:close()
end
