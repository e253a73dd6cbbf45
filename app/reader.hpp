#pragma once
// Reading a scenario document: one JSON object at a time, knowing where it is, so every
// complaint names the file, the JSON path and what was expected. Shared by the scenario
// loader and the fault kinds, which read their own entries.
//
// A Reader given a SchemaRecorder also notes what it was asked for: each key, the type and
// range it accepts and the default it applies. That is how `locksim schema` is written by
// the loader itself (app/schema.hpp).

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "app/input.hpp"
#include "app/schema.hpp"
#include "sim/distribution.hpp"

namespace locksim {

using json = nlohmann::json;

/// Names of an enumeration's values as scenario files write them; the first is not a default
/// (defaults live in the models' configuration structs).
template <class T>
using Names = std::vector<std::pair<const char*, T>>;

/// The name of `value` in `names`.
template <class T>
const char* name_of(const Names<T>& names, T value) {
  for (const auto& [name, v] : names)
    if (v == value) return name;
  return "?";
}

// Reads one JSON object, knowing where it is, so every complaint names the file and path.
class Reader {
 public:
  Reader(const json& j, const std::string& file, std::string path, SchemaRecorder* recorder = nullptr)
      : j_(j), file_(file), path_(std::move(path)), recorder_(recorder) {}

  [[noreturn]] void fail(const std::string& expected, const std::string& key = "") const {
    throw InputError(fmt::format("{}: {}: expected {}", shown(file_), shown(where(key)), expected));
  }
  std::string where(const std::string& key = "") const {
    const std::string p = key.empty() ? path_ : path_ + "/" + key;
    return p.empty() ? "/" : p;
  }

  /// Fails on any key not in `known`.
  void only(std::initializer_list<const char*> known) const { only(std::vector<std::string>(known.begin(), known.end())); }
  void only(const std::vector<std::string>& known) const {
    if (recorder_ != nullptr) recorder_->keys(where(), known);
    if (!j_.is_object()) fail("an object");
    for (const auto& [key, value] : j_.items())
      if (std::find(known.begin(), known.end(), key) == known.end())
        fail(fmt::format("one of the keys {} (unknown key)", fmt::join(known, ", ")), key);
  }
  bool has(const std::string& key) const { return j_.contains(key); }
  /// Fails unless `key` is there; `expected` says what it is for.
  void require(const std::string& key, const std::string& expected) const {
    if (recorder_ != nullptr) recorder_->required(where(), key);
    if (!has(key)) fail(expected);
  }
  Reader child(const std::string& key) const { return Reader(j_.at(key), file_, where(key), recorder_); }
  /// Item `i` of a list.
  Reader item(std::size_t i) const { return Reader(j_.at(i), file_, where(std::to_string(i)), recorder_); }
  const json& raw() const { return j_; }
  const std::string& file() const { return file_; }
  /// Tells the recorder (if any) what the value at `key` may be, as a JSON Schema, where the
  /// loader reads it by hand rather than through an accessor below.
  void declare(const std::string& key, const json& schema) const {
    if (recorder_ != nullptr) recorder_->value(where(key), schema);
  }
  /// Tells the recorder that the keys of the object at `key` ("": this one) are names the
  /// document chooses (`placeholder`: "<strategy>"), or that this object's keys are `known`
  /// when they are checked by hand.
  void declare_names(const std::string& key, const std::string& placeholder) const {
    if (recorder_ != nullptr) recorder_->names(key.empty() ? where() : where(key), placeholder);
  }
  void declare_keys(const std::vector<std::string>& known) const {
    if (recorder_ != nullptr) recorder_->keys(where(), known);
  }

