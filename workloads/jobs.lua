-- Claiming jobs: a queue of jobs in a table, and workers that each claim one, run it (an
-- external effect: an email sent, a file written) and mark it done. Each request is one
-- worker's poll. The invariant: each job runs exactly once, and none is left behind.
description = "claim a queued job, run it, mark it done: each job exactly once"
source = "MariaDB, SELECT ... SKIP LOCKED (job queues); Kleppmann 2016 (a lease shorter than the work)"

params = { jobs = 3 }

tables = {
  "CREATE TABLE t_job (id INT PRIMARY KEY, status VARCHAR(16), owner BIGINT)",
}

rows = { t_job = {} }
for id = 1, params.jobs do rows.t_job[id] = { id = id, status = "queued", owner = 0 } end

request = { worker = "client" }  -- a poll carries nothing but who polls

metrics = {
  { name = "jobs_run_twice", unit = "runs", meaning = "runs of a job beyond its first" },
  { name = "jobs_not_done", unit = "jobs", meaning = "jobs not done at the end: never run, or claimed and abandoned" },
  { name = "runs", unit = "runs", meaning = "job runs (the effect)", finding = false },
}

function check(final, history)
  local runs, total = {}, 0
  for _, e in ipairs(history.effects) do
    if e.name == "run" then
      runs[e.value] = (runs[e.value] or 0) + 1
      total = total + 1
    end
  end
  local twice, not_done = 0, 0
  for _, job in ipairs(final.tables.t_job) do
    twice = twice + math.max(0, (runs[job.id] or 0) - 1)
    if job.status ~= "done" then not_done = not_done + 1 end
  end
  return { jobs_run_twice = twice, jobs_not_done = not_done, runs = total }
end
