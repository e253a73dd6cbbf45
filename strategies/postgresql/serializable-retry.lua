-- serializable-retry: check-then-insert inside a SERIALIZABLE transaction, with no unique index,
-- and the whole transaction tried again when PostgreSQL refuses it with 40001 (could not
-- serialize access), as its manual asks of every serializable transaction. Runs on
-- "database": {"engine": "postgresql"} only.

description = "BEGIN ISOLATION LEVEL SERIALIZABLE; check-then-insert; COMMIT; on 40001 try again (PostgreSQL, a plain index on open_id)"
source = "PostgreSQL manual, Serializable Isolation Level (serializable snapshot isolation; retry on 40001)"
risks = "no duplicates: of two transactions that both find the key absent and insert it, SSI fails one; each failure costs a retry, and under contention the tries can run out"

params = { tries = 5 }

-- t_account with a plain index on open_id: SSI then remembers each read by its key. Without one
-- a read is a sequential scan, which PostgreSQL (and the model) remember as the whole table:
-- every two concurrent transactions conflict and most of them fail with 40001.
tables = {
  "CREATE TABLE t_account (id BIGINT AUTO_INCREMENT PRIMARY KEY, open_id VARCHAR(64) NOT NULL, device VARCHAR(64) NOT NULL DEFAULT '', "
    .. "status BIGINT NOT NULL DEFAULT 0, version BIGINT NOT NULL DEFAULT 0, wallet BIGINT NOT NULL DEFAULT 0, KEY (open_id))",
}

local function once(req)
  db.exec("BEGIN ISOLATION LEVEL SERIALIZABLE")
  if #db.query("SELECT id FROM t_account WHERE open_id = $1", req.open_id) == 0 then
    work()
    db.exec("INSERT INTO t_account (open_id, device) VALUES ($1, $2)", req.open_id, req.device)
  end
  db.commit()
end

function bind(req)
  for try = 1, params.tries do
    local ok, e = pcall(once, req)
    if ok then return end
    db.rollback()  -- ends the aborted transaction (nothing to do when COMMIT itself failed)
    if type(e) ~= "table" or e.code ~= "40001" or try == params.tries then error(e, 0) end
  end
end
