-- The account-bind operation written as a Lua workload, for the benchmark that weighs a Lua
-- workload's trial against the built-in workload's (bench/script_bench.cpp): the same table, the
-- same requests (the key; the device is the submission), duplicates counted by check.
description = "bind OpenID key to a device, as the built-in account-bind workload does"

tables = {
  "CREATE TABLE t_binding (id BIGINT AUTO_INCREMENT PRIMARY KEY, open_id VARCHAR(64) NOT NULL, device VARCHAR(64) NOT NULL DEFAULT '', "
    .. "status BIGINT NOT NULL DEFAULT 0, version BIGINT NOT NULL DEFAULT 0, wallet BIGINT NOT NULL DEFAULT 0, KEY (open_id))",
}

request = { key = "key", device = "submission" }

metrics = {
  { name = "duplicate_bindings", unit = "rows", meaning = "rows beyond the first for one OpenID" },
}

function check(final, history)
  local seen, duplicates = {}, 0
  for _, row in ipairs(final.tables.t_binding) do
    if seen[row.open_id] then duplicates = duplicates + 1 else seen[row.open_id] = true end
  end
  return { duplicate_bindings = duplicates }
end
