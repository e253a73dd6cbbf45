-- No lock: the database adds one under the row's lock.
workload = "counter"
description = "UPDATE t_counter SET v = v + 1 WHERE id = ?"
source = "MariaDB, UPDATE (the new value computed from the current one under the row lock)"
risks = "none for the counter"

function handle(req)
  work()
  db.exec("UPDATE t_counter SET v = v + 1 WHERE id = ?", req.counter)
end
