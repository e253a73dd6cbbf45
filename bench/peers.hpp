#pragma once
// The peers of the RPC benchmark: the workload of engine_bench.cpp's rpc_engine (100 clients
// calling 1 server over links of uniform 1-100 us delays) written for SimGrid (s4u) and SimPy 2,
// each run once as a child process so that locksim's figure can be set beside theirs.
// The programs are bench/peers/simgrid_rpc.cpp and bench/peers/simpy_rpc.py.

#include <cstdint>
#include <string>

namespace bench {

struct Peer {
  std::string name;          // "SimGrid 3.32" or the like, from the peer's own `tool:` line when it ran
  bool present = false;      // false: no figure; why_missing says why, the figures stay 0
  std::string why_missing;   // not built / not installed / import failed / non-zero exit, with details
  double msgs_per_s = 0;     // simulated messages (request or reply deliveries) per second of wall time
  std::uint64_t messages = 0;
  double seconds = 0;        // wall time of the peer's simulation run, start-up excluded
};

struct PeerFigures {
  Peer simgrid, simpy;
};

// Runs each peer once with its default call count and fixed seed. Never throws for a missing
// or failing peer: it is reported with present=false.
PeerFigures peers_bench();

}  // namespace bench
