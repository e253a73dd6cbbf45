-- consul-lock (Lua twin of models/strategies/consul_lock.cpp: ConsulLock, not fenced): Consul's
-- api.Lock on locks/<openid> (a session of its own with a TTL and a lock-delay, renewed in the
-- background) around check-then-insert on a connection of its own, given back before the unlock.

description = "Consul's api.Lock (a session with a 15 s TTL and a 15 s lock-delay) around check-then-insert (Lua twin)"
source = "docs/models.md, Consul (sessions, lock-delay, api.Lock: https://developer.hashicorp.com/consul/docs/automate/session)"
risks = "a pause past twice the TTL loses the session; the lock-delay keeps the next holder out for a while, not for ever"

params = { ttl_ms = 15000, lock_delay_ms = 15000, wait_ms = 60000 }

local FIND = "SELECT id FROM t_account WHERE open_id = ?"
local INSERT = "INSERT INTO t_account (open_id, device) VALUES (?, ?)"

function bind(req)
  local lock = locks.consul("locks/" .. req.open_id,
                            { ttl_ms = params.ttl_ms, lock_delay_ms = params.lock_delay_ms, wait_ms = params.wait_ms })
  if not lock then return "lock_busy" end
  local c = db.connect()
  if #c:query(FIND, req.open_id) == 0 then
    work()
    c:exec(INSERT, req.open_id, req.device)
  end
  c:close()
  lock:release()
end
