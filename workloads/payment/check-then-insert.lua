-- Look for the payment, charge if it is absent, then record it.
workload = "payment"
description = "SELECT the payment; if absent: charge, INSERT it (1062 ignored)"
source = "the check-then-insert of most services (sources/)"
risks = "a retry that arrives while the first attempt is still charging finds nothing and charges again"

function handle(req)
  if #db.query("SELECT id FROM t_payment WHERE payment = ?", req.payment) > 0 then return end
  work()  -- calling the payment provider
  effect("charge", req.payment)
  local ok, e = pcall(db.exec, "INSERT INTO t_payment (payment, amount) VALUES (?, ?)", req.payment, req.amount)
  if not ok and e.code ~= 1062 then error(e, 0) end
end
