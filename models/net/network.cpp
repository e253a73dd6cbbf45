#include "models/net/network.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace models {

Network::Network(sim::Engine& engine, LinkConfig default_link) : engine_(engine), default_(std::move(default_link)) {
  if (!(default_.loss >= 0 && default_.loss <= 1))
    throw sim::UsageError(fmt::format("models::Network: loss must be in [0, 1], got {}", default_.loss));
}

Network::Link& Network::link(sim::NodeId from, sim::NodeId to) {
  const std::size_t needed = std::max<std::size_t>({from + 1u, to + 1u, engine_.node_count()});
  if (needed > width_) {
    // Twice as wide at least: a world adds its nodes one by one, and laying the table out
    // again for each would cost the square of their number each time.
    const std::size_t width = std::max<std::size_t>({needed, 2 * width_, 8});
    std::vector<std::uint32_t> grown(width * width, 0);
    for (std::size_t f = 0; f < width_; ++f)
      for (std::size_t t = 0; t < width_; ++t) grown[f * width + t] = index_[f * width_ + t];
    index_ = std::move(grown);
    width_ = width;
  }
  std::uint32_t& i = index_[from * width_ + to];
  if (i == 0) {
    Link& l = links_.emplace_back();
    l.from = from;
    l.to = to;
    l.config = default_;
    i = static_cast<std::uint32_t>(links_.size());
  }
  return links_[i - 1];
}

sim::Stream& Network::stream(Link& l) {
  if (!l.stream) {
    const std::string& from = engine_.node_name(l.from);
    const std::string& to = engine_.node_name(l.to);
    // "net.<from>-><to>", its pieces copied into place: a short run makes a dozen, and
    // appending them one by one (each a length check, growth and strlen) cost twice as much.
    std::string name(6 + from.size() + to.size(), '\0');
    char* out = name.data();
    out = std::copy_n("net.", 4, out);
    out = std::copy_n(from.data(), from.size(), out);
    out = std::copy_n("->", 2, out);
    std::copy_n(to.data(), to.size(), out);
    l.stream = engine_.stream(std::move(name));
  }
  return l.stream;
}

void Network::set_link(sim::NodeId from, sim::NodeId to, LinkConfig config) {
  if (!(config.loss >= 0 && config.loss <= 1))
    throw sim::UsageError(fmt::format("models::Network::set_link: loss must be in [0, 1], got {}", config.loss));
  link(from, to).config = std::move(config);
}

void Network::set_links(sim::NodeId a, sim::NodeId b, const LinkConfig& config) {
  set_link(a, b, config);
  set_link(b, a, config);
}

void Network::partition(sim::NodeId from, sim::NodeId to, PartitionMode mode) {
  Link& l = link(from, to);
  l.partitioned = true;
  l.mode = mode;
  record("net.partition", from, to, mode == PartitionMode::hold ? 1 : 0);
}

void Network::partition_both(sim::NodeId a, sim::NodeId b, PartitionMode mode) {
  partition(a, b, mode);
  partition(b, a, mode);
}

void Network::heal(sim::NodeId from, sim::NodeId to) {
  Link& l = link(from, to);
  if (!l.partitioned) return;
  l.partitioned = false;
  record("net.heal", from, to);
  if (l.held.empty()) return;
  // What the partition held leaves as one burst, in the order it was sent, like the
  // retransmitted segments of a TCP connection.
  engine_.release_hold();
  engine_.at(std::max(engine_.now(), l.clogged_until) + latency(l, from, to), to,
             [held = std::move(l.held)]() mutable {
               for (Held& h : held) h.deliver();
             });
  l.held.clear();
}

void Network::heal_both(sim::NodeId a, sim::NodeId b) {
  heal(a, b);
  heal(b, a);
}

bool Network::is_partitioned(sim::NodeId from, sim::NodeId to) const {
  if (from >= width_ || to >= width_) return false;
  const std::uint32_t i = index_[from * width_ + to];
  return i != 0 && links_[i - 1].partitioned;
}

void Network::clog(sim::NodeId from, sim::NodeId to, sim::Duration length) {
  if (length < sim::Duration::zero())
    throw sim::UsageError("models::Network::clog: negative length " + sim::format_duration(length));
  Link& l = link(from, to);
  l.clogged_until = std::max(l.clogged_until, engine_.now() + length);
  record("net.clog", from, to, length.count());
}

void Network::send(sim::NodeId from, sim::NodeId to, sim::Callback deliver) {
  if (points_ && !points_->before(from, to)) {
    ++sent_;
    ++lost_;
    record("net.lost", from, to);
    return;
  }
  send_now(from, to, std::move(deliver));
  if (points_) points_->after(from, to);
}

void Network::send_now(sim::NodeId from, sim::NodeId to, sim::Callback deliver) {
  ++sent_;
  Link& l = link(from, to);
  if (l.partitioned) {
    if (l.mode == PartitionMode::hold) {
      // Held messages are pending work: the run goes on until the partition heals.
      if (l.held.empty()) engine_.hold_open();
      l.held.push_back(Held{std::move(deliver)});
    } else {
      ++lost_;
      record("net.drop", from, to);
    }
    return;
  }
  transmit(l, from, to, std::move(deliver), std::max(engine_.now(), l.clogged_until));
}

void Network::transmit(Link& l, sim::NodeId from, sim::NodeId to, sim::Callback deliver, sim::Time earliest) {
  if (l.config.loss > 0 && stream(l).uniform01() < l.config.loss) {
    ++lost_;
    record("net.lost", from, to);
    return;
  }
  engine_.at(earliest + latency(l, from, to), to, std::move(deliver));
}

void Network::slow(sim::NodeId from, sim::NodeId to, double factor, sim::Duration length) {
  if (!(factor > 0) || length < sim::Duration::zero())
    throw sim::UsageError("models::Network::slow: expected a factor above 0 and a length of 0 or more");
  slowdowns_.push_back({from, to, factor, engine_.now() + length});
  record("net.slow", from == kAnyNode ? sim::kWorld : from, to == kAnyNode ? sim::kWorld : to, length.count());
}

sim::Duration Network::latency(Link& l, sim::NodeId from, sim::NodeId to) {
  const sim::Duration drawn = l.config.latency.sample_duration(stream(l));
  if (slowdowns_.empty()) return drawn;
  const sim::Time now = engine_.now();
  std::erase_if(slowdowns_, [now](const Slowdown& s) { return s.until <= now; });
  double factor = 1;
  for (const Slowdown& s : slowdowns_)
    if ((s.from == kAnyNode || s.from == from) && (s.to == kAnyNode || s.to == to)) factor *= s.factor;
  if (factor == 1) return drawn;
  // At most about 30 years: far past any run's time budget, and clear of overflow.
  const double slowed = std::min(static_cast<double>(drawn.count()) * factor, 1e18);
  return sim::Duration{static_cast<std::int64_t>(std::llround(slowed))};
}

void Network::record(const char* kind, sim::NodeId from, sim::NodeId to, std::int64_t a) {
  sim::Trace& trace = engine_.trace();
  if (trace.mode() == sim::TraceMode::off) return;
  trace.record(sim::TraceEvent{engine_.now(), from, engine_.current_process(), trace.kind(kind), to, a, 0});
}

}  // namespace models
