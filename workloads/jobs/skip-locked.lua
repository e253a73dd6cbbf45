-- The job's row lock is the claim: held while the job runs, skipped by the other workers.
workload = "jobs"
description = "BEGIN, SELECT the first queued job FOR UPDATE SKIP LOCKED, run it, mark it done, COMMIT"
source = "MariaDB 10.6+, SELECT ... SKIP LOCKED"
risks = "none lost: a crashed worker's transaction rolls back and the job is queued again; a job whose effect happened before the crash runs again"

function handle(req)
  db.begin()
  local job = db.query("SELECT id FROM t_job WHERE status = 'queued' ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED")[1]
  if job then
    work()  -- the job itself
    effect("run", job.id)
    db.exec("UPDATE t_job SET status = 'done' WHERE id = ?", job.id)
  end
  db.commit()
end
