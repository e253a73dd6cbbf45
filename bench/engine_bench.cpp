// Engine benchmarks: the engine against a plain callback event loop over the same
// queue doing the same work, in the same process; and memory per live process.
// Prints each figure as `name: value`.

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <vector>

#include "bench/scenario_bench.hpp"
#include "bench/world_bench.hpp"
#include "sim/sim.hpp"

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;  // bench/ measures the host; sim/ never does

constexpr int kRepeats = 5;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

sim::EngineConfig bulk_config(std::uint64_t seed) {
  sim::EngineConfig c;
  c.seed = seed;
  c.trace = sim::TraceMode::off;
  c.guard_pages = false;
  return c;
}

// --- (a) 1000 processes x 10,000 random sleeps ------------------------------

constexpr int kSleepers = 1000;
constexpr int kSleeps = 10'000;
const sim::Distribution kSleep = sim::uniform(1us, 1ms);

// Returns events per second.
double sleep_engine(sim::TraceMode trace) {
  auto c = bulk_config(1);
  c.trace = trace;
  sim::Engine engine(c);
  for (int p = 0; p < kSleepers; ++p) {
    engine.spawn(sim::kWorld, "sleeper", [&engine, p] {
      auto stream = engine.stream("sleeper-" + std::to_string(p));
      for (int i = 0; i < kSleeps; ++i) sim::sleep_for(kSleep.sample_duration(stream));
    });
  }
  const auto start = Clock::now();
  const auto result = engine.run();
  const double s = seconds_since(start);
  if (result.status != sim::RunStatus::completed) std::fprintf(stderr, "sleep bench: %s\n", result.liveness_report().c_str());
  return static_cast<double>(kSleepers) * kSleeps / s;
}

double sleep_callback() {
  sim::ChoiceSource choices(1);
  struct Sleeper {
    sim::Stream stream;
    int left = kSleeps;
  };
  std::vector<Sleeper> sleepers;
  for (int p = 0; p < kSleepers; ++p) sleepers.push_back(Sleeper{choices.stream("sleeper-" + std::to_string(p))});
  sim::EventQueue queue;
  for (int p = 0; p < kSleepers; ++p) queue.push(0, static_cast<std::uint64_t>(p), 0);
  std::uint64_t events = 0;
  const auto start = Clock::now();
  while (!queue.empty()) {
    const sim::Event e = queue.pop();
    Sleeper& s = sleepers[e.a];
    if (s.left-- == 0) continue;
    ++events;
    queue.push(e.at + kSleep.sample_duration(s.stream).count(), e.a, 0);
  }
  const double secs = seconds_since(start);
  return static_cast<double>(events) / secs;
}

// --- (b) 100 clients calling one server, links with uniform 1-100 us delays --

constexpr int kClients = 100;
constexpr int kCalls = 20'000;
const sim::Distribution kLink = sim::uniform(1us, 100us);

// Returns simulated messages (request or reply deliveries) per second.
double rpc_engine() {
  struct Call {
    int client;
  };
  std::vector<std::unique_ptr<sim::Mailbox<int>>> replies;
  for (int c = 0; c < kClients; ++c) replies.push_back(std::make_unique<sim::Mailbox<int>>("reply"));
  sim::Mailbox<Call> requests("server.inbox");
  std::uint64_t messages = 0;
  sim::Engine engine(bulk_config(1));
  const auto server = engine.add_node("server");
  const auto clients = engine.add_node("clients");
  engine.spawn(server, "server", [&] {
    auto stream = engine.stream("server");
    for (;;) {
      const Call call = requests.get();
      sim::Mailbox<int>* box = replies[static_cast<std::size_t>(call.client)].get();
      engine.after(kLink.sample_duration(stream), clients, [box, &messages] {
        ++messages;
        box->put(0);
      });
    }
  }, sim::SpawnOptions{.daemon = true});
  for (int c = 0; c < kClients; ++c) {
    engine.spawn(clients, "client", [&, c] {
      auto stream = engine.stream("client-" + std::to_string(c));
      for (int i = 0; i < kCalls; ++i) {
        engine.after(kLink.sample_duration(stream), server, [&requests, &messages, c] {
          ++messages;
          requests.put(Call{c});
        });
        replies[static_cast<std::size_t>(c)]->get();
      }
    });
  }
  const auto start = Clock::now();
  engine.run();
  return static_cast<double>(messages) / seconds_since(start);
}

