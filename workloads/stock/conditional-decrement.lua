-- The database decides: one UPDATE that takes the units only if they are there.
workload = "stock"
description = "UPDATE t_stock SET stock = stock - ? WHERE id = ? AND stock >= ?, then INSERT the order, in one transaction"
source = "MariaDB, UPDATE (a row's new value computed from its current one, under its row lock)"
risks = "none for the stock: the check and the write are one statement"

function handle(req)
  work()
  db.begin()
  local sold = db.exec("UPDATE t_stock SET stock = stock - ? WHERE id = ? AND stock >= ?", req.qty, req.item, req.qty)
  if sold == 1 then db.exec("INSERT INTO t_order (item, qty, op) VALUES (?, ?, ?)", req.item, req.qty, req.op) end
  db.commit()
end
