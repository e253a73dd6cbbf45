-- pg-on-conflict-reselect: PostgreSQL's insert-if-absent. INSERT ... ON CONFLICT (open_id) DO NOTHING
-- RETURNING id gives the new row's id, or no row when the key was there (or came in while it
-- waited); then the row is selected. Runs on "database": {"engine": "postgresql"} only ($1, $2).

description = "INSERT ... ON CONFLICT DO NOTHING RETURNING id; no row: SELECT it (PostgreSQL)"
source = "PostgreSQL manual, INSERT ... ON CONFLICT; sources/004 (insert-if-absent, as INSERT IGNORE on MySQL)"
risks = "no duplicates; under REPEATABLE READ or SERIALIZABLE a conflicting row committed after the snapshot is 40001, not a row"

-- t_account as the C++ accounts_table builds it, with a unique index on open_id (the schema,
-- written in MySQL's DDL as every strategy's `tables` is).
tables = {
  "CREATE TABLE t_account (id BIGINT AUTO_INCREMENT PRIMARY KEY, open_id VARCHAR(64) NOT NULL, device VARCHAR(64) NOT NULL DEFAULT '', "
    .. "status BIGINT NOT NULL DEFAULT 0, version BIGINT NOT NULL DEFAULT 0, wallet BIGINT NOT NULL DEFAULT 0, UNIQUE KEY (open_id))",
}

function bind(req)
  work()  -- building the row
  local made = db.query("INSERT INTO t_account (open_id, device) VALUES ($1, $2) ON CONFLICT (open_id) DO NOTHING RETURNING id",
                        req.open_id, req.device)
  if #made == 0 and #db.query("SELECT id FROM t_account WHERE open_id = $1", req.open_id) == 0 then
    return "internal"  -- a conflict, but no row to read: cannot happen under READ COMMITTED
  end
end
