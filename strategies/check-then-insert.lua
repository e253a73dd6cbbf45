-- check-then-insert (Lua twin): SELECT by OpenID, INSERT if absent, no unique index. The production
-- code of ../shared/sources/003 section 2 before the fix. A port of
-- models/strategies/check_then_insert.cpp (PlainCheckThenInsert) that gives the same results on
-- the same seeds: the same statements on one connection (the default one, held until bind ends,
-- as C++ connect(r, w) is), the handler's work between the SELECT and the INSERT.
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
