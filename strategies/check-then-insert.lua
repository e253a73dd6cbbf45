-- check-then-insert (Lua twin of models/strategies/check_then_insert.cpp, PlainCheckThenInsert):
-- SELECT by OpenID, the handler's work, INSERT if absent, no unique index; on the default
-- connection, held until bind ends. The production code of sources/003 (docs/sources.md) section 2 before
-- the fix.
-- The C++ entry's `index` parameter (default none) is this file's table: the default t_account,
-- no index on open_id.

description = "SELECT by OpenID, INSERT if absent; no unique index (Lua twin)"
source = "sources/003 section 2 (the production case)"
risks = "duplicates whenever two copies of a request overlap: retries of a timed-out client, queued requests"

function bind(req)
  if #db.query("SELECT id FROM t_account WHERE open_id = ?", req.open_id) == 0 then
    work()
    db.exec("INSERT INTO t_account (open_id, device) VALUES (?, ?)", req.open_id, req.device)
  end
end
