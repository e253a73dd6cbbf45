-- The sandbox's prelude, run in every Lua state before a script (models/lua/sandbox.cpp):
-- what the standard library does in an order of its own choosing (pairs and next over a hash
-- table, table.sort's pivots), replaced by a fixed order; pcall and xpcall that let the fatal
-- sentinel through.
local fatal, stopping = ...
local raw_pcall, raw_xpcall, raw_next, rawget, rawequal = pcall, xpcall, next, rawget, rawequal
local error, type, getmetatable = error, type, getmetatable

local function merge_sort(a, lo, hi, lt, tmp)
  if hi - lo < 8 then
    for i = lo + 1, hi do
      local v, j = a[i], i - 1
      while j >= lo and lt(v, a[j]) do a[j + 1] = a[j]; j = j - 1 end
      a[j + 1] = v
    end
    return
  end
  local mid = (lo + hi) // 2
  merge_sort(a, lo, mid, lt, tmp)
  merge_sort(a, mid + 1, hi, lt, tmp)
  if not lt(a[mid + 1], a[mid]) then return end
  for i = lo, mid do tmp[i] = a[i] end
  local i, j, k = lo, mid + 1, lo
  while i <= mid and j <= hi do
    if lt(a[j], tmp[i]) then a[k] = a[j]; j = j + 1 else a[k] = tmp[i]; i = i + 1 end
    k = k + 1
  end
  while i <= mid do a[k] = tmp[i]; i = i + 1; k = k + 1 end
end
local function less(x, y) return x < y end

-- A stable merge sort: the same order on every run, ties kept as they were.
table.sort = function(a, lt)
  if type(a) ~= "table" then error("bad argument #1 to 'sort' (table expected, got " .. type(a) .. ")", 2) end
  if lt ~= nil and type(lt) ~= "function" then error("bad argument #2 to 'sort' (function expected)", 2) end
  local n = #a
  if n > 1 then merge_sort(a, 1, n, lt or less, {}) end
end
local sort = table.sort

-- Keys in a fixed order: numbers, then strings, then booleans, then everything else in the
-- order the script first iterated over them.
local rank = { number = 1, string = 2, boolean = 3 }
local first_seen, seen = setmetatable({}, { __mode = "k" }), 0
local function order(v)
  local n = first_seen[v]
  if n == nil then seen = seen + 1; n = seen; first_seen[v] = n end
  return n
end
local function before(a, b)
  local ta, tb = type(a), type(b)
  local ra, rb = rank[ta] or 4, rank[tb] or 4
  if ra ~= rb then return ra < rb end
  if ra == 1 or ra == 2 then return a < b end
  if ra == 3 then return (not a) and b end
  return order(a) < order(b)
end
local function keys_of(t)
  local keys, n, k = {}, 0, raw_next(t)
  while k ~= nil do n = n + 1; keys[n] = k; k = raw_next(t, k) end
  sort(keys, before)
  return keys
end

next = function(t, k)
  if type(t) ~= "table" then error("bad argument #1 to 'next' (table expected, got " .. type(t) .. ")", 2) end
  local keys = keys_of(t)
  local i = 1
  if k ~= nil then
    i = nil
    for j = 1, #keys do if rawequal(keys[j], k) then i = j + 1; break end end
    if i == nil then error("invalid key to 'next'", 2) end
  end
  local key = keys[i]
  if key == nil then return nil end
  return key, rawget(t, key)
end

pairs = function(t)
  local mt = getmetatable(t)
  if type(mt) == "table" and mt.__pairs ~= nil then return mt.__pairs(t) end
  if type(t) ~= "table" then error("bad argument #1 to 'pairs' (table expected, got " .. type(t) .. ")", 2) end
  local keys, i = keys_of(t), 0
  return function(tt)
    while true do
      i = i + 1
      local key = keys[i]
      if key == nil then return nil end
      local value = rawget(tt, key)
      if value ~= nil then return key, value end
    end
  end, t, nil
end

local function pass(ok, ...)
  -- Stopping (a crash, the budget) whatever error replaced the sentinel on the way (a __close).
  if not ok and (rawequal((...), fatal) or stopping()) then error(fatal, 0) end
  return ok, ...
end
pcall = function(f, ...) return pass(raw_pcall(f, ...)) end
xpcall = function(f, handler, ...)
  return pass(raw_xpcall(f, function(e)
    if rawequal(e, fatal) then return fatal end
    return handler(e)
  end, ...))
end
