#include "app/input.hpp"

#include <filesystem>
#include <fstream>

#include "app/reader.hpp"
#include "models/db/sql.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

namespace locksim {


bool valid_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = models::db::sql::utf8_length(text.substr(i));
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string quote_value(std::string_view value, std::size_t max) {
  std::string out = "\"";
  std::size_t i = 0;
  while (i < value.size() && i < max) {
    const std::size_t n = models::db::sql::utf8_length(value.substr(i));
    const auto c = static_cast<unsigned char>(value[i]);
    if (n == 0 || (n == 1 && (c < 0x20 || c == 0x7F))) {
      out += fmt::format("\\x{:02x}", c);
      ++i;
    } else {
      out.append(value.substr(i, n));
      i += n;
    }
  }
  out += "\"";
  if (i < value.size()) out += fmt::format("... ({} bytes)", value.size());
  return out;
}

std::string shown(std::string_view text, std::size_t max) {
  const bool plain = text.size() <= max && valid_utf8(text) &&
                     std::none_of(text.begin(), text.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7F; });
  return plain ? std::string(text) : quote_value(text, max);
}

std::optional<std::uint64_t> parse_u64(std::string_view text) {
  std::uint64_t v = 0;
  if (text.empty() || text.front() < '0' || text.front() > '9') return std::nullopt;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

std::uint64_t fnv1a(std::string_view bytes) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : bytes) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

void check_length(std::string_view what, std::string_view value) {
  if (value.size() > limits::max_argument_bytes)
    throw InputError(fmt::format("{}: expected at most {} bytes, got {}", what, limits::max_argument_bytes, value.size()));
}

std::vector<sim::Duration> Reader::times(const std::string& key, const std::string& what, std::size_t max_items) const {
  if (recorder_ != nullptr)
    declare(key, {{"type", "array"},
                  {"minItems", 1},
                  {"maxItems", max_items},
                  {"items", {{"type", "number"}, {"minimum", 0}, {"maximum", limits::max_ms}}}});
  const json& list = has(key) ? j_.at(key) : json();
  if (!list.is_array() || list.empty() || list.size() > max_items) fail(fmt::format("a list of 1 to {} times in ms ({})", max_items, what), key);
  std::vector<sim::Duration> out;
  double last = 0;
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (!is_ms(list[i]) || list[i].get<double>() < last)
      fail(fmt::format("times in ms, from 0 to {} and in order", limits::max_ms), key + "/" + std::to_string(i));
    last = list[i].get<double>();
    out.push_back(from_ms(last));
  }
  return out;
}

std::vector<sim::Duration> Reader::samples() const {
  const json& v = j_.at("empirical_ms");
  const std::string expected = fmt::format("a list of 1 to {} durations in ms (each from 0 to {}), or {{\"file\": \"a file of samples, "
                                           "one a line\"}}",
                                           kMaxSamples, limits::max_ms);
  std::vector<sim::Duration> out;
  if (v.is_array()) {
    if (v.empty() || v.size() > kMaxSamples || !std::all_of(v.begin(), v.end(), is_ms)) fail(expected, "empirical_ms");
    for (const json& x : v) out.push_back(from_ms(x.get<double>()));
    return out;
  }
  if (!v.is_object() || v.size() != 1 || !v.contains("file") || !v.at("file").is_string()) fail(expected, "empirical_ms");
  // Beside the scenario file, unless absolute.
  std::filesystem::path path(v.at("file").get<std::string>());
  check_length("the sample file", path.string());
  if (path.is_relative()) path = std::filesystem::path(file_).parent_path() / path;
  const std::string name = path.lexically_normal().string();
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) fail(fmt::format("a file of samples; {} is none", shown(name)), "empirical_ms/file");
  if (std::filesystem::file_size(path, ec) > limits::max_file_bytes)
    fail(fmt::format("a file of samples of at most {} bytes; {} is larger", limits::max_file_bytes, shown(name)), "empirical_ms/file");
  std::ifstream in(path);
  if (!in) fail(fmt::format("a readable file of samples; {} cannot be read", shown(name)), "empirical_ms/file");
  std::size_t line_number = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_number;
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    const auto last = line.find_last_not_of(" \t\r");
    double x = 0;
    const char* begin = line.data() + first;
    const char* end = line.data() + last + 1;
    const auto [ptr, err] = std::from_chars(begin, end, x);
    if (err != std::errc() || ptr != end || !(x >= 0 && x <= limits::max_ms))
      throw InputError(fmt::format("{}:{}: expected a duration in ms from 0 to {} (one sample a line), got {}", shown(name), line_number,
                                   limits::max_ms, quote_value(line.substr(first, last + 1 - first), 40)));
    if (out.size() == kMaxSamples) throw InputError(fmt::format("{}: expected at most {} samples", shown(name), kMaxSamples));
    out.push_back(from_ms(x));
  }
  if (out.empty()) throw InputError(fmt::format("{}: expected at least one sample (one duration in ms a line)", shown(name)));
  return out;
}

}  // namespace locksim