  std::string string(const std::string& key, std::string fallback) const {
    if (recorder_ != nullptr) declare(key, fallback.empty() ? json{{"type", "string"}} : json{{"type", "string"}, {"default", fallback}});
    if (!has(key)) return fallback;
    if (!j_.at(key).is_string()) fail("a string", key);
    return j_.at(key).get<std::string>();
  }
  /// One of `names` by its name; `fallback` (the model's default) when the key is absent.
  template <class T>
  T pick(const std::string& key, T fallback, const Names<T>& names) const {
    if (recorder_ != nullptr) {
      json values = json::array();
      for (const auto& [name, value] : names) values.push_back(name);
      declare(key, {{"type", "string"}, {"enum", values}, {"default", name_of(names, fallback)}});
    }
    if (!has(key)) return fallback;
    const std::string v = string(key, "");
    for (const auto& [name, value] : names)
      if (v == name) return value;
    std::string list;
    for (const auto& [name, value] : names) list += (list.empty() ? "" : ", ") + std::string(name);
    fail("one of " + list + ", got " + quote_value(v), key);
  }
  bool boolean(const std::string& key, bool fallback) const {
    if (recorder_ != nullptr) declare(key, {{"type", "boolean"}, {"default", fallback}});
    if (!has(key)) return fallback;
    if (!j_.at(key).is_boolean()) fail("true or false", key);
    return j_.at(key).get<bool>();
  }
  /// Each item of the list at `key` (absent: none), read where it is.
  template <class Each>
  void each(const std::string& key, Each&& each) const {
    if (recorder_ != nullptr) declare(key, {{"type", "array"}});
    if (!has(key)) return;
    if (!j_.at(key).is_array()) fail("a list", key);
    for (std::size_t i = 0; i < j_.at(key).size(); ++i)
      each(Reader(j_.at(key)[i], file_, where(key + "/" + std::to_string(i)), recorder_));
  }
  std::string choice(const std::string& key, std::string fallback, std::initializer_list<const char*> allowed) const {
    return choice(key, std::move(fallback), std::vector<std::string>(allowed.begin(), allowed.end()));
  }
  std::string choice(const std::string& key, std::string fallback, const std::vector<std::string>& allowed) const {
    if (recorder_ != nullptr) declare(key, {{"type", "string"}, {"enum", allowed}, {"default", fallback}});
    std::string v = string(key, fallback);
    if (std::none_of(allowed.begin(), allowed.end(), [&](const std::string& a) { return v == a; })) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      fail("one of " + list + ", got " + quote_value(v), key);
    }
    return v;
  }
  double number(const std::string& key, double fallback, double min, double max) const {
    if (recorder_ != nullptr) declare(key, {{"type", "number"}, {"minimum", min}, {"maximum", max}, {"default", fallback}});
    if (!has(key)) return fallback;
    return number(key, min, max);
  }
  /// The number at `key`, which the caller knows is there (it has no default).
  double number(const std::string& key, double min, double max) const {
    if (recorder_ != nullptr) declare(key, {{"type", "number"}, {"minimum", min}, {"maximum", max}});
    if (!j_.at(key).is_number()) fail("a number", key);
    const double v = j_.at(key).get<double>();
    if (!(v >= min && v <= max)) fail(fmt::format("a number from {} to {}, got {}", min, max, v), key);
    return v;
  }
  std::int64_t integer(const std::string& key, std::int64_t fallback, std::int64_t min, std::int64_t max) const {
    if (recorder_ != nullptr) declare(key, {{"type", "integer"}, {"minimum", min}, {"maximum", max}, {"default", fallback}});
    if (!has(key)) return fallback;
    return integer(key, min, max);
  }
  /// The integer at `key`, which the caller knows is there (it has no default).
  std::int64_t integer(const std::string& key, std::int64_t min, std::int64_t max) const {
    if (recorder_ != nullptr) declare(key, {{"type", "integer"}, {"minimum", min}, {"maximum", max}});
    if (!j_.at(key).is_number_integer()) fail("an integer", key);
    const auto v = j_.at(key).get<std::int64_t>();
    if (v < min || v > max) fail(fmt::format("an integer from {} to {}, got {}", min, max, v), key);
    return v;
  }
  sim::Duration millis(const std::string& key, sim::Duration fallback, double min_ms = 0, double max_ms = limits::max_ms) const {
    if (recorder_ != nullptr) declare(key, {{"type", "number"}, {"minimum", min_ms}, {"maximum", max_ms}, {"default", static_cast<double>(fallback.count()) / 1e6}});
    if (!has(key)) return fallback;
    return from_ms(number(key, 0, min_ms, max_ms));
  }
  /// The list of times in ms at `key` ("times_ms": [0, 5600, 9000]): 1 to `max_items` of them,
  /// each from 0 to limits::max_ms and none before the one before it; `what` names them in the
  /// complaint ("arrival times").
  std::vector<sim::Duration> times(const std::string& key, const std::string& what, std::size_t max_items) const;
  /// Callers check the range first: every duration is within +-limits::max_ms.
  static sim::Duration from_ms(double ms) {
    return sim::Duration{static_cast<std::int64_t>(std::llround(ms * 1e6))};
  }
  /// A duration in ms from a JSON value, within [0, limits::max_ms].
  static bool is_ms(const json& v) { return v.is_number() && v.get<double>() >= 0 && v.get<double>() <= limits::max_ms; }

  /// {"fixed_ms": 5} | {"uniform_ms": [1, 5]} | {"exponential_ms": 10} | {"normal_ms": [mean, stddev]}
  /// | {"lognormal_ms": {"median": 40, "sigma": 0.6}} | {"pareto_ms": {"scale": 10, "shape": 1.5}}
  /// | {"one_of_ms": [0.1, 5]}: each draw one of the values, equally likely; `explore --mode
  /// dfs` tries each (the first is the default it deviates from)
  /// | {"empirical_ms": [3, 4, 250, ...]} or {"empirical_ms": {"file": "pauses.txt"}}: each draw
  /// one of the samples (a file: one a line, `#` comments; found beside the scenario file)
  /// | {"mixture": [[0.99, {...}], [0.01, {...}]]}: each draw from one part, with its probability.
  sim::Distribution distribution(const std::string& key, sim::Distribution fallback) const {
    if (recorder_ != nullptr) recorder_->distribution(where(key), fallback);
    if (!has(key)) return fallback;
    return Reader(j_.at(key), file_, where(key)).as_distribution(0);  // recorded as one value above
  }

