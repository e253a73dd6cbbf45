-- A Redis lock (SET NX PX, retried) around reading the stock and writing it back.
workload = "stock"
description = "Redis lock per item, SELECT stock, work, UPDATE stock = ?, INSERT the order"
source = "Kleppmann 2016 (a lease does not bound how long its holder runs)"
risks = "a pause longer than the TTL lets a second holder sell the same units: oversold, stock lost"

params = { ttl_ms = 10000, wait_ms = 1000, pause_ms = 10 }

function handle(req)
  local lock = locks.redis("lock:stock:" .. req.item, { ttl_ms = params.ttl_ms, wait_ms = params.wait_ms, pause_ms = params.pause_ms })
  if not lock then return "lock_busy" end
  local row = db.query("SELECT stock FROM t_stock WHERE id = ?", req.item)[1]
  if row.stock >= req.qty then
    work()
    db.begin()
    db.exec("UPDATE t_stock SET stock = ? WHERE id = ?", row.stock - req.qty, req.item)
    db.exec("INSERT INTO t_order (item, qty, op) VALUES (?, ?, ?)", req.item, req.qty, req.op)
    db.commit()
  end
  lock:release()
end
