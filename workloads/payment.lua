-- Paying once: each request charges an amount for a payment the user submitted. The client
-- retries after a timeout, and a user may submit twice; both send the same payment id (the
-- form's idempotency key). The invariant: one charge per payment, and no payment the client
-- was told succeeded left uncharged.
description = "charge a payment exactly once, under client retries and double submits"
source = "Stripe, Idempotent requests (an idempotency key per payment); docs/models.md, Application patterns (retries after a timeout)"

tables = {
  "CREATE TABLE t_payment (id BIGINT AUTO_INCREMENT PRIMARY KEY, payment BIGINT, amount BIGINT, UNIQUE KEY (payment))",
  "CREATE TABLE t_payment_log (id BIGINT AUTO_INCREMENT PRIMARY KEY, payment BIGINT, amount BIGINT)",
}

request = {
  payment = "submission",  -- retries and double submits keep it
  amount = { uniform = { 1, 100 } },
}

metrics = {
  { name = "double_charges", unit = "charges", meaning = "charges beyond the first of a payment" },
  { name = "acknowledged_uncharged", unit = "payments", meaning = "payments the client was told succeeded that were never charged" },
  { name = "charges", unit = "charges", meaning = "charges made", finding = false },
}

function check(final, history)
  local charged, charges = {}, 0
  for _, e in ipairs(history.effects) do
    if e.name == "charge" then
      charged[e.value] = (charged[e.value] or 0) + 1
      charges = charges + 1
    end
  end
  local double = 0
  for _, n in pairs(charged) do double = double + n - 1 end
  local uncharged = 0
  for _, op in ipairs(history.operations) do
    if op.outcome == "ok" and not charged[op.req.payment] then uncharged = uncharged + 1 end
  end
  return { double_charges = double, acknowledged_uncharged = uncharged, charges = charges }
end