 private:
  static constexpr std::size_t kMaxSamples = 1'000'000;
  static constexpr int kMaxMixtureDepth = 4;

  sim::Distribution as_distribution(int depth) const {
    const Reader& d = *this;
    d.only({"fixed_ms", "uniform_ms", "exponential_ms", "normal_ms", "lognormal_ms", "pareto_ms", "one_of_ms", "empirical_ms",
            "mixture"});
    if (d.raw().size() != 1)
      d.fail("exactly one of fixed_ms, uniform_ms, exponential_ms, normal_ms, lognormal_ms, pareto_ms, one_of_ms, empirical_ms, "
             "mixture");
    // Two durations in ms; `ordered`: the first no larger than the second.
    auto pair = [&](const char* k, bool ordered, const char* expected) {
      const json& v = d.raw().at(k);
      if (!v.is_array() || v.size() != 2 || !is_ms(v[0]) || !is_ms(v[1]) || (ordered && v[1].get<double>() < v[0].get<double>()))
        d.fail(fmt::format("{}, each from 0 to {} ms", expected, limits::max_ms), k);
      return std::pair{v[0].get<double>(), v[1].get<double>()};
    };
    if (d.has("fixed_ms")) return sim::fixed(from_ms(d.number("fixed_ms", 0, 0, limits::max_ms)));
    if (d.has("uniform_ms")) {
      auto [lo, hi] = pair("uniform_ms", true, "[low, high] with low <= high");
      return sim::uniform(from_ms(lo), from_ms(hi));
    }
    if (d.has("one_of_ms")) {
      const json& v = d.raw().at("one_of_ms");
      if (!v.is_array() || v.empty() || v.size() > 16 || !std::all_of(v.begin(), v.end(), is_ms))
        d.fail(fmt::format("a list of 1 to 16 durations in ms, each from 0 to {}", limits::max_ms), "one_of_ms");
      std::vector<sim::Duration> values;
      for (const json& x : v) values.push_back(from_ms(x.get<double>()));
      return sim::empirical(values);
    }
    if (d.has("empirical_ms")) {
      const std::vector<sim::Duration> values = d.samples();
      return sim::empirical(values, std::vector<std::uint32_t>(values.size(), 1));  // drawn, not enumerated
    }
    if (d.has("mixture")) {
      const json& v = d.raw().at("mixture");
      const char* expected = "a list of [probability, distribution] pairs whose probabilities are above 0 and add up to 1";
      if (depth >= kMaxMixtureDepth) d.fail(fmt::format("a mixture nested at most {} deep", kMaxMixtureDepth), "mixture");
      if (!v.is_array() || v.empty() || v.size() > 16) d.fail(std::string(expected) + " (1 to 16 parts)", "mixture");
      std::vector<sim::Distribution> parts;
      std::vector<std::uint32_t> weights;
      double sum = 0;
      for (std::size_t i = 0; i < v.size(); ++i) {
        const std::string at = "mixture/" + std::to_string(i);
        if (!v[i].is_array() || v[i].size() != 2 || !v[i][0].is_number() || !(v[i][0].get<double>() > 0) ||
            !(v[i][0].get<double>() <= 1))
          d.fail(expected, at);
        const double p = v[i][0].get<double>();
        sum += p;
        weights.push_back(static_cast<std::uint32_t>(std::max(1.0, std::round(p * 1e6))));
        parts.push_back(Reader(v[i][1], file_, d.where(at + "/1")).as_distribution(depth + 1));
      }
      if (std::fabs(sum - 1) > 1e-6) d.fail(fmt::format("{}; they add up to {:g}", expected, sum), "mixture");
      return sim::mixture(std::move(parts), std::move(weights));
    }
    if (d.has("exponential_ms")) return sim::exponential(from_ms(d.number("exponential_ms", 0, 1e-6, limits::max_ms)));
    if (d.has("normal_ms")) {
      auto [mean, sd] = pair("normal_ms", false, "[mean, standard deviation]");
      return sim::normal(from_ms(mean), from_ms(sd));
    }
    if (d.has("lognormal_ms")) {
      const Reader l = d.child("lognormal_ms");
      l.only({"median", "sigma"});
      if (!l.has("median") || !l.has("sigma")) l.fail("both median and sigma");
      return sim::lognormal_median(from_ms(l.number("median", 0, 1e-6, limits::max_ms)), l.number("sigma", 0, 0, 10));
    }
    const Reader p = d.child("pareto_ms");
    p.only({"scale", "shape"});
    if (!p.has("scale") || !p.has("shape")) p.fail("both scale and shape");
    return sim::pareto(from_ms(p.number("scale", 0, 1e-6, limits::max_ms)), p.number("shape", 0, 0.01, 100));
  }

  // empirical_ms: an inline list of durations, or {"file": "..."} with one a line.
  std::vector<sim::Duration> samples() const;

  const json& j_;
  const std::string& file_;
  std::string path_;
  SchemaRecorder* recorder_ = nullptr;
};

}  // namespace locksim
