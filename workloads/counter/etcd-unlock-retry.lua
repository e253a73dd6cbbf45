-- etcd's Mutex around the read-modify-write, on the worker's session, and an Unlock whose reply
-- was lost retried in the background until it gets one. Mutex.Unlock deletes the key by its
-- name, and the name is the prefix and the session's lease: if the same session locks again
-- before the retry lands, the retry deletes that newer lock, and another session walks in.
workload = "counter"
description = "etcd Mutex (the worker's session), SELECT v, work, UPDATE v = ?, Unlock; an Unlock without a reply retried every retry_ms"
source = "etcd-io/etcd#22082 (a stale Unlock retry deletes a newer same-session lock), #22115 (the fix: delete only while the create revision is ours)"
risks = "a retried Unlock deletes the next lock of the same session: two holders, a lost increment (if_owner: the retry deletes nothing)"

params = { wait_ms = 30000, retry_ms = 2000, if_owner = false }

function handle(req)
  local lock = locks.etcd("/locks/counter/" .. req.counter .. "/", {
    wait_ms = params.wait_ms,
    unlock = params.if_owner and "if_owner" or "by_name",
    unlock_retry_ms = params.retry_ms > 0 and params.retry_ms or nil,
  })
  if not lock then return "lock_busy" end
  local v = db.query("SELECT v FROM t_counter WHERE id = ?", req.counter)[1].v
  work()
  db.exec("UPDATE t_counter SET v = ? WHERE id = ?", v + 1, req.counter)
  lock:release()
end
