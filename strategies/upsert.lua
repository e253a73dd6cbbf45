-- upsert (Lua twin of models/strategies/upsert.cpp): INSERT ... ON DUPLICATE KEY UPDATE
-- device = VALUES(device). The connection is taken before the handler's work, as C++
-- connect(r, w) is; a 1213 propagates, as in C++.

description = "INSERT ... ON DUPLICATE KEY UPDATE (Lua twin)"
source = "sources/004 (ON DUPLICATE KEY UPDATE)"
risks = "no duplicates; a late retry overwrites a newer binding; concurrent upserts can deadlock (1213)"

-- t_account as the C++ accounts_table builds it (columns in its order; device '', the others 0),
-- with the index of the C++ entry:
tables = {
  "CREATE TABLE t_account (id BIGINT AUTO_INCREMENT PRIMARY KEY, open_id VARCHAR(64) NOT NULL, device VARCHAR(64) NOT NULL DEFAULT '', "
    .. "status BIGINT NOT NULL DEFAULT 0, version BIGINT NOT NULL DEFAULT 0, wallet BIGINT NOT NULL DEFAULT 0, UNIQUE KEY (open_id))",
}

local UPSERT = "INSERT INTO t_account (open_id, device) VALUES (?, ?) ON DUPLICATE KEY UPDATE device = VALUES(device)"

function bind(req)
  local c = db.connect()
  work()  -- building the row
  c:exec(UPSERT, req.open_id, req.device)
  c:close()
end
