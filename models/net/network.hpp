#pragma once
// The network between nodes: one-way links with a latency distribution and a loss
// probability, partitions and clogging, each per direction.
//
// Imitates an intra-datacenter network (docs/models.md, Figures the models take: RTT
// ~0.5 ms, ~200 us on 1 Gbit/s). A message is a delivery callback run on the receiving
// node (its kernel side: it lands even while the node is paused, and is dropped if the node
// crashed). A partition either drops what is sent across it or holds it until the partition
// heals, as TCP's retransmissions would; a clog holds messages until a given time
// (FoundationDB's RandomClogging). Each link draws from its own stream, so traffic on one
// link never shifts the random draws of another.

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include "models/net/call_log.hpp"
#include "sim/sim.hpp"

namespace models {

struct LinkConfig {
  /// One-way delay of each message.
  sim::Distribution latency = sim::fixed(std::chrono::microseconds(250));
  /// Probability that a message is lost.
  double loss = 0;
};

/// The points between a sender's steps where a search may place a fault: each message is about
/// to leave (before) and has left (after). models/faults/placement.hpp is the one user.
class SendPoints {
 public:
  virtual ~SendPoints() = default;
  /// Before `from` sends to `to`; false: the message is lost. May pause or crash `from` (a
  /// process on `from` stops here, or unwinds).
  virtual bool before(sim::NodeId from, sim::NodeId to) = 0;
  /// After the message left (or was lost to the link).
  virtual void after(sim::NodeId from, sim::NodeId to) = 0;
};

enum class PartitionMode {
  drop,  // messages sent across the partition are lost
  hold,  // they wait and are delivered, in order, once it heals
};

class Network {
 public:
  explicit Network(sim::Engine& engine, LinkConfig default_link = {});
  Network(const Network&) = delete;
  Network& operator=(const Network&) = delete;

  /// Configures the link from `from` to `to` (one direction).
  void set_link(sim::NodeId from, sim::NodeId to, LinkConfig link);
  /// Configures both directions between `a` and `b`.
  void set_links(sim::NodeId a, sim::NodeId b, const LinkConfig& link);

  /// Cuts the link from `from` to `to` (one direction) until heal().
  void partition(sim::NodeId from, sim::NodeId to, PartitionMode mode = PartitionMode::drop);
  /// Cuts both directions between `a` and `b`.
  void partition_both(sim::NodeId a, sim::NodeId b, PartitionMode mode = PartitionMode::drop);
  /// Repairs the link; messages it held leave now, in the order they were sent.
  void heal(sim::NodeId from, sim::NodeId to);
  void heal_both(sim::NodeId a, sim::NodeId b);
  bool is_partitioned(sim::NodeId from, sim::NodeId to) const;
  /// Holds every message sent from `from` to `to` in the next `length`; they leave when it ends.
  void clog(sim::NodeId from, sim::NodeId to, sim::Duration length);

  /// Multiplies the latency of every message sent from `from` to `to` by `factor` for the
  /// next `length` (a congested switch, a saturated uplink). kAnyNode for `from` or `to`
  /// stands for every node: kAnyNode to `db` slows everything sent to the database.
  void slow(sim::NodeId from, sim::NodeId to, double factor, sim::Duration length);
  static constexpr sim::NodeId kAnyNode = ~sim::NodeId{0};

  /// Sends a message: `deliver` runs on `to` after the link's latency, unless lost.
  void send(sim::NodeId from, sim::NodeId to, sim::Callback deliver);

  /// From now on, `points` is asked around every message sent.
  void watch_sends(std::unique_ptr<SendPoints> points) { points_ = std::move(points); }

  /// From now on, keeps the request/reply calls made over this network (rpc.hpp), to tell a trial.
  void keep_calls() {
    if (!calls_) calls_ = std::make_unique<CallLog>();
  }
  /// The calls kept; null unless keep_calls() was called.
  CallLog* calls() const { return calls_.get(); }

  std::uint64_t sent() const { return sent_; }
  std::uint64_t lost() const { return lost_; }
  sim::Engine& engine() const { return engine_; }

 private:
  struct Held {
    sim::Callback deliver;
  };
  struct Link {
    sim::NodeId from = 0, to = 0;
    LinkConfig config;
    sim::Stream stream;  // created at the first draw: most links of a run carry nothing
    bool partitioned = false;
    PartitionMode mode = PartitionMode::drop;
    sim::Time clogged_until;
    std::vector<Held> held;
  };
  struct Slowdown {
    sim::NodeId from = 0, to = 0;  // kAnyNode: every node
    double factor = 1;
    sim::Time until;
  };
  void send_now(sim::NodeId from, sim::NodeId to, sim::Callback deliver);
  Link& link(sim::NodeId from, sim::NodeId to);
  /// The link's latency for one message: drawn, then multiplied by the slowdowns in force.
  sim::Duration latency(Link& l, sim::NodeId from, sim::NodeId to);
  sim::Stream& stream(Link& l);
  void transmit(Link& l, sim::NodeId from, sim::NodeId to, sim::Callback deliver, sim::Time earliest);
  void record(const char* kind, sim::NodeId from, sim::NodeId to, std::int64_t a = 0);

  sim::Engine& engine_;
  LinkConfig default_;
  // index_ is a width_ x width_ matrix, grown as nodes appear: [from * width_ + to] is 0
  // for a link not used yet, else 1 + its place in links_.
  std::size_t width_ = 0;
  std::vector<std::uint32_t> index_;
  std::deque<Link> links_;
  std::vector<Slowdown> slowdowns_;  // in force or past; dropped as they end
  std::uint64_t sent_ = 0;
  std::uint64_t lost_ = 0;
  std::unique_ptr<CallLog> calls_;
  std::unique_ptr<SendPoints> points_;
};

}  // namespace models
