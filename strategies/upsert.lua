-- upsert (Lua twin): INSERT ... ON DUPLICATE KEY UPDATE device = VALUES(device). A port of
-- models/strategies/upsert.cpp that gives the same results on the same seeds.
-- C++ takes its connection (connect(r, w)) before the handler's work and holds it until bind
-- returns. The default db.* connection would be taken at its first statement, after the work, so
-- this twin takes its own with db.connect() first and gives it back as bind ends, whether the
-- statement succeeds or raises (a 1213 is left to propagate, as in C++).

description = "INSERT ... ON DUPLICATE KEY UPDATE (Lua twin)"
source = "sources/004 (ON DUPLICATE KEY UPDATE)"
risks = "no duplicates; a late retry overwrites a newer binding; concurrent upserts can deadlock (1213)"

-- t_account as the C++ accounts_table builds it (columns in its order; device '', the others 0),
-- with the index of the C++ entry:
tables = {
  "CREATE TABLE t_account (id BIGINT AUTO_INCREMENT PRIMARY KEY, open_id VARCHAR(64), device VARCHAR(64), "
    .. "status BIGINT, version BIGINT, wallet BIGINT, UNIQUE KEY (open_id))",
}

local UPSERT = "INSERT INTO t_account (open_id, device) VALUES (?, ?) ON DUPLICATE KEY UPDATE device = VALUES(device)"

local function upsert(c, req)
  work()  -- building the row
  c:exec(UPSERT, req.open_id, req.device)
end

function bind(req)
  local c = db.connect()
  local ok, err = pcall(upsert, c, req)
  c:close()  -- the C++ connection's scope ends, on either way out
  if not ok then error(err, 0) end
end
