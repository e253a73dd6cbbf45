-- unique-index (Lua twin of models/strategies/unique_index.cpp, PlainCheckThenInsert with a unique
-- key index): the same check-then-insert with a unique index on open_id; the loser of a race gets
-- 1062, left uncaught as in C++, which reaches the client as an error.

description = "check-then-insert with a unique index on open_id; 1062 surfaces (Lua twin)"
source = "sources/003 section 3; sources/001 (check then insert with a unique index)"
risks = "no duplicates; the loser of a race sees a 1062 error"

-- t_account as the C++ accounts_table builds it (columns in its order; device '', the others 0),
-- with the index of the C++ entry:
tables = {
  "CREATE TABLE t_account (id BIGINT AUTO_INCREMENT PRIMARY KEY, open_id VARCHAR(64) NOT NULL, device VARCHAR(64) NOT NULL DEFAULT '', "
    .. "status BIGINT NOT NULL DEFAULT 0, version BIGINT NOT NULL DEFAULT 0, wallet BIGINT NOT NULL DEFAULT 0, UNIQUE KEY (open_id))",
}

function bind(req)
  if #db.query("SELECT id FROM t_account WHERE open_id = ?", req.open_id) == 0 then
    work()
    db.exec("INSERT INTO t_account (open_id, device) VALUES (?, ?)", req.open_id, req.device)
  end
end
