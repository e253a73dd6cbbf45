-- select-for-update (Lua twin of models/strategies/select_for_update.cpp): BEGIN; SELECT ... FOR
-- UPDATE by OpenID; INSERT if absent; COMMIT, on the default connection, no handler work. The row
-- to lock does not exist yet, so REPEATABLE READ locks the gap. Errors (1213, 1205) are left
-- uncaught, as in C++.
-- The C++ entry's `index` parameter (default plain) is this file's table: a plain KEY on open_id.

description = "BEGIN; SELECT ... FOR UPDATE; INSERT if absent; COMMIT (plain index) (Lua twin)"
source = "sources/004 (pessimistic lock: SELECT FOR UPDATE)"
risks = "gap locks of an absent key are shared: two callers both insert and one gets a deadlock (1213)"

-- t_account as the C++ accounts_table builds it (columns in its order; device '', the others 0),
-- with the index of the C++ entry:
tables = {
  "CREATE TABLE t_account (id BIGINT AUTO_INCREMENT PRIMARY KEY, open_id VARCHAR(64) NOT NULL, device VARCHAR(64) NOT NULL DEFAULT '', "
    .. "status BIGINT NOT NULL DEFAULT 0, version BIGINT NOT NULL DEFAULT 0, wallet BIGINT NOT NULL DEFAULT 0, KEY (open_id))",
}

function bind(req)
  db.begin()
  if #db.query("SELECT id FROM t_account WHERE open_id = ? FOR UPDATE", req.open_id) == 0 then
    db.exec("INSERT INTO t_account (open_id, device) VALUES (?, ?)", req.open_id, req.device)
  end
  db.commit()
end
