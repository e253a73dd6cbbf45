#include "bench/world_bench.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "models/world.hpp"

namespace bench {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;  // bench/ measures the host; sim/ never does

// A service that takes a lognormal time per request, like a handler doing one query.
class ServiceTime : public models::Handler {
 public:
  models::Response handle(const models::Request&, models::Worker& w) override {
    sim::sleep_for(service_.sample_duration(w.stream));
    return {};
  }

 private:
  sim::Distribution service_ = sim::lognormal_median(2ms, 0.5);
};

}  // namespace

WorldFigures world_bench(int repeats) {
  std::vector<double> events_per_s, ops_per_s;
  double events = 0;
  for (int r = 0; r < repeats; ++r) {
    ServiceTime handler;
    models::WorldConfig c;
    c.engine.seed = static_cast<std::uint64_t>(r + 1);
    c.engine.guard_pages = false;
    c.app_servers = 4;
    c.server.workers = 8;
    c.client_link = {sim::uniform(1ms, 5ms), 0.001};
    c.clients.clients = 100;
    c.clients.operations_per_client = 100;
    c.clients.arrival = {models::ArrivalKind::poisson, 0ms, 0ms, 20ms};
    c.clients.retry.attempt_timeout = 200ms;
    c.clients.retry.backoff = {10ms, 1s, models::Jitter::full};
    models::World world(c, handler);
    world.start();
    const auto start = Clock::now();
    const auto result = world.run();
    const double s = std::chrono::duration<double>(Clock::now() - start).count();
    if (result.status != sim::RunStatus::completed) std::fprintf(stderr, "world bench: %s\n", result.liveness_report().c_str());
    events = static_cast<double>(result.events);
    events_per_s.push_back(static_cast<double>(result.events) / s);
    ops_per_s.push_back(static_cast<double>(world.clients().records().size()) / s);
  }
  std::sort(events_per_s.begin(), events_per_s.end());
  std::sort(ops_per_s.begin(), ops_per_s.end());
  return {events_per_s[events_per_s.size() / 2], ops_per_s[ops_per_s.size() / 2], events};
}

}  // namespace bench
