// Mobile clients bind an account at start-up; the server's few workers are saturated,
// requests wait in its queue, clients time out and retry, and the copies of one request
// are later handled concurrently by check-then-insert without a unique index
// (../shared/sources/003, section 2). Counts the duplicate rows that result.

#include "app/demo.hpp"

#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "sim/sim.hpp"

namespace locksim {
namespace {

using namespace std::chrono_literals;

struct Request {
  int key;
  sim::Promise<bool>* reply;  // owned by the client's attempt; outlives the trial's engine
};

struct Trial {
  explicit Trial(const DemoOptions& o, std::uint64_t seed) : options(o), engine(config(seed)) {}

  static sim::EngineConfig config(std::uint64_t seed) {
    sim::EngineConfig c;
    c.seed = seed;
    c.time_budget = 10min;
    return c;
  }

  void build() {
    server = engine.add_node("app-1");
    const auto latency = sim::uniform(1ms, 5ms);
    for (int w = 0; w < options.workers; ++w) {
      engine.spawn(server, "worker-" + std::to_string(w), [this, w, latency] {
        auto stream = engine.stream("worker-" + std::to_string(w));
        const auto query = sim::lognormal_median(40ms, 0.6);
        for (;;) {
          Request r = queue.get();
          ++handled;
          // SELECT ... WHERE key = ?; then INSERT if absent: two round trips to the database.
          sim::sleep_for(query.sample_duration(stream));
          const bool exists = rows[r.key] > 0;
          sim::sleep_for(query.sample_duration(stream));
          if (!exists) ++rows[r.key];
          sim::Promise<bool>* reply = r.reply;
          engine.after(latency.sample_duration(stream), sim::kWorld, [reply] {
            if (!reply->satisfied()) reply->set_value(true);
          });
        }
      }, sim::SpawnOptions{.daemon = true});
    }
    for (int c = 0; c < options.clients; ++c) {
      engine.spawn(sim::kWorld, "client-" + std::to_string(c), [this, c, latency] {
        auto stream = engine.stream("client-" + std::to_string(c));
        ++logical;
        for (int attempt = 0; attempt < 3; ++attempt) {
          auto& reply = replies.emplace_back(std::make_unique<sim::Promise<bool>>("reply"));
          auto answer = reply->get_future();
          engine.after(latency.sample_duration(stream), server, [this, c, p = reply.get()] { queue.put(Request{c, p}); });
          try {
            answer.get_for(300ms);
            return;
          } catch (const sim::Timeout&) {
            sim::sleep_for(50ms);  // back off, then retry the same logical operation
          }
        }
      });
    }
  }

  const DemoOptions& options;
  std::vector<std::unique_ptr<sim::Promise<bool>>> replies;
  sim::Mailbox<Request> queue{"app-1.accept-queue"};
  std::map<int, int> rows;  // key -> rows with that key
  long handled = 0;
  long logical = 0;
  sim::Engine engine;
  sim::NodeId server = 0;
};

}  // namespace

DemoResult run_demo(const DemoOptions& options) {
  DemoResult total;
  for (int t = 0; t < options.trials; ++t) {
    Trial trial(options, options.seed + static_cast<std::uint64_t>(t));
    trial.build();
    const auto result = trial.engine.run();
    long duplicates = 0;
    for (const auto& [key, count] : trial.rows) duplicates += count - 1;
    ++total.trials;
    total.trials_with_duplicates += duplicates > 0 ? 1 : 0;
    total.duplicate_rows += duplicates;
    total.requests_handled += trial.handled;
    total.logical_operations += trial.logical;
    total.events += result.events;
    if (t == 0) total.first_trace_hash = result.trace_hash;
  }
  return total;
}

}  // namespace locksim
