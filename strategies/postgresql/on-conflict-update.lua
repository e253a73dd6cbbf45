-- pg-on-conflict-update: PostgreSQL's upsert that always returns the row. INSERT ... ON CONFLICT
-- (open_id) DO UPDATE SET device = EXCLUDED.device RETURNING id gives the id of the row it
-- inserted, or of the row that was there (or came in while it waited), in one statement.
-- Runs on "database": {"engine": "postgresql"} only.

description = "INSERT ... ON CONFLICT (open_id) DO UPDATE SET device = EXCLUDED.device RETURNING id (PostgreSQL)"
source = "PostgreSQL manual, INSERT ... ON CONFLICT DO UPDATE; sources/004 (the upsert, as ON DUPLICATE KEY UPDATE on MySQL)"
risks = "no duplicates, and one round trip; the retry of a request overwrites the device its first attempt bound (last writer wins), and under REPEATABLE READ a conflicting row committed after the snapshot is 40001"

-- t_account with a unique index on open_id, in PostgreSQL's DDL.
tables = {
  "CREATE TABLE t_account (id BIGSERIAL PRIMARY KEY, open_id VARCHAR(64) NOT NULL UNIQUE, device VARCHAR(64) NOT NULL DEFAULT '', "
    .. "status BIGINT NOT NULL DEFAULT 0, version BIGINT NOT NULL DEFAULT 0, wallet BIGINT NOT NULL DEFAULT 0)",
}

function bind(req)
  work()  -- building the row
  local row = db.query("INSERT INTO t_account (open_id, device) VALUES ($1, $2) "
                       .. "ON CONFLICT (open_id) DO UPDATE SET device = EXCLUDED.device RETURNING id",
                       req.open_id, req.device)
  if #row ~= 1 then return "internal" end  -- DO UPDATE returns the row in every case
end
