-- The same lock, and a version the write must still see: a late writer's write is refused,
-- and it reads again.
workload = "counter"
description = "Redis lock, SELECT v, version, work, UPDATE ... WHERE version = ? (read again when refused), unlock"
source = "Kleppmann 2016 (fencing: the storage refuses a write based on an old read); optimistic concurrency control"
risks = "none for the counter: a stale write changes no row"

params = { ttl_ms = 10000, wait_ms = 1000, pause_ms = 10, tries = 5 }

function handle(req)
  local lock = locks.redis("lock:counter:" .. req.counter, { ttl_ms = params.ttl_ms, wait_ms = params.wait_ms, pause_ms = params.pause_ms })
  if not lock then return "lock_busy" end
  for _ = 1, params.tries do
    local row = db.query("SELECT v, version FROM t_counter WHERE id = ?", req.counter)[1]
    work()
    if db.exec("UPDATE t_counter SET v = ?, version = version + 1 WHERE id = ? AND version = ?", row.v + 1, req.counter, row.version) == 1 then
      lock:release()
      return
    end
  end
  lock:release()
  return "internal"
end
