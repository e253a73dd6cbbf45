#pragma once
// Fault kinds: what a scenario file may list under "faults". Each kind is one file in
// app/faults/: how its entry is read (with the models' defaults), how it is injected into a
// trial, and how the shrinker makes it smaller. The loader, the runner and the shrinker
// iterate the kinds; adding one is its file, one line in app/faults/fault_kind.cpp, its rows in
// docs/scenario.md, and its test (with its model's files in models/faults/).

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "app/reader.hpp"
#include "models/deployment.hpp"

namespace locksim {

/// The nodes a fault may name in a scenario: "app-1" .. "app-N", "db-1", "redis-3",
/// "redis-1-replica", "sentinel", "zk-1", "etcd-1", "consul-1", "mq-1", "remote-1", "clients".
struct NodeNames {
  int app_servers = 1;
  std::vector<std::string> sessions{};  // the sessions workload's client nodes
  /// The node named at `key` of `r`; fails naming the nodes there are.
  std::string read(const Reader& r, const std::string& key) const;
  /// The nodes named in the list at `key` (at least one).
  std::vector<std::string> read_list(const Reader& r, const std::string& key) const;
};

/// One kind's faults, as a scenario configured them.
class Fault {
 public:
  virtual ~Fault() = default;
  /// Schedules the faults in a trial; one naming a node this trial's world lacks (Redis, for
  /// a database-only strategy) is skipped.
  virtual void inject(const models::FaultSurface& surface) const = 0;
  /// How many faults there are, and how long the scheduled ones pause nodes (the
  /// shrinker's measures).
  virtual int count() const = 0;
  virtual double pause_ms() const { return 0; }
  /// The faults of this kind a trial that ran until `end` on `surface` injected: those listed
  /// whose time came on a node it has, those drawn as counted on the surface. The
  /// denominator of rates per fault (duplicate_rows.per_fault).
  virtual std::uint64_t injected(const models::FaultSurface& surface, sim::Time end) const = 0;
  /// The entry with every effective value, defaults included (`--print-config`).
  virtual json effective() const = 0;
  /// Faults a search places rather than a time (the "explore" kind), in words for a verdict:
  /// "1 pause of 5000 ms or 45000 ms on an app server placed anywhere"; "" for the others.
  virtual std::string placed_text() const { return ""; }
};

/// A smaller scenario for the shrinker: `--set path=value`.
using Smaller = std::pair<std::string, json>;

class FaultKind {
 public:
  virtual ~FaultKind() = default;
  /// Its key under "faults".
  virtual const char* key() const = 0;
  /// One line: what it does, for `docs/` and `list`.
  virtual const char* meaning() const = 0;
  /// An entry that reaches each of its keys, which `locksim schema` reads (app/schema.cpp).
  virtual json exemplar() const = 0;
  /// Reads the kind's entry; throws InputError (file, JSON path, what was expected).
  virtual std::shared_ptr<const Fault> load(const Reader& entry, const NodeNames& nodes) const = 0;
  /// Candidates one step smaller, given the scenario's whole "faults" object: `removals`
  /// take a fault away, `reductions` make one milder. The shrinker tries every kind's
  /// removals before any reduction. By default (a kind that is a list): each fault removed.
  virtual void shrink(const json& faults, std::vector<Smaller>& removals, std::vector<Smaller>& reductions) const;
};

/// Every fault kind, in the order they are injected (which the traces depend on).
const std::vector<const FaultKind*>& fault_kinds();

/// How long a fault lasts: `length_ms` of `r`, which must be there (a fault of no length is a
/// mistake, not a default).
inline sim::Duration length(const Reader& r) {
  r.require("length_ms", "a length_ms (how long it lasts)");
  return r.millis("length_ms", {}, 0.001);
}
/// For kinds that are a list of faults: each item of the entry `list`, read where it is.
template <class Each>
void each_entry(const Reader& list, Each&& each) {
  list.declare("", {{"type", "array"}});
  if (!list.raw().is_array()) list.fail("a list");
  for (std::size_t i = 0; i < list.raw().size(); ++i) each(list.item(i));
}
/// For kinds that are a list of faults: how many a trial that ran until `end` injected, those
/// whose time came and that `acts` (on nodes the trial's world has).
template <class List, class Acts>
std::uint64_t listed_injected(const List& list, sim::Time end, Acts&& acts) {
  return static_cast<std::uint64_t>(std::count_if(list.begin(), list.end(), [&](const auto& f) { return f.at <= end && acts(f); }));
}
/// For kinds that are a list of faults: each fault removed in turn.
void remove_each(const json& faults, const char* key, std::vector<Smaller>& removals);
/// Milliseconds of a duration, as scenario files write them.
double to_ms(sim::Duration d);
/// A distribution as a scenario file writes it ({"uniform_ms": [1, 5]}, ...).
json distribution_json(const sim::Distribution& d);

}  // namespace locksim
