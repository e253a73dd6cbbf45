// Engine benchmarks: the engine against a plain callback event loop over the same
// queue doing the same work, in the same process; and memory per live process.
// Prints each figure as `name: value`.

#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <optional>
#include <string>
#include <functional>
#include <memory>
#include <vector>

#include "bench/cluster_bench.hpp"
#include "bench/explore_bench.hpp"
#include "bench/figures.hpp"
#include "bench/peers.hpp"
#include "bench/scaling_bench.hpp"
#include "bench/scan_bench.hpp"
#include "bench/sql_bench.hpp"
#include "bench/scenario_bench.hpp"
#include "bench/script_bench.hpp"
#include "bench/workbench_bench.hpp"
#include "bench/world_bench.hpp"
#include "sim/sim.hpp"

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;  // bench/ measures the host; sim/ never does

constexpr int kRepeats = 5;
// account-bind trials per strategy in the MPI figures: about 8 s of trials on one thread, so
// that mpirun's own start (about half a second) weighs little.
constexpr int kClusterTrials = 200;
// `locksim run account-bind --trials N`, timed at --jobs 1 and 2: long enough that the trials, not
// the start and the report, are most of the command.
constexpr int kScalingTrials = 100;
constexpr int kSeededRows = 1'000'000;  // legacy keys the per-row memory figures load

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The baseline: a plain callback event loop over the engine's queue. An event is a
// callback (sim::Callback, the engine's own, which keeps a small closure inline: no
// allocation); running it may schedule more. Nothing else: no processes, nodes, ties
// or budgets. What the engine does beyond this is its overhead.
class CallbackLoop {
 public:
  std::int64_t now() const { return now_; }
  void at(std::int64_t t, sim::Callback fn) {
    std::uint64_t slot;
    if (free_.empty()) {
      slot = callbacks_.size();
      callbacks_.push_back(std::move(fn));
    } else {
      slot = free_.back();
      free_.pop_back();
      callbacks_[slot] = std::move(fn);
    }
    queue_.push(t, slot, 0);
  }
  void run() {
    while (!queue_.empty()) {
      const sim::Event e = queue_.pop();
      now_ = e.at;
      sim::Callback fn = std::move(callbacks_[e.a]);
      free_.push_back(static_cast<std::uint32_t>(e.a));
      fn();
    }
  }

 private:
  sim::EventQueue queue_;
  std::vector<sim::Callback> callbacks_;
  std::vector<std::uint32_t> free_;
  std::int64_t now_ = 0;
};

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

// A sleeper of the baseline loops: its stream (named as the engine's process names it) and
// the sleeps it has left.
struct Sleeper {
  sim::Stream stream;
  int left = kSleeps;
};

std::vector<Sleeper> make_sleepers(sim::ChoiceSource& choices) {
  std::vector<Sleeper> sleepers;
  for (int p = 0; p < kSleepers; ++p) sleepers.push_back(Sleeper{choices.stream("sleeper-" + std::to_string(p))});
  return sleepers;
}

double sleep_callback() {
  sim::ChoiceSource choices(1);
  std::vector<Sleeper> sleepers = make_sleepers(choices);
  CallbackLoop loop;
  std::uint64_t events = 0;
  struct Wake {  // a sleeper's wake-up: count it, draw the next sleep, schedule itself again
    CallbackLoop* loop;
    Sleeper* sleeper;
    std::uint64_t* events;
    void operator()() const {
      if (sleeper->left-- == 0) return;
      ++*events;
      loop->at(loop->now() + kSleep.sample_duration(sleeper->stream).count(), *this);
    }
  };
  for (Sleeper& s : sleepers) loop.at(0, Wake{&loop, &s, &events});
  const auto start = Clock::now();
  loop.run();
  return static_cast<double>(events) / seconds_since(start);
}

