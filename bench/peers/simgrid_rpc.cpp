// The RPC benchmark of bench/engine_bench.cpp (rpc_engine) written for SimGrid's s4u API,
// so that locksim can be compared with SimGrid side by side (bench/peers.cpp runs this).
//
//   locksim_bench_simgrid [calls_per_client [seed]]     (SimGrid's own --cfg=/--log= flags are accepted too)
//
// 100 client actors and 1 server actor on one host. Each client makes its calls in sequence:
// the request travels to the server over a link with a delay drawn uniform in [1 us, 100 us],
// the server replies at once, the reply travels back with another uniform 1-100 us delay, and
// the client makes its next call when the reply has arrived. A message is one request or reply
// delivery; the program prints how many were simulated and how fast (wall time of Engine::run only):
//   messages: N
//   seconds: S
//   msgs_per_s: R
// and, as checks, the simulated time at the end and the largest simulated time a client spent
// beyond the sum of its link delays (0 when the mailboxes cost nothing, as intended).
//
// The like-for-like variant: links are sleeps, messages go through s4u Mailboxes.
//  * A link delay is a this_actor::sleep_for of the drawn delay, as locksim's engine_bench
//    spends it as a timed event. The client sleeps the request's delay before handing the
//    request to the server's mailbox; the server, which must not block on one call while other
//    calls wait, draws the reply's delay and hands it over with the reply; the client sleeps it
//    before the reply counts as delivered. The client's calls take exactly the same simulated
//    time as in locksim (request delay + reply delay), with two timed waits a call, as there.
//  * Communications cost nothing beyond the sleeps: the platform is one host (built in code,
//    no XML file), so every communication goes over the network model's loopback, whose
//    latency is 0 by default, and each payload is a pointer declared 0 bytes in size. Sends are
//    detached (put_init()->detach(): start and forget), as locksim's engine.after hands a
//    message to a mailbox without the sender waiting for it. The program measures that this
//    holds (comm_overhead_s) instead of assuming it.

#include <simgrid/s4u.hpp>
#include <simgrid/version.h>
#include <xbt/config.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace sg4 = simgrid::s4u;

namespace {

constexpr int kClients = 100;
constexpr long kDefaultCalls = 5'000;  // 1,000,000 messages: about 2.5 s of run at ~400k messages/s
constexpr double kMinDelay = 1e-6;      // seconds
constexpr double kMaxDelay = 100e-6;

struct Call {
  int client = 0;
  double reply_delay = 0;  // drawn by the server, slept by the client
};

struct World {
  long calls = 0;
  std::uint64_t seed = 1;
  std::uint64_t messages = 0;
  double worst_overhead = 0;  // simulated seconds a client spent beyond its link delays
  sg4::Mailbox* server_inbox = nullptr;
  std::vector<sg4::Mailbox*> reply_boxes;
  std::vector<Call> calls_in_flight;  // one a client: the payload of its request and its reply
};

std::mt19937_64 stream(std::uint64_t seed, std::uint64_t who) {
  std::seed_seq seq{seed, who};
  return std::mt19937_64(seq);
}

void server(World& w) {
  auto rng = stream(w.seed, kClients);
  std::uniform_real_distribution<double> link(kMinDelay, kMaxDelay);
  for (;;) {
    auto* call = w.server_inbox->get<Call>();
    ++w.messages;  // the request is delivered
    call->reply_delay = link(rng);
    w.reply_boxes[static_cast<std::size_t>(call->client)]->put_init(call, 0)->detach();
  }
}

void client(World& w, int c) {
  auto rng = stream(w.seed, static_cast<std::uint64_t>(c));
  std::uniform_real_distribution<double> link(kMinDelay, kMaxDelay);
  Call* mine = &w.calls_in_flight[static_cast<std::size_t>(c)];
  sg4::Mailbox* replies = w.reply_boxes[static_cast<std::size_t>(c)];
  double on_links = 0;
  for (long i = 0; i < w.calls; ++i) {
    const double request_delay = link(rng);
    sg4::this_actor::sleep_for(request_delay);  // the request on its link
    w.server_inbox->put_init(mine, 0)->detach();
    const auto* reply = replies->get<Call>();
    sg4::this_actor::sleep_for(reply->reply_delay);  // the reply on its link
    ++w.messages;                                    // the reply is delivered
    on_links += request_delay + reply->reply_delay;
  }
  w.worst_overhead = std::max(w.worst_overhead, sg4::Engine::get_clock() - on_links);
}

bool parse_count(const char* text, long& out) {
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || v <= 0) return false;
  out = v;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  // SimGrid's logging off unless the caller asks otherwise (a later --log= wins).
  std::vector<char*> args(argv, argv + argc);
  std::string quiet = "--log=root.threshold:critical";
  args.insert(args.begin() + 1, quiet.data());
  int sg_argc = static_cast<int>(args.size());
  args.push_back(nullptr);
  sg4::Engine engine(&sg_argc, args.data());  // takes out the --cfg= and --log= arguments

  World w;
  w.calls = kDefaultCalls;
  long seed = 1;
  if ((sg_argc > 1 && !parse_count(args[1], w.calls)) || (sg_argc > 2 && !parse_count(args[2], seed)) || sg_argc > 3) {
    std::fprintf(stderr, "usage: %s [calls_per_client [seed]]\n", argv[0]);
    return 2;
  }
  w.seed = static_cast<std::uint64_t>(seed);

  auto* zone = sg4::create_full_zone("world");
  sg4::Host* host = zone->create_host("host", 1e9);
  zone->seal();

  w.server_inbox = sg4::Mailbox::by_name("server");
  w.calls_in_flight.resize(kClients);
  for (int c = 0; c < kClients; ++c) {
    w.calls_in_flight[static_cast<std::size_t>(c)].client = c;
    w.reply_boxes.push_back(sg4::Mailbox::by_name("client-" + std::to_string(c)));
  }
  // A daemon: the simulation ends when the clients are done, the server still waiting on its mailbox.
  sg4::Actor::create("server", host, [&w] { server(w); })->daemonize();
  for (int c = 0; c < kClients; ++c) sg4::Actor::create("client-" + std::to_string(c), host, [&w, c] { client(w, c); });

  const auto start = std::chrono::steady_clock::now();
  engine.run();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  const auto expected = 2ULL * kClients * static_cast<std::uint64_t>(w.calls);
  if (w.messages != expected) {
    std::fprintf(stderr, "simgrid_rpc: %llu messages, expected %llu\n", static_cast<unsigned long long>(w.messages),
                 static_cast<unsigned long long>(expected));
    return 1;
  }
  int major = 0, minor = 0, patch = 0;
  sg_version_get(&major, &minor, &patch);
  std::printf("tool: SimGrid %d.%d.%d (contexts/factory %s)\n", major, minor, patch,
              simgrid::config::get_value<std::string>("contexts/factory").c_str());
  std::printf("clients: %d\ncalls_per_client: %ld\nseed: %ld\n", kClients, w.calls, seed);
  std::printf("simulated_s: %.6f\ncomm_overhead_s: %.3g\n", sg4::Engine::get_clock(), w.worst_overhead);
  std::printf("messages: %llu\nseconds: %.6f\nmsgs_per_s: %.0f\n", static_cast<unsigned long long>(w.messages), seconds,
              static_cast<double>(w.messages) / seconds);
  return 0;
}
