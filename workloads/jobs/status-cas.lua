-- Claim by compare-and-set on the status, then run outside any transaction.
workload = "jobs"
description = "SELECT a queued job; UPDATE status = 'running' WHERE id = ? AND status = 'queued'; run it; mark it done"
source = "the status-column queue of many services"
risks = "a worker that crashes after its claim leaves the job 'running' for good: lost, unless something reaps it"

function handle(req)
  local job = db.query("SELECT id FROM t_job WHERE status = 'queued' ORDER BY id LIMIT 1")[1]
  if not job then return end
  if db.exec("UPDATE t_job SET status = 'running', owner = ? WHERE id = ? AND status = 'queued'", req.op, job.id) == 0 then
    return  -- another worker claimed it first
  end
  work()  -- the job itself
  effect("run", job.id)
  db.exec("UPDATE t_job SET status = 'done' WHERE id = ?", job.id)
end
