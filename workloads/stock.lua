-- Selling the last items: each request buys `qty` of one item, whose stock is limited. The
-- invariant: never sell more than there was, and the stock left tells what was sold.
description = "buy qty of an item of limited stock: never sell more than there is"
source = "docs/writing-workloads.md (the worked example); Kleppmann 2016, How to do distributed locking"

params = { items = 1, stock = 1 }

tables = {
  "CREATE TABLE t_stock (id INT PRIMARY KEY, stock BIGINT)",
  "CREATE TABLE t_order (id BIGINT AUTO_INCREMENT PRIMARY KEY, item BIGINT, qty BIGINT, op BIGINT)",
}

-- Every item starts with params.stock units.
rows = { t_stock = {} }
for item = 1, params.items do rows.t_stock[item] = { id = item, stock = params.stock } end

-- The item is the scenario's key (clients.keys) counted from 1; one or two units each.
request = {
  item = { key_from = 1 },
  qty = { uniform = { 1, params.max_qty or 1 } },
}

metrics = {
  { name = "oversold", unit = "units", meaning = "units ordered beyond an item's initial stock" },
  { name = "stock_mismatch", unit = "units",
    meaning = "units by which an item's stock left differs from its initial stock less the units ordered (a lost update of the stock)" },
  { name = "orders_of_failed_requests", unit = "orders",
    meaning = "orders stored for requests whose client was told they failed" },
  { name = "orders", unit = "orders", meaning = "orders stored", finding = false },
}

function check(final, history)
  local ordered, orders, failed = {}, 0, {}
  for _, op in ipairs(history.operations) do
    if op.outcome == "failed" then failed[op.op] = true end
  end
  local of_failed = 0
  for _, o in ipairs(final.tables.t_order) do
    ordered[o.item] = (ordered[o.item] or 0) + o.qty
    orders = orders + 1
    if failed[o.op] then of_failed = of_failed + 1 end
  end
  local oversold, mismatch = 0, 0
  for _, s in ipairs(final.tables.t_stock) do
    local sold = ordered[s.id] or 0
    oversold = oversold + math.max(0, sold - params.stock)
    mismatch = mismatch + math.abs(params.stock - sold - s.stock)
  end
  return { oversold = oversold, stock_mismatch = mismatch, orders_of_failed_requests = of_failed, orders = orders }
end
