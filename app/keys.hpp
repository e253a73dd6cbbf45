#pragma once
// Scenario keys declared once. A key is its name, how it is read (its type, range and default,
// which the Reader gives the schema as it reads) and how it is written back into the effective
// configuration; a section's table of keys is what its object allows, what its reading does and
// what `effective_config` writes. Its meaning is its row in docs/scenario.md, which `locksim
// schema` compiles in and tests/app/docs_test.cpp holds to what the loader reads.
//
//   const Keys<Scenario> kRedis = {
//       pick<Scenario>("persistence", [](auto& s) -> auto& { return s.deployment.redis.server.persistence; }, names::persistence),
//       millis<Scenario>("down_after_ms", [](auto& s) -> auto& { return s.deployment.redis.sentinel.down_after; }, 1)};
//
// A field is a generic lambda from the configuration to the value's place, so one accessor serves
// the read (a mutable configuration) and the write (a const one).

#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "app/fault_kind.hpp"
#include "app/reader.hpp"

namespace locksim {

template <class Config>
struct Key {
  std::string name;
  std::function<void(const Reader&, Config&)> read;
  /// The value in effect; a discarded value (json::value_t::discarded) leaves the key out.
  std::function<json(const Config&)> write;
};

template <class Config>
using Keys = std::vector<Key<Config>>;

/// The names of a table's keys, in its order.
template <class Config>
std::vector<std::string> key_names(const Keys<Config>& keys) {
  std::vector<std::string> out;
  for (const auto& k : keys) out.push_back(k.name);
  return out;
}

/// Reads each key of `keys` that the object holds (the defaults stay where it does not), in the
/// table's order.
template <class Config>
void read_keys(const Reader& r, const Keys<Config>& keys, Config& c) {
  for (const auto& k : keys) k.read(r, c);
}

/// Fails on a key of the object that is not in `keys` (nor in `more`), then reads them.
template <class Config>
void read_section(const Reader& r, const Keys<Config>& keys, Config& c, const std::vector<std::string>& more = {}) {
  std::vector<std::string> known = key_names(keys);
  known.insert(known.end(), more.begin(), more.end());
  r.only(known);
  read_keys(r, keys, c);
}

/// Every key of `keys` with its value in effect.
template <class Config>
json write_keys(const Keys<Config>& keys, const Config& c) {
  json out = json::object();
  for (const auto& k : keys)
    if (json v = k.write(c); !v.is_discarded()) out[k.name] = std::move(v);
  return out;
}

namespace keys {

template <class Field, class Config>
using FieldType = std::remove_cvref_t<std::invoke_result_t<Field, Config&>>;

/// An integer from `min` to `max`.
template <class Config, class Field>
Key<Config> integer(std::string name, Field field, std::int64_t min, std::int64_t max) {
  return {name,
          [=](const Reader& r, Config& c) {
            auto& f = field(c);
            f = static_cast<FieldType<Field, Config>>(r.integer(name, static_cast<std::int64_t>(f), min, max));
          },
          [=](const Config& c) { return json(field(c)); }};
}

/// A number from `min` to `max`.
template <class Config, class Field>
Key<Config> number(std::string name, Field field, double min, double max) {
  return {name, [=](const Reader& r, Config& c) { field(c) = r.number(name, field(c), min, max); },
          [=](const Config& c) { return json(field(c)); }};
}

/// A duration written in milliseconds, from `min_ms`.
template <class Config, class Field>
Key<Config> millis(std::string name, Field field, double min_ms = 0) {
  return {name, [=](const Reader& r, Config& c) { field(c) = r.millis(name, field(c), min_ms); },
          [=](const Config& c) { return json(to_ms(field(c))); }};
}

/// A delay's distribution ({"uniform_ms": [1, 5]}, ...).
template <class Config, class Field>
Key<Config> distribution(std::string name, Field field) {
  return {name, [=](const Reader& r, Config& c) { field(c) = r.distribution(name, field(c)); },
          [=](const Config& c) { return distribution_json(field(c)); }};
}

/// true or false.
template <class Config, class Field>
Key<Config> boolean(std::string name, Field field) {
  return {name, [=](const Reader& r, Config& c) { field(c) = r.boolean(name, field(c)); },
          [=](const Config& c) { return json(field(c)); }};
}

/// One of an enumeration's values by its name.
template <class Config, class Field, class T>
Key<Config> pick(std::string name, Field field, const Names<T>& names) {
  return {name, [=, &names](const Reader& r, Config& c) { field(c) = r.pick(name, field(c), names); },
          [=, &names](const Config& c) { return json(name_of(names, field(c))); }};
}

/// A string, one of `allowed`.
template <class Config, class Field>
Key<Config> choice(std::string name, Field field, std::vector<std::string> allowed) {
  return {name, [=](const Reader& r, Config& c) { field(c) = r.choice(name, field(c), allowed); },
          [=](const Config& c) { return json(field(c)); }};
}

}  // namespace keys

}  // namespace locksim
