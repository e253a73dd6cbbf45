-- The row lock held from the read to the commit.
workload = "stock"
description = "BEGIN, SELECT stock ... FOR UPDATE, work, UPDATE stock = ?, INSERT the order, COMMIT"
source = "MariaDB, SELECT ... FOR UPDATE (locking reads)"
risks = "none for the stock; a paused holder keeps the row locked, so others wait (or time out after innodb_lock_wait_timeout)"

function handle(req)
  db.begin()
  local row = db.query("SELECT stock FROM t_stock WHERE id = ? FOR UPDATE", req.item)[1]
  if row.stock >= req.qty then
    work()
    db.exec("UPDATE t_stock SET stock = ? WHERE id = ?", row.stock - req.qty, req.item)
    db.exec("INSERT INTO t_order (item, qty, op) VALUES (?, ?, ?)", req.item, req.qty, req.op)
  end
  db.commit()
end
