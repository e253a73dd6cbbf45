#pragma once
// Handlers for tests: they take a service time and write down every request they handled.

#include <functional>
#include <string>
#include <vector>

#include "models/world.hpp"
#include "support.hpp"

namespace test {

struct Handled {
  std::uint64_t operation = 0;
  std::uint32_t attempt = 0;
  std::uint64_t key = 0;
  std::string server;
  int worker = 0;
  sim::Time start;
  sim::Time end;
};

/// Sleeps `service(request)` per request and logs it.
class RecordingHandler : public models::Handler {
 public:
  explicit RecordingHandler(std::function<sim::Duration(const models::Request&)> service) : service_(std::move(service)) {}
  explicit RecordingHandler(sim::Duration service)
      : service_([service](const models::Request&) { return service; }) {}

  models::Response handle(const models::Request& r, models::Worker& w) override {
    const sim::Time start = sim::now();
    sim::sleep_for(service_(r));
    log.push_back(Handled{r.operation, r.attempt, r.key, w.server.name(), w.index, start, sim::now()});
    return {};
  }

  std::vector<Handled> log;

 private:
  std::function<sim::Duration(const models::Request&)> service_;
};

/// A world config with fixed 1 ms links, so timelines in tests can be worked out by hand.
inline models::WorldConfig small_world(int servers = 1, int workers = 1) {
  models::WorldConfig c;
  c.engine = config();
  c.app_servers = servers;
  c.server.workers = workers;
  c.client_link = {sim::fixed(1ms), 0};
  c.internal_link = {sim::fixed(1ms), 0};
  c.clients.clients = 1;
  c.clients.retry.backoff = {0ms, 0ms, models::Jitter::none};
  return c;
}

}  // namespace test
