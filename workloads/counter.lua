-- A counter (a balance, a quota) raised by read-modify-write under a lock's lease. The
-- invariant: every acknowledged increment is in the final value, and nothing more than was asked.
description = "add 1 to a counter by read-modify-write: no increment lost"
source = "Kleppmann 2016, How to do distributed locking (fencing: a write guarded by what the storage has seen)"

tables = {
  "CREATE TABLE t_counter (id INT PRIMARY KEY, v BIGINT, version BIGINT)",
}
rows = { t_counter = { { id = 1, v = 0, version = 0 } } }

request = { counter = 1 }

metrics = {
  { name = "lost_increments", unit = "increments", meaning = "acknowledged increments missing from the final value" },
  { name = "extra_increments", unit = "increments", meaning = "increments in the final value beyond those that may have run (acknowledged or unknown)" },
}

function check(final, history)
  local acknowledged, maybe = 0, 0
  for _, op in ipairs(history.operations) do
    if op.outcome == "ok" then acknowledged = acknowledged + 1 end
    if op.outcome ~= "failed" then maybe = maybe + 1 end
  end
  local v = final.tables.t_counter[1].v
  return { lost_increments = math.max(0, acknowledged - v), extra_increments = math.max(0, v - maybe) }
end
