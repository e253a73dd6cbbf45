-- shedlock-db-time: ShedLock's JDBC lock provider with usingDbTime(): the database's clock writes
-- every lease and judges it, so the app servers' clocks no longer matter. The lock is taken by
-- an UPDATE that finds its lease over by the database's clock; the unlock ends the lease at the
-- database's now. Check-then-insert inside,
-- no unique index. The lease is in whole seconds, as UNIX_TIMESTAMP() gives them (ShedLock's
-- own SQL keeps milliseconds in a DATETIME(3), a type the model's values do not have). The
-- checkers see each lease as its holder believes it: lease_ms from when it took the lock, by its
-- own clock (hold_until).

description = "ShedLock's lease row written and judged with the database's clock (usingDbTime(), lockAtMostFor = lease_ms); check-then-insert inside"
source = "ShedLock's README, JdbcTemplateLockProvider usingDbTime(): the lock's times come from the database server's clock"
risks = "one clock judges every lease, so the app servers' drift does not matter; the database's own clock stepping forward ends every lease early"
params = { lease_ms = 2000 }
tables = {
  "CREATE TABLE shedlock (name VARCHAR(64) NOT NULL, lock_until BIGINT NOT NULL, locked_by VARCHAR(64) NOT NULL, PRIMARY KEY (name))",
}

-- Whether this attempt took the lock: a lease the database's clock has seen end. The lock's row
-- is created ended (an INSERT's VALUES take no clock in the model), then taken by the UPDATE
-- ShedLock runs when the row is there.
local function take(name, me, seconds)
  db.exec("INSERT IGNORE INTO shedlock (name, lock_until, locked_by) VALUES (?, 0, '')", name)
  return db.exec("UPDATE shedlock SET lock_until = UNIX_TIMESTAMP() + ?, locked_by = ? WHERE name = ? AND lock_until <= UNIX_TIMESTAMP()",
                 seconds, me, name) == 1
end

function bind(req)
  local name, me = "bind:" .. req.open_id, unique()
  local started = math.floor(now_ms())
  if not take(name, me, math.ceil(params.lease_ms / 1000)) then return "lock_busy" end
  local lease = hold_until(name, started + math.floor(params.lease_ms))
  if #db.query("SELECT id FROM t_account WHERE open_id = ?", req.open_id) == 0 then
    work()
    db.exec("INSERT INTO t_account (open_id, device) VALUES (?, ?)", req.open_id, req.device)
  end
  lease:release()
  db.exec("UPDATE shedlock SET lock_until = UNIX_TIMESTAMP() WHERE name = ? AND locked_by = ?", name, me)
end
