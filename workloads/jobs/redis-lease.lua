-- A Redis lock per job as its lease, taken without waiting, shorter than the job.
workload = "jobs"
description = "SELECT the queued jobs; take the first whose Redis lock (SET NX PX) is free; run it; mark it done; unlock"
source = "Kleppmann 2016, How to do distributed locking (a lease shorter than the work)"
risks = "a job that outlasts its lease is taken and run again by another worker"

params = { lease_ms = 2000 }

function handle(req)
  for _, job in ipairs(db.query("SELECT id FROM t_job WHERE status = 'queued' ORDER BY id")) do
    local lock = locks.redis("lock:job:" .. job.id, { ttl_ms = params.lease_ms, wait_ms = 0 })
    if lock then
      work()  -- the job itself
      effect("run", job.id)
      db.exec("UPDATE t_job SET status = 'done' WHERE id = ?", job.id)
      lock:release()
      return
    end
  end
end