double rpc_callback() {
  sim::ChoiceSource choices(1);
  std::vector<sim::Stream> client_streams;
  for (int c = 0; c < kClients; ++c) client_streams.push_back(choices.stream("client-" + std::to_string(c)));
  sim::Stream server_stream = choices.stream("server");
  std::vector<int> calls_left(kClients, kCalls);
  enum : std::uint64_t { to_server = 0, to_client = 1 };
  sim::EventQueue queue;
  for (int c = 0; c < kClients; ++c) {
    --calls_left[static_cast<std::size_t>(c)];
    queue.push(kLink.sample_duration(client_streams[static_cast<std::size_t>(c)]).count(), to_server, static_cast<std::uint64_t>(c));
  }
  std::uint64_t messages = 0;
  const auto start = Clock::now();
  while (!queue.empty()) {
    const sim::Event e = queue.pop();
    ++messages;
    const auto c = static_cast<std::size_t>(e.b);
    if (e.a == to_server) {
      queue.push(e.at + kLink.sample_duration(server_stream).count(), to_client, e.b);
    } else if (calls_left[c] > 0) {
      --calls_left[c];
      queue.push(e.at + kLink.sample_duration(client_streams[c]).count(), to_server, e.b);
    }
  }
  return static_cast<double>(messages) / seconds_since(start);
}

// --- memory per live process -------------------------------------------------

long resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  long size = 0, resident = 0;
  statm >> size >> resident;
  return resident * ::sysconf(_SC_PAGESIZE);
}

double bytes_per_process(int processes) {
  sim::Mailbox<int> never("never");
  sim::Engine engine(bulk_config(1));
  const long before = resident_bytes();
  for (int p = 0; p < processes; ++p)
    engine.spawn(sim::kWorld, "idle", [&never] { never.get(); }, sim::SpawnOptions{.daemon = true});
  engine.run();  // every process starts and blocks
  const long after = resident_bytes();
  return static_cast<double>(after - before) / processes;
}

template <class F>
double median_of(F&& f) {
  std::vector<double> v;
  for (int i = 0; i < kRepeats; ++i) v.push_back(f());
  return median(v);
}

}  // namespace

int main() {
  // Interleave engine and baseline runs so drift in the machine's speed hits both alike.
  std::vector<double> se, sc, seh, re, rc;
  for (int i = 0; i < kRepeats; ++i) {
    sc.push_back(sleep_callback());
    se.push_back(sleep_engine(sim::TraceMode::off));
    seh.push_back(sleep_engine(sim::TraceMode::hash));
    rc.push_back(rpc_callback());
    re.push_back(rpc_engine());
  }
  const double sleep_e = median(se), sleep_c = median(sc), sleep_h = median(seh);
  const double rpc_e = median(re), rpc_c = median(rc);
  const double mem = bytes_per_process(100'000);
  const bench::WorldFigures world = bench::world_bench(kRepeats);
  const bench::ScenarioFigures scenario = bench::scenario_bench(100);

  fmt::print("| workload | engine | callback loop | ratio |\n|---|---|---|---|\n");
  fmt::print("| (a) 1000 processes x 10,000 random sleeps, events/s | {:.3g} | {:.3g} | {:.2f} |\n", sleep_e, sleep_c,
             sleep_e / sleep_c);
  fmt::print("| (a) same, trace hash kept | {:.3g} | {:.3g} | {:.2f} |\n", sleep_h, sleep_c, sleep_h / sleep_c);
  fmt::print("| (b) 100 clients -> 1 server RPC, uniform 1-100 us links, messages/s | {:.3g} | {:.3g} | {:.2f} |\n",
             rpc_e, rpc_c, rpc_e / rpc_c);
  fmt::print("| world: 100 clients x 100 operations, 4 app nodes, events/s ({:.0f} events a run) | {:.3g} | | |\n",
             world.events_per_run, world.events_per_s);
  fmt::print("\nmedian of {} runs each; resident memory per live process measured at 100,000 processes\n\n", kRepeats);
  fmt::print("sleep.engine_events_per_s: {:.0f}\n", sleep_e);
  fmt::print("sleep.callback_events_per_s: {:.0f}\n", sleep_c);
  fmt::print("sleep.ratio: {:.3f}\n", sleep_e / sleep_c);
  fmt::print("sleep.engine_hashed_events_per_s: {:.0f}\n", sleep_h);
  fmt::print("rpc.engine_events_per_s: {:.0f}\n", rpc_e);
  fmt::print("rpc.callback_events_per_s: {:.0f}\n", rpc_c);
  fmt::print("rpc.ratio: {:.3f}\n", rpc_e / rpc_c);
  fmt::print("memory.bytes_per_process: {:.0f}\n", mem);
  fmt::print("world.events_per_s: {:.0f}\n", world.events_per_s);
  fmt::print("world.operations_per_s: {:.0f}\n", world.operations_per_s);
  fmt::print("scenario.account_bind.events_per_s_per_core: {:.0f}\n", scenario.events_per_s_per_core);
  fmt::print("scenario.account_bind.trials_per_s: {:.1f}\n", scenario.trials_per_s_1);
  fmt::print("jobs.trials_per_s_2: {:.1f}\n", scenario.trials_per_s_2);
  fmt::print("jobs.speedup_2_vs_1: {:.2f}\n", scenario.trials_per_s_2 / scenario.trials_per_s_1);
  return 0;
}
