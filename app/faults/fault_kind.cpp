// The fault kinds' registry, and what they share: node names, removals from a list, durations
// written back.

#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "app/fault_kind.hpp"

namespace locksim {

// Each kind's file defines its accessor.
const FaultKind& gc_pauses_kind();
const FaultKind& pauses_kind();
const FaultKind& crashes_kind();
const FaultKind& partitions_kind();
const FaultKind& clock_steps_kind();
const FaultKind& latency_spikes_kind();
const FaultKind& placed_kind();

const std::vector<const FaultKind*>& fault_kinds() {
  static const std::vector<const FaultKind*> all = {&gc_pauses_kind(),  &pauses_kind(),     &crashes_kind(),
                                                    &partitions_kind(), &clock_steps_kind(), &latency_spikes_kind(),
                                                    &placed_kind()};
  return all;
}


std::string NodeNames::read(const Reader& r, const std::string& key) const {
  const std::string name = r.string(key, "");
  auto numbered = [&](const std::string& prefix, int max) {
    if (!name.starts_with(prefix)) return false;
    const std::string digits = name.substr(prefix.size());
    if (digits.empty() || digits.size() > 3 || !std::all_of(digits.begin(), digits.end(), ::isdigit)) return false;
    const int n = std::stoi(digits);
    return n >= 1 && n <= max;
  };
  for (const char* fixed : {"clients", "db-1", "mq-1", "remote-1", "sentinel", "redis-1-replica", "zk-1", "etcd-1", "consul-1"})
    if (name == fixed) return name;
  if (numbered("app-", app_servers) || numbered("redis-", 99)) return name;
  if (std::find(sessions.begin(), sessions.end(), name) != sessions.end()) return name;
  r.fail(fmt::format("a node: app-1 .. app-{}, db-1, redis-N, redis-1-replica, sentinel, zk-1, etcd-1, consul-1, mq-1, remote-1, clients{}, "
                     "got {}",
                     app_servers, sessions.empty() ? "" : fmt::format(" or a session ({})", fmt::join(sessions, ", ")),
                     quote_value(name)),
         key);
}

std::vector<std::string> NodeNames::read_list(const Reader& r, const std::string& key) const {
  r.declare(key, {{"type", "array"}, {"minItems", 1}, {"items", {{"type", "string"}}}});
  if (!r.has(key) || !r.raw().at(key).is_array() || r.raw().at(key).empty()) r.fail("a non-empty list of nodes", key);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < r.raw().at(key).size(); ++i) {
    const json one = {{"node", r.raw().at(key)[i]}};
    out.push_back(read(Reader(one, r.file(), r.where(key + "/" + std::to_string(i))), "node"));
  }
  return out;
}

void FaultKind::shrink(const json& faults, std::vector<Smaller>& removals, std::vector<Smaller>&) const {
  remove_each(faults, key(), removals);
}

void remove_each(const json& faults, const char* key, std::vector<Smaller>& removals) {
  if (!faults.contains(key) || !faults.at(key).is_array()) return;
  for (std::size_t i = 0; i < faults.at(key).size(); ++i) {
    json fewer = faults.at(key);
    fewer.erase(i);
    removals.emplace_back(fmt::format("faults.{}", key), std::move(fewer));
  }
}

double to_ms(sim::Duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

json distribution_json(const sim::Distribution& d) {
  constexpr double ns_per_ms = 1e6;
  // To the nanosecond: exp(log(x)) and the like come back a hair off.
  const auto ms = [](double ns) { return std::round(ns) / ns_per_ms; };
  return std::visit(
      [&](const auto& s) -> json {
        using S = std::decay_t<decltype(s)>;
        if constexpr (std::is_same_v<S, sim::Fixed>) return {{"fixed_ms", ms(s.value)}};
        else if constexpr (std::is_same_v<S, sim::Uniform>) return {{"uniform_ms", {ms(s.low), ms(s.high)}}};
        else if constexpr (std::is_same_v<S, sim::Exponential>) return {{"exponential_ms", ms(s.mean)}};
        else if constexpr (std::is_same_v<S, sim::Normal>) return {{"normal_ms", {ms(s.mean), ms(s.stddev)}}};
        else if constexpr (std::is_same_v<S, sim::LogNormal>)
          return {{"lognormal_ms", {{"median", ms(std::exp(s.mu))}, {"sigma", s.sigma}}}};
        else if constexpr (std::is_same_v<S, sim::Pareto>) return {{"pareto_ms", {{"scale", ms(s.scale)}, {"shape", s.shape}}}};
        else if constexpr (std::is_same_v<S, sim::Empirical>) {
          const bool drawn = !s.weights.empty();  // empirical_ms: every weight 1; one_of_ms: none, enumerated
          if (drawn && std::any_of(s.weights.begin(), s.weights.end(), [](std::uint32_t w) { return w != 1; })) return d.describe();
          if (drawn && s.values.size() > 64) {  // a long sample list, summed up
            const auto [lo, hi] = std::minmax_element(s.values.begin(), s.values.end());
            return {{"empirical_ms", {{"samples", s.values.size()}, {"min", ms(*lo)}, {"max", ms(*hi)}}}};
          }
          json values = json::array();
          for (double v : s.values) values.push_back(ms(v));
          return {{drawn ? "empirical_ms" : "one_of_ms", values}};
        } else {
          if (s.weights.empty()) return d.describe();  // an enumerated mixture: only the models build those
          double total = 0;
          for (std::uint32_t w : s.weights) total += w;
          json parts = json::array();
          for (std::size_t i = 0; i < s.parts.size(); ++i) parts.push_back({s.weights[i] / total, distribution_json(s.parts[i])});
          return {{"mixture", parts}};
        }
      },
      d.shape());
}

}  // namespace locksim
