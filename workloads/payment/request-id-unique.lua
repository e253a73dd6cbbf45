-- The payment id is a unique key, inserted before the charge, in the charge's transaction.
workload = "payment"
description = "BEGIN, INSERT the payment (its id unique), charge, COMMIT; 1062: paid already"
source = "Stripe, Idempotent requests; MariaDB, a unique key's insert waits for the row's writer"
risks = "none for double charges: a second attempt waits at the insert and then finds the payment"

function handle(req)
  db.begin()
  local ok, e = pcall(db.exec, "INSERT INTO t_payment (payment, amount) VALUES (?, ?)", req.payment, req.amount)
  if not ok then
    db.rollback()
    if e.code == 1062 then return end  -- paid already: the same answer again
    error(e, 0)
  end
  work()  -- calling the payment provider
  effect("charge", req.payment)
  db.commit()
end
