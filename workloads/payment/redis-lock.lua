-- A Redis lock per payment around the check-then-insert.
workload = "payment"
description = "Redis lock on the payment id (SET NX PX, retried), SELECT, charge, INSERT, unlock"
source = "Kleppmann 2016, How to do distributed locking"
risks = "a holder paused past the TTL: the retry takes the lock, finds nothing and charges again"

params = { ttl_ms = 10000, wait_ms = 1000, pause_ms = 10 }

function handle(req)
  local lock = locks.redis("lock:payment:" .. req.payment, { ttl_ms = params.ttl_ms, wait_ms = params.wait_ms, pause_ms = params.pause_ms })
  if not lock then return "lock_busy" end
  if #db.query("SELECT id FROM t_payment WHERE payment = ?", req.payment) == 0 then
    work()  -- calling the payment provider
    effect("charge", req.payment)
    local ok, e = pcall(db.exec, "INSERT INTO t_payment (payment, amount) VALUES (?, ?)", req.payment, req.amount)
    if not ok and e.code ~= 1062 then error(e, 0) end
  end
  lock:release()
end
