-- shedlock-app-clock: ShedLock's JDBC lock provider as it runs without usingDbTime(): a row per
-- lock name whose lock_until the app server writes from its own clock. The lock is taken by
-- inserting the row, or, when it is there, by an UPDATE that finds its lease over by this
-- server's clock; the unlock writes lock_until = now. Check-then-insert inside, no unique index.
-- The checkers see each lease as its holder believes it (hold_until).

description = "ShedLock's lease row written with the app server's clock (lockAtMostFor = lease_ms); check-then-insert inside"
source = "ShedLock's README, JdbcTemplateLockProvider: without usingDbTime() lock_until is the app server's clock, and 'ShedLock assumes that clocks on the nodes are synchronized'"
risks = "each app server judges a lease by its own clock: one whose clock runs ahead of the holder's by more than the lease takes a lock that is still held, and both insert (scenario shedlock-app-clock)"
params = { lease_ms = 2000 }
tables = {
  "CREATE TABLE shedlock (name VARCHAR(64) NOT NULL, lock_until BIGINT NOT NULL, locked_by VARCHAR(64) NOT NULL, PRIMARY KEY (name))",
}

-- The lease's end if this attempt took the lock, nil if another holds it.
local function take(name, me)
  local now = math.floor(now_ms())
  local till = now + math.floor(params.lease_ms)
  local inserted, e = pcall(db.exec, "INSERT INTO shedlock (name, lock_until, locked_by) VALUES (?, ?, ?)", name, till, me)
  if inserted then return till end
  if e.code ~= 1062 then error(e, 0) end
  local updated = db.exec("UPDATE shedlock SET lock_until = ?, locked_by = ? WHERE name = ? AND lock_until <= ?", till, me, name, now)
  if updated == 1 then return till end
  return nil
end

function bind(req)
  local name, me = "bind:" .. req.open_id, unique()
  local till = take(name, me)
  if not till then return "lock_busy" end
  local lease = hold_until(name, till)
  if #db.query("SELECT id FROM t_account WHERE open_id = ?", req.open_id) == 0 then
    work()
    db.exec("INSERT INTO t_account (open_id, device) VALUES (?, ?)", req.open_id, req.device)
  end
  lease:release()
  db.exec("UPDATE shedlock SET lock_until = ? WHERE name = ? AND locked_by = ?", math.floor(now_ms()), name, me)
end