// The same work as a switch over two kinds of events with no callbacks: a loop written
// for this one workload, faster than any general loop. Printed for comparison.
double sleep_switch_loop() {
  sim::ChoiceSource choices(1);
  std::vector<Sleeper> sleepers = make_sleepers(choices);
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
    while (const auto call = requests.get_unless_killed()) {  // a server loop, as the models write it
      sim::Mailbox<int>* box = replies[static_cast<std::size_t>(call->client)].get();
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

// The RPC workload as deliveries that schedule one another, with no processes: a client's
// request reaches the server, whose reply reaches the client, who sends its next request.
// `deliver(delay, to_server, fn)` schedules a delivery: on the callback loop or the engine.
template <class Deliver>
struct RpcDeliveries {
  Deliver deliver;
  std::vector<sim::Stream>& client_streams;
  sim::Stream& server_stream;
  std::vector<int> calls_left = std::vector<int>(kClients, kCalls);
  std::uint64_t messages = 0;

  // A client sends its next request, if it has one left.
  void send(std::size_t c) {
    if (calls_left[c] == 0) return;
    --calls_left[c];
    deliver(kLink.sample_duration(client_streams[c]), true, [this, c] { at_server(c); });
  }
  // The request arrives; the server replies at once.
  void at_server(std::size_t c) {
    ++messages;
    deliver(kLink.sample_duration(server_stream), false, [this, c] { at_client(c); });
  }
  // The reply arrives; the client sends its next request.
  void at_client(std::size_t c) {
    ++messages;
    send(c);
  }
  void start() {
    for (std::size_t c = 0; c < kClients; ++c) send(c);
  }
};

double rpc_callback() {
  sim::ChoiceSource choices(1);
  std::vector<sim::Stream> client_streams;
  for (int c = 0; c < kClients; ++c) client_streams.push_back(choices.stream("client-" + std::to_string(c)));
  sim::Stream server_stream = choices.stream("server");
  CallbackLoop loop;
  // The closure becomes a Callback in the call to at(), as if written there.
  auto deliver = [&loop](sim::Duration delay, bool, auto&& fn) {
    loop.at(loop.now() + delay.count(), std::forward<decltype(fn)>(fn));
  };
  RpcDeliveries<decltype(deliver)> world{deliver, client_streams, server_stream};
  world.start();
  const auto start = Clock::now();
  loop.run();
  return static_cast<double>(world.messages) / seconds_since(start);
}

// The same work on the engine with deliveries only, no processes, as on the callback loop:
// what the engine costs beyond the loop without its processes. Printed for comparison.
double rpc_engine_callbacks() {
  sim::Engine engine(bulk_config(1));
  const auto server = engine.add_node("server");
  const auto clients = engine.add_node("clients");
  std::vector<sim::Stream> client_streams;
  for (int c = 0; c < kClients; ++c) client_streams.push_back(engine.stream("client-" + std::to_string(c)));
  sim::Stream server_stream = engine.stream("server");
  auto deliver = [&engine, server, clients](sim::Duration delay, bool to_server, auto&& fn) {
    engine.after(delay, to_server ? server : clients, std::forward<decltype(fn)>(fn));
  };
  RpcDeliveries<decltype(deliver)> world{deliver, client_streams, server_stream};
  world.start();
  const auto start = Clock::now();
  engine.run();
  return static_cast<double>(world.messages) / seconds_since(start);
}

// The same work as a switch over two kinds of events with no callbacks. Printed for comparison.
double rpc_switch_loop() {
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

// Starts `processes` client processes that then wait (a sleep of an hour) and runs until all
// wait. They arrive 1000 per simulated microsecond, as clients arrive over time: simultaneous
// events are ordered by picking among them, which costs time linear in their number, so a
// million arrivals at one instant would measure that pick rather than memory.
void start_waiting_clients(sim::Engine& engine, int processes) {
  engine.spawn(sim::kWorld, "arrivals", [&engine, processes] {
    for (int p = 0; p < processes; ++p) {
      if (p % 1000 == 999) sim::sleep_for(1us);
      engine.spawn(sim::kWorld, "client", [] { sim::sleep_for(1h); }, sim::SpawnOptions{.background = true});
    }
    sim::sleep_for(1us);  // the last clients start before the run ends
  });
  engine.run();  // ends with every client started and waiting: their wake-ups keep no run alive
}

double bytes_per_process(int processes) {
  sim::Engine engine(bulk_config(1));
  const long before = resident_bytes();
  start_waiting_clients(engine, processes);
  const long after = resident_bytes();
  return static_cast<double>(after - before) / processes;
}

// Resident bytes of this process with `processes` live client processes, each started and waiting.
double resident_with(int processes) {
  sim::Engine engine(bulk_config(1));
  start_waiting_clients(engine, processes);
  return static_cast<double>(resident_bytes());
}

// Runs `measure` in a child process and returns its result: the memory figures leave a heap
// and a stack cache of gigabytes behind, which would make every later figure measure a
// process in a state no user run is in (--jobs 2 measured 1.73x after them, 1.95x without).
std::optional<double> in_child(const std::function<double()>& measure) {
  int fds[2];
  if (::pipe(fds) != 0) return std::nullopt;
  const pid_t pid = ::fork();
  if (pid < 0) return std::nullopt;
  if (pid == 0) {
    ::close(fds[0]);
    const double value = measure();
    const bool written = ::write(fds[1], &value, sizeof value) == static_cast<ssize_t>(sizeof value);
    ::_exit(written ? 0 : 1);
  }
  ::close(fds[1]);
  double value = 0;
  const bool read_all = ::read(fds[0], &value, sizeof value) == static_cast<ssize_t>(sizeof value);
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!read_all || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::nullopt;
  return value;
}

std::string machine() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line, model = "unknown CPU";
  while (std::getline(cpuinfo, line))
    if (line.rfind("model name", 0) == 0) {
      model = line.substr(line.find(':') + 2);
      break;
    }
  return fmt::format("{}, {} cores online", model, ::sysconf(_SC_NPROCESSORS_ONLN));
}

// `locksim_bench engine [sleep|rpc]`: only the engine against its baseline, for profiling.
int engine_only(const std::string& workload) {
  const bool sleep = workload != "rpc", rpc = workload != "sleep";
  std::vector<double> se, sc, ss, re, rc, rs, rb;
  for (int i = 0; i < kRepeats; ++i) {
    if (sleep) sc.push_back(sleep_callback());
    if (sleep) ss.push_back(sleep_switch_loop());
    if (sleep) se.push_back(sleep_engine(sim::TraceMode::off));
    if (rpc) rc.push_back(rpc_callback());
    if (rpc) rs.push_back(rpc_switch_loop());
    if (rpc) rb.push_back(rpc_engine_callbacks());
    if (rpc) re.push_back(rpc_engine());
  }
  if (sleep) fmt::print("sleep.switch_loop_events_per_s: {:.0f}\n", median(ss));
  if (rpc) fmt::print("rpc.switch_loop_events_per_s: {:.0f}\n", median(rs));
  if (rpc) fmt::print("rpc.engine_callbacks_events_per_s: {:.0f}\n", median(rb));
  if (sleep)
    fmt::print("sleep.engine_events_per_s: {:.0f}\nsleep.callback_events_per_s: {:.0f}\nsleep.ratio: {:.3f}\n",
               median(se), median(sc), median(se) / median(sc));
  if (rpc)
    fmt::print("rpc.engine_events_per_s: {:.0f}\nrpc.callback_events_per_s: {:.0f}\nrpc.ratio: {:.3f}\n", median(re),
               median(rc), median(re) / median(rc));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() == 1 && args[0] == "engine") return engine_only("both");
  if (args.size() == 2 && args[0] == "engine" && (args[1] == "sleep" || args[1] == "rpc")) return engine_only(args[1]);
  if (args.size() == 1 && args[0] == "memory") {
    // The rows first, each in a child of a process that has held nothing yet: a heap the
    // figures below leave behind would be reused, and counted as resident already.
    const auto resident = in_child([] { return bench::bytes_per_seeded_row(kSeededRows).resident; });
    const auto counted = in_child([] { return bench::bytes_per_seeded_row(kSeededRows).counted; });
    fmt::print("db.bytes_per_seeded_row: {:.0f}\ndb.bytes_held_per_seeded_row: {:.0f}\n", resident.value_or(-1), counted.value_or(-1));
    fmt::print("memory.bytes_per_process: {:.0f}\n", bytes_per_process(100'000));
    fmt::print("memory.million_processes_rss_bytes: {:.0f}\n", resident_with(1'000'000));
    return 0;
  }
  if (args.size() == 1 && args[0] == "scenario") {
    const bench::ScenarioFigures f = bench::scenario_bench(100);
    fmt::print("scenario.account_bind.trials_per_s: {:.1f}\n", f.trials_per_s_1);
    const bench::EngineFigures e = bench::engine_bench(50, 3);
    fmt::print("engines.mariadb_trials_per_s: {:.1f}\nengines.postgresql_trials_per_s: {:.1f}\nengines.postgresql_over_mariadb: {:.3f}\n",
               e.mariadb_trials_per_s, e.postgresql_trials_per_s, e.postgresql_trials_per_s / e.mariadb_trials_per_s);
    return 0;
  }
  if (args.size() == 1 && args[0] == "scaling") {
    const bench::ScalingFigures f = bench::scaling_bench(kScalingTrials, 3);
    const auto show = [](const std::optional<double>& v) { return v ? fmt::format("{:.3f}", *v) : std::string("failed"); };
    fmt::print("jobs.run_s: {} / {}\njobs.speedup_2_vs_1: {}\n", show(f.run.first_s), show(f.run.second_s), show(f.run.speedup()));
    fmt::print("explore.dfs_s: {} / {}\nexplore.dfs_speedup_all_cores: {} ({} cores)\n", show(f.explore.first_s),
               show(f.explore.second_s), show(f.explore.speedup()), f.cores);
    return 0;
  }
  if (args.size() == 1 && args[0] == "scan") {
    const bench::ScanFigures f = bench::scan_bench(3);
    const auto show = [](const std::optional<double>& v) { return v ? fmt::format("{:.3f}", *v) : std::string("failed"); };
    fmt::print("db.delete_10k_rows_s: {}\ndb.delete_100k_rows_s: {}\n", show(f.delete_10k_s), show(f.delete_100k_s));
    return 0;
  }
  if (args.size() == 1 && args[0] == "sql") {
    const bench::SqlFigures f = bench::sql_bench(3);
    fmt::print("sql.mixed_statements_per_s: {:.0f}\nsql.point_statements_per_s: {:.0f}\nsql.prepares_per_s: {:.0f}\n",
               f.mixed_statements_per_s, f.point_statements_per_s, f.prepares_per_s);
    fmt::print("sql.pg_point_prepares_per_s: {:.0f}\nsql.mysql_point_prepares_per_s: {:.0f}\nsql.pg_parse_us: {:.2f}\n",
               f.pg_point_prepares_per_s, f.mysql_point_prepares_per_s, 1e6 / f.pg_point_prepares_per_s);
    return 0;
  }
  if (args.size() == 1 && args[0] == "scripts") {
    const bench::ScriptFigures f = bench::script_bench(100, 3);
    for (const auto& t : f.twins)
      fmt::print("scripts.{}.cpp_trials_per_s: {:.1f}\nscripts.{}.lua_trials_per_s: {:.1f}\nscripts.{}.lua_over_cpp: {:.3f}\n", t.strategy,
                 t.cpp_trials_per_s, t.strategy, t.lua_trials_per_s, t.strategy, t.lua_trials_per_s / t.cpp_trials_per_s);
    fmt::print("scripts.state_bytes: {:.0f}\nscripts.first_trial_ms: {:.2f}\n", f.state_bytes, f.first_trial_ms);
    fmt::print("workloads.builtin_cpp_trials_per_s: {:.1f}\nworkloads.builtin_lua_trials_per_s: {:.1f}\nworkloads.lua_trials_per_s: {:.1f}\n"
               "workloads.lua_over_builtin: {:.3f}\n",
               f.workload.builtin_cpp_trials_per_s, f.workload.builtin_lua_trials_per_s, f.workload.workload_trials_per_s,
               f.workload.workload_trials_per_s / f.workload.builtin_lua_trials_per_s);
    return 0;
  }
  if (args.size() == 1 && args[0] == "explore") {
    const bench::ExploreFigures f = bench::explore_bench();
    fmt::print("explore.dfs_runs_per_s: {:.1f}\nexplore.dfs_reduced_runs_per_s: {:.1f}\n", f.dfs_runs_per_s, f.dfs_reduced_runs_per_s);
    fmt::print("explore.dfs_branched_runs_per_s: {:.1f} (a save or restore {:.2f} us, {:.0f} KB a save, arena {:.0f} KB)\n",
               f.dfs_branched_runs_per_s, f.save_restore_us, f.saved_kb, f.arena_kb);
    fmt::print("explore.fencing_bound2_s: {:.2f} from time zero, {:.2f} branched\n", f.fencing_from_zero_s, f.fencing_branched_s);
    fmt::print("explore.fork_us: {:.1f} ({:.0f} MB resident), a dfs run {:.1f} us\n", f.fork_us, f.resident_mb, 1e6 / f.dfs_runs_per_s);
    for (const auto& s : f.schedules)
      fmt::print("explore.schedules_bound2 on {}, {}: {:.0f} plain, {:.0f} reduced, {:.0f} classes\n", s.scenario, s.strategy, s.plain,
                 s.reduced, s.classes);
    for (const auto& s : f.swarm_vs_random)
      fmt::print("explore.first_finding_runs.{}: random {:.0f}, swarm {:.0f}\n", s.scenario, s.random, s.swarm);
    return 0;
  }
  if (args.size() == 1 && args[0] == "cluster") {
    const bench::ClusterFigures f = bench::cluster_bench(kClusterTrials, 3);
    if (!f.one_process_s || !f.two_ranks_s) {
      std::fprintf(stderr, "cluster: %s\n", f.why_missing.c_str());
      return 1;
    }
    fmt::print("mpi.one_process_s: {:.2f}\nmpi.two_ranks_s: {:.2f}\nmpi.speedup_2_ranks_vs_1: {:.3f}\n", *f.one_process_s,
               *f.two_ranks_s, *f.one_process_s / *f.two_ranks_s);
    if (f.one_process_fixed_s && f.two_ranks_fixed_s)
      fmt::print("mpi.fixed_s: {:.2f} / {:.2f}\nmpi.trials_speedup_2_ranks_vs_1: {:.3f}\n", *f.one_process_fixed_s, *f.two_ranks_fixed_s,
                 (*f.one_process_s - *f.one_process_fixed_s) / (*f.two_ranks_s - *f.two_ranks_fixed_s));
    return 0;
  }
  if (!args.empty()) {
    std::fprintf(stderr, "usage: locksim_bench [engine [sleep|rpc] | memory | scenario | scaling | scan | scripts | explore | cluster]\n");
    return 2;
  }
  // First, while the heap is small and no stack block is cached yet, each in a child of its
  // own: memory per process, then a million live processes.
  const std::optional<double> mem = in_child([] { return bytes_per_process(100'000); });
  const std::optional<double> million_rss = in_child([] { return resident_with(1'000'000); });
  const std::optional<double> row_bytes = in_child([] { return bench::bytes_per_seeded_row(kSeededRows).resident; });
  const std::optional<double> row_bytes_held = in_child([] { return bench::bytes_per_seeded_row(kSeededRows).counted; });

  // Interleave engine and baseline runs so drift in the machine's speed hits both alike.
  std::vector<double> se, sc, ss, seh, re, rc, rs, rb;
  for (int i = 0; i < kRepeats; ++i) {
    sc.push_back(sleep_callback());
    ss.push_back(sleep_switch_loop());
    se.push_back(sleep_engine(sim::TraceMode::off));
    seh.push_back(sleep_engine(sim::TraceMode::hash));
    rc.push_back(rpc_callback());
    rs.push_back(rpc_switch_loop());
    rb.push_back(rpc_engine_callbacks());
    re.push_back(rpc_engine());
  }
  const double sleep_e = median(se), sleep_c = median(sc), sleep_s = median(ss), sleep_h = median(seh);
  const double rpc_e = median(re), rpc_c = median(rc), rpc_s = median(rs), rpc_b = median(rb);
  const bench::PeerFigures peers = bench::peers_bench();
  const double rpc_after = rpc_engine();  // locksim again, right after the peers: the same conditions
  const double rpc_locksim = std::min(rpc_e, rpc_after);
  const bench::WorldFigures world = bench::world_bench(kRepeats);
  const bench::ScenarioFigures scenario = bench::scenario_bench(100);
  const bench::EngineFigures engines = bench::engine_bench(50, 3);
  const bench::ExploreFigures explore = bench::explore_bench();
  const bench::ScalingFigures scaling = bench::scaling_bench(kScalingTrials, 3);
  const bench::ScanFigures scan = bench::scan_bench(3);
  const bench::SqlFigures sql = bench::sql_bench(3);
  const bench::ScriptFigures scripts = bench::script_bench(100, 3);
  const bench::ClusterFigures cluster = bench::cluster_bench(kClusterTrials, 3);
  const std::optional<double> mpi_speedup =
      cluster.one_process_s && cluster.two_ranks_s ? std::optional<double>(*cluster.one_process_s / *cluster.two_ranks_s) : std::nullopt;
  const std::optional<double> mpi_trials_speedup =
      mpi_speedup && cluster.one_process_fixed_s && cluster.two_ranks_fixed_s
          ? std::optional<double>((*cluster.one_process_s - *cluster.one_process_fixed_s) / (*cluster.two_ranks_s - *cluster.two_ranks_fixed_s))
          : std::nullopt;

  auto peer = [&](const bench::Peer& p) { return p.present ? std::optional<double>(p.msgs_per_s) : std::nullopt; };
  auto ratio = [&](const bench::Peer& p) {
    return p.present ? std::optional<double>(rpc_locksim / p.msgs_per_s) : std::nullopt;
  };
  using bench::figure;
  std::vector<bench::Figure> figures = {
      figure("sleep.engine_events_per_s", "(a) 1000 processes x 10,000 random sleeps: engine, events/s", sleep_e),
      figure("sleep.callback_events_per_s", "(a) the same on a callback loop over the same queue, events/s", sleep_c),
      figure("sleep.ratio", "(a) engine / callback loop", sleep_e / sleep_c, ">=", 0.75),
      figure("sleep.switch_loop_events_per_s", "(a) the same as one switch over the events, no callbacks, events/s",
             sleep_s),
      figure("sleep.engine_hashed_events_per_s", "(a) engine keeping the trace hash, events/s", sleep_h),
      figure("rpc.engine_events_per_s", "(b) 100 clients -> 1 server RPC, uniform 1-100 us links: engine, messages/s", rpc_e),
      figure("rpc.callback_events_per_s", "(b) the same on a callback loop, messages/s", rpc_c),
      figure("rpc.ratio", "(b) engine / callback loop", rpc_e / rpc_c, ">=", 0.70),
      figure("rpc.switch_loop_events_per_s", "(b) the same as one switch over the events, no callbacks, messages/s",
             rpc_s),
      figure("rpc.engine_callbacks_events_per_s", "(b) the same on the engine as deliveries only, no processes, messages/s",
             rpc_b),
      figure("memory.bytes_per_process", "resident bytes per live process, at 100,000", mem, "<=", 12 * 1024,
             "the measuring child process failed"),
      figure("memory.million_processes_rss_bytes", "resident bytes of the process with 1,000,000 live processes",
             million_rss, "<=", 12.0 * 1024 * 1024 * 1024, "the measuring child process failed"),
      figure("peers.rpc.locksim_msgs_per_s", "RPC workload in locksim, messages/s (the lower of two runs)", rpc_locksim),
      figure("peers.rpc.simgrid_msgs_per_s", "RPC workload in SimGrid (s4u actors sleeping the delays), messages/s",
             peer(peers.simgrid), nullptr, 0, peers.simgrid.why_missing),
      figure("peers.rpc.simpy_msgs_per_s", "RPC workload in SimPy 2, messages/s", peer(peers.simpy), nullptr, 0,
             peers.simpy.why_missing),
      figure("peers.rpc.vs_simgrid", "locksim / SimGrid", ratio(peers.simgrid), ">=", 40, peers.simgrid.why_missing),
      figure("peers.rpc.vs_simpy", "locksim / SimPy", ratio(peers.simpy), ">=", 40, peers.simpy.why_missing),
      figure("world.events_per_s", fmt::format("world: 100 clients x 100 operations, 4 app nodes, events/s ({:.0f} a run)",
                                               world.events_per_run),
             world.events_per_s),
      figure("world.operations_per_s", "world: operations/s", world.operations_per_s),
      figure("scenario.account_bind.events_per_s_per_core", "account-bind, every strategy: simulated events/s, one thread",
             scenario.events_per_s_per_core, ">=", 1e6),
      figure("scenario.account_bind.trials_per_s", "account-bind: trials/s, --jobs 1", scenario.trials_per_s_1),
      figure("engines.mariadb_trials_per_s",
             "account-bind's database strategies under READ COMMITTED on the InnoDB engine: trials/s, one thread",
             engines.mariadb_trials_per_s),
      figure("engines.postgresql_trials_per_s", "the same on the PostgreSQL engine (measured alternately with the above)",
             engines.postgresql_trials_per_s),
      figure("engines.postgresql_over_mariadb", "PostgreSQL engine / InnoDB engine", engines.postgresql_trials_per_s / engines.mariadb_trials_per_s,
             ">=", 0.8),
      figure("jobs.run_s_1", fmt::format("`{}`, --jobs 1: wall s, whole command", scaling.run_command), scaling.run.first_s, nullptr, 0,
             "the command failed"),
      figure("jobs.run_s_2", "the same, --jobs 2", scaling.run.second_s, nullptr, 0, "the command failed"),
      figure("jobs.speedup_2_vs_1", "--jobs 1 / --jobs 2, whole commands (median of 3, alternating)", scaling.run.speedup(), ">=", 1.7,
             "the command failed"),
      figure("explore.dfs_runs_per_s",
             fmt::format("explore --mode dfs, two-clients-pause, SET NX EX, bound 3: runs/s, one thread ({:.0f} runs of "
                         "{:.0f} events)",
                         explore.dfs_runs, explore.dfs_events_per_run),
             explore.dfs_runs_per_s, ">=", 50'000),
      figure("explore.dfs_branched_runs_per_s",
             fmt::format("the same search, each run branched from its parent's run saved where it deviates: runs/s, one thread "
                         "(a save or a restore {:.2f} us on average, {:.0f} KB copied a save of an arena of {:.0f} KB at most)",
                         explore.save_restore_us, explore.saved_kb, explore.arena_kb),
             explore.dfs_branched_runs_per_s, ">=", 100'000),
      figure("explore.branched_over_from_zero", "branched / each from time zero, the two searches above",
             explore.dfs_branched_runs_per_s / explore.dfs_runs_per_s),
      figure("explore.fencing_bound2_from_zero_over_branched",
             fmt::format("fencing token exhausting bound 2 on two-clients-pause with the reduction (10,411 runs of about 370 events): "
                         "wall s from time zero ({:.2f}) / branched ({:.2f})",
                         explore.fencing_from_zero_s, explore.fencing_branched_s),
             explore.fencing_from_zero_s / explore.fencing_branched_s),
      figure("explore.dfs_reduced_runs_per_s", "the same with the reduction on (footprints kept, fewer runs): runs/s",
             explore.dfs_reduced_runs_per_s),
      figure("explore.fork_over_dfs_run",
             fmt::format("a fork() of the search's process ({:.0f} MB resident), its child's exit and the wait ({:.0f} us), over one "
                         "whole dfs run above ({:.1f} us): what a branch by fork costs in runs",
                         explore.resident_mb, explore.fork_us, 1e6 / explore.dfs_runs_per_s),
             explore.fork_us * explore.dfs_runs_per_s / 1e6),
      figure("explore.dfs_s_1", fmt::format("`{}`, --jobs 1: wall s, whole command", scaling.explore_command), scaling.explore.first_s,
             nullptr, 0, "the command failed"),
      figure("explore.dfs_s_all_cores", fmt::format("the same, --jobs {}", scaling.cores), scaling.explore.second_s, nullptr, 0,
             "the command failed"),
      figure("explore.dfs_speedup_all_cores",
             fmt::format("--jobs 1 / --jobs {}, whole commands (median of 3, alternating)", scaling.cores), scaling.explore.speedup(),
             nullptr, 0, "the command failed"),
      figure("db.bytes_per_seeded_row",
             "resident bytes a legacy row of t_account adds where the database stores it, over about a million (about 200)",
             row_bytes, "<=", 210, "the measuring child process failed"),
      figure("db.bytes_held_per_seeded_row", "the same as the memory budget counts it (Database::bytes_held)", row_bytes_held,
             nullptr, 0, "the measuring child process failed"),
      figure("db.delete_10k_rows_s", "`locksim run` of one transaction deleting 10,000 seeded rows: wall s, whole command", scan.delete_10k_s,
             nullptr, 0, "the command failed"),
      figure("db.delete_100k_rows_s", "the same over 100,000 rows (linear: about 10x the above, not 100x)", scan.delete_100k_s, "<", 5,
             "the command failed"),
      figure("sql.mixed_statements_per_s", "SQL with ranges, IN, computed updates, multi-row inserts, SKIP LOCKED: prepare + bind + execute, statements/s",
             sql.mixed_statements_per_s),
      figure("sql.point_statements_per_s", "the strategies' point statements, prepared anew each time: statements/s", sql.point_statements_per_s),
      figure("sql.prepares_per_s", "the mixed set parsed alone: statements/s", sql.prepares_per_s),
      figure("sql.pg_point_prepares_per_s", "the strategies' point statements in PostgreSQL's SQL, parsed by libpg_query: statements/s",
             sql.pg_point_prepares_per_s),
      figure("sql.mysql_point_prepares_per_s", "the same statements in MySQL's SQL, parsed by MariaDB's front end: statements/s",
             sql.mysql_point_prepares_per_s),
      figure("explore.first_gc_violation_s.random", "wall s from a cold start to the GC-pause violation, --mode random",
             explore.first_gc_violation_random_s, "<", 1, "the search did not find it"),
      figure("explore.first_gc_violation_s.pct", "the same, --mode pct", explore.first_gc_violation_pct_s, "<", 1,
             "the search did not find it"),
      figure("mpi.one_process_s",
             fmt::format("`locksim run account-bind --trials {} --jobs 1`, one process: wall s, whole command", kClusterTrials),
             cluster.one_process_s, nullptr, 0, cluster.why_missing),
      figure("mpi.two_ranks_s", "the same as two ranks of one thread, `mpirun -n 2`: wall s", cluster.two_ranks_s, nullptr, 0,
             cluster.why_missing),
      figure("mpi.speedup_2_ranks_vs_1", "one process / two ranks, whole commands (median of 3, alternating)", mpi_speedup, nullptr, 0,
             cluster.why_missing),
      figure("mpi.trials_speedup_2_ranks_vs_1",
             "the same less each command's time with one trial a strategy (start, MPI set-up, report): the trials' speed-up",
             mpi_trials_speedup, ">=", 1.6, cluster.why_missing),
  };
  for (const auto& s : explore.swarm_vs_random) {
    figures.push_back(figure("explore.first_finding_runs." + s.scenario + ".random",
                             "runs to the first finding (any checker) of its first strategy, --mode random; 0: none in 2,000", s.random));
    figures.push_back(figure("explore.first_finding_runs." + s.scenario + ".swarm", "the same, --mode swarm", s.swarm));
  }
  for (const auto& s : explore.schedules) {
    const std::string scenario = s.scenario;
    const std::string key =
        "explore.schedules_bound2." + (scenario == "two-clients-pause" ? std::string() : scenario + ".") + s.strategy;
    figures.push_back(figure(key + ".plain", fmt::format("dfs on {}, {}, bound 2, property duplicate_rows: schedules run, "
                                                         "--no-reduction", s.scenario, s.strategy),
                             s.plain));
    figures.push_back(figure(key + ".reduced", "the same with the reduction", s.reduced));
    figures.push_back(figure(key + ".classes",
                             "the classes of equivalent runs among them (--count-classes): the fewest runs a sound reduction "
                             "on the models' footprints could make",
                             s.classes));
  }
  for (const auto& t : scripts.twins) {
    figures.push_back(figure("scripts." + t.strategy + ".cpp_trials_per_s", "account-bind: " + t.strategy + " (C++), trials/s, one thread",
                             t.cpp_trials_per_s));
    figures.push_back(figure("scripts." + t.strategy + ".lua_trials_per_s", "the same, its Lua twin, trials/s", t.lua_trials_per_s));
    figures.push_back(figure("scripts." + t.strategy + ".lua_over_cpp", "Lua twin / C++ original (median of 3, alternating)",
                             t.lua_trials_per_s / t.cpp_trials_per_s, ">=", 0.7));
  }
  figures.push_back(figure("workloads.builtin_cpp_trials_per_s", "account-bind: select-for-update (C++), trials/s, one thread",
                           scripts.workload.builtin_cpp_trials_per_s));
  figures.push_back(figure("workloads.builtin_lua_trials_per_s", "account-bind: select-for-update.lua (bind), trials/s",
                           scripts.workload.builtin_lua_trials_per_s));
  figures.push_back(figure("workloads.lua_trials_per_s", "the same operation as a Lua workload (bench/workloads/bind-openid.lua), trials/s",
                           scripts.workload.workload_trials_per_s));
  figures.push_back(figure("workloads.lua_over_builtin", "Lua workload / built-in workload, the same Lua strategy (median of 3, alternating)",
                           scripts.workload.workload_trials_per_s / scripts.workload.builtin_lua_trials_per_s, ">=", 0.7));
  figures.push_back(figure("workloads.lua_over_cpp", "Lua workload and strategy / built-in workload and C++ strategy",
                           scripts.workload.workload_trials_per_s / scripts.workload.builtin_cpp_trials_per_s));
  figures.push_back(figure("scripts.state_bytes", "resident bytes per live script state (one trial's Lua state)", scripts.state_bytes));
  figures.push_back(figure("scripts.first_trial_ms", "a new script: parse, load and its first account-bind trial, ms",
                           scripts.first_trial_ms));
  const bench::WorkbenchFigures wb = bench::measure_workbench();
  figures.push_back(figure("workbench.first_page_s", "`locksim serve` started, its page fetched, stopped: whole command, s (median of 3)",
                           wb.first_page_s));
  figures.push_back(figure("workbench.start_s", "the workbench made: every catalogue scenario loaded once, s", wb.start_s));
  figures.push_back(figure("workbench.branch_ms_median",
                           fmt::format("a click at a choice point answered with the new trial: the median of {} catalogue scenarios, ms",
                                       wb.scenarios),
                           wb.branch_ms_median, "<=", 200));
  figures.push_back(figure("workbench.branch_ms_worst", "the same, the slowest scenario's (" + wb.worst + "), ms", wb.branch_ms_worst));
  figures.push_back(figure("workbench.branch_under_200_ms", "catalogue scenarios whose click is answered within 200 ms",
                           static_cast<double>(wb.under_200_ms)));
  figures.push_back(figure("workbench.page_bytes", "the page's weight, bytes (CodeMirror aside, Debian's copy)", wb.page_bytes));
  fmt::print("median of {} runs each for (a) and (b)\n\n", kRepeats);
  bench::report(figures, machine());
  return 0;
}
