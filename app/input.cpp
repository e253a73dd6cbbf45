#include "app/input.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

namespace locksim {

namespace {

// The length of the UTF-8 sequence at the start of `s`, or 0 if it is not well formed.
std::size_t sequence_length(std::string_view s) {
  const auto b = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  const auto continuation = [&](std::size_t i) { return i < s.size() && (b(i) & 0xC0) == 0x80; };
  const unsigned char c = b(0);
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return continuation(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (!continuation(1) || !continuation(2)) return 0;
    if (c == 0xE0 && b(1) < 0xA0) return 0;   // overlong
    if (c == 0xED && b(1) >= 0xA0) return 0;  // a surrogate
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!continuation(1) || !continuation(2) || !continuation(3)) return 0;
    if (c == 0xF0 && b(1) < 0x90) return 0;   // overlong
    if (c == 0xF4 && b(1) >= 0x90) return 0;  // beyond U+10FFFF
    return 4;
  }
  return 0;
}

}  // namespace

bool valid_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = sequence_length(text.substr(i));
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string quote_value(std::string_view value, std::size_t max) {
  std::string out = "\"";
  std::size_t i = 0;
  while (i < value.size() && i < max) {
    const std::size_t n = sequence_length(value.substr(i));
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

}  // namespace locksim
