// The batch scheduler's designs (sources/002; see models/workloads/batch/batch.hpp): publish-then-mark,
// mark-then-publish and cas-mark-then-publish, each with the consumers' 2 -> 3 claim CAS
// (or without it), the last with or without a reaper.

#include "models/strategies/strategy.hpp"
#include "models/workloads/batch/batch.hpp"

namespace models::strategies {

namespace {
ParamInfo consumer_cas() { return {"consumer_cas", 1, "1: consumers claim with UPDATE status=3 WHERE id AND status=2", ParamKind::flag}; }
}  // namespace

Entry publish_then_mark() {
  return {{.name = "publish-then-mark",
           .description = "scheduler: SELECT pending; publish each task, then UPDATE status=2",
           .source = "sources/002 (why the mark must come before the publish)",
           .risks = "a consumer takes the task before the mark lands: its claim fails and the task is never run; two schedulers enqueue twice",
           .params = {consumer_cas()}},
          {},
          [](const Params& p) { return batch::Design{batch::Enqueue::publish_then_mark, p.at("consumer_cas") != 0, false}; },
          "batch-scheduler"};
}

Entry mark_then_publish() {
  return {{.name = "mark-then-publish",
           .description = "scheduler: SELECT pending; UPDATE status=2 WHERE id, then publish",
           .source = "sources/002 (two batch servers read the same pending tasks and enqueue them twice)",
           .risks = "double enqueue by two schedulers; a late mark turns a running task back to queued, so it runs twice",
           .params = {consumer_cas()}},
          {},
          [](const Params& p) { return batch::Design{batch::Enqueue::mark_then_publish, p.at("consumer_cas") != 0, false}; },
          "batch-scheduler"};
}

Entry cas_mark_then_publish() {
  return {{.name = "cas-mark-then-publish",
           .description = "scheduler: UPDATE status=2 WHERE id AND status=1, publish only if it took; optional reaper",
           .source = "sources/002 (status CAS; a crash after the mark strands the task: pair it with a timeout retry)",
           .risks = "a crash between the mark and the publish strands the task unless a reaper requeues it; the reaper can enqueue twice",
           .params = {consumer_cas(), {"reaper", 0, "1: tasks queued longer than reap_after go back to pending", ParamKind::flag}}},
          {},
          [](const Params& p) {
            return batch::Design{batch::Enqueue::cas_mark_then_publish, p.at("consumer_cas") != 0, p.at("reaper") != 0};
          },
          "batch-scheduler"};
}

}  // namespace models::strategies
