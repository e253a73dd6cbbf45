-- A Redis lock around reading the counter and writing it back.
workload = "counter"
description = "Redis lock (SET NX PX, retried), SELECT v, work, UPDATE v = ?, unlock"
source = "Kleppmann 2016, How to do distributed locking"
risks = "a holder paused past the TTL writes a value read before another holder's increment: lost update"

params = { ttl_ms = 10000, wait_ms = 1000, pause_ms = 10 }

function handle(req)
  local lock = locks.redis("lock:counter:" .. req.counter, { ttl_ms = params.ttl_ms, wait_ms = params.wait_ms, pause_ms = params.pause_ms })
  if not lock then return "lock_busy" end
  local v = db.query("SELECT v FROM t_counter WHERE id = ?", req.counter)[1].v
  work()
  db.exec("UPDATE t_counter SET v = ? WHERE id = ?", v + 1, req.counter)
  lock:release()
end
