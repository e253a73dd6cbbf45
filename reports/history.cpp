#include "reports/history.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

namespace locksim::reports {
namespace {

using Fields = std::vector<std::pair<std::string, Cell>>;

// One line of the history: an invocation or a completion of operation `op`.
struct Entry {
  const Timeline::Operation* op;
  bool invoke;
  double at_s;
  std::uint64_t process;
};

std::int64_t nanoseconds(double s) { return std::llround(s * 1e9); }

const char* type_name(const Entry& e) {
  if (e.invoke) return "invoke";
  switch (e.op->type) {
    case Timeline::Operation::Type::ok: return "ok";
    case Timeline::Operation::Type::fail: return "fail";
    case Timeline::Operation::Type::info: return "info";
  }
  return "info";
}

// The history's lines in the order they happened. Jepsen's process runs one operation at a time,
// and one that saw :info never runs another; a client of locksim may have several under way
// (arrivals do not wait for answers). So each operation takes the lowest process that is free
// when it is invoked, and a process whose operation ended in :info is not taken again.
std::vector<Entry> entries(const Timeline& t) {
  std::vector<const Timeline::Operation*> ops;
  for (const auto& op : t.history) ops.push_back(&op);
  std::stable_sort(ops.begin(), ops.end(), [](const auto* a, const auto* b) { return a->invoked_s < b->invoked_s; });
  constexpr double kNever = std::numeric_limits<double>::infinity();
  std::vector<double> free_from;  // by process: when its operation completed; kNever: busy for good
  std::vector<Entry> out;
  for (const auto* op : ops) {
    const double completed = op->completed_s >= 0 ? op->completed_s : t.end_s;
    std::size_t process = 0;
    while (process < free_from.size() && free_from[process] > op->invoked_s) ++process;
    if (process == free_from.size()) free_from.push_back(0);
    free_from[process] = op->type == Timeline::Operation::Type::info ? kNever : completed;
    out.push_back({op, true, op->invoked_s, process});
    out.push_back({op, false, completed, process});
  }
  // A completion at the instant another operation is invoked comes first: the process it frees
  // may be the one invoking.
  std::stable_sort(out.begin(), out.end(), [](const Entry& a, const Entry& b) {
    return a.at_s < b.at_s || (a.at_s == b.at_s && !a.invoke && b.invoke);
  });
  return out;
}

nlohmann::ordered_json cell_json(const Cell& c) {
  if (const auto* i = std::get_if<std::int64_t>(&c)) return *i;
  if (const auto* s = std::get_if<std::string>(&c)) return *s;
  return nullptr;
}

nlohmann::ordered_json fields_json(const Fields& fields) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const auto& [name, value] : fields) out[name] = cell_json(value);
  return out;
}

// EDN's string: JSON's escapes are EDN's for the characters a history holds.
std::string edn_string(const std::string& s) { return nlohmann::json(s).dump(); }

// A keyword of a name: characters EDN's symbols do not take become '-', and a leading digit gets a
// prefix (":1213" is not a keyword).
std::string edn_keyword(const std::string& name) {
  std::string out = name.empty() || std::isdigit(static_cast<unsigned char>(name[0])) ? ":n" : ":";
  for (const char c : name) out += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ? c : '-';
  return out;
}

std::string edn_cell(const Cell& c) {
  if (const auto* i = std::get_if<std::int64_t>(&c)) return std::to_string(*i);
  if (const auto* s = std::get_if<std::string>(&c)) return edn_string(*s);
  return "nil";
}

std::string edn_fields(const Fields& fields) {
  std::string out = "{";
  for (const auto& [name, value] : fields) out += fmt::format("{}{} {}", out.size() > 1 ? ", " : "", edn_keyword(name), edn_cell(value));
  return out + "}";
}

}  // namespace

std::string history_text(const Timeline& t, HistoryFormat format) {
  const std::vector<Entry> lines = entries(t);
  std::string out;
  if (format == HistoryFormat::json) {
    out = "[";  // an array with an operation to a line
    for (std::size_t i = 0; i < lines.size(); ++i) {
      const Entry& e = lines[i];
      nlohmann::ordered_json j;
      j["index"] = i;
      j["type"] = type_name(e);
      j["f"] = e.op->f;
      j["value"] = e.invoke || e.op->result.empty() ? fields_json(e.op->value) : fields_json(e.op->result);
      j["process"] = e.process;
      j["client"] = e.op->client;
      j["time"] = nanoseconds(e.at_s);
      if (!e.invoke && !e.op->error.empty()) j["error"] = e.op->error;
      out += (i == 0 ? "\n" : ",\n") + j.dump();
    }
    return out + "\n]\n";
  }
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const Entry& e = lines[i];
    const Fields& value = e.invoke || e.op->result.empty() ? e.op->value : e.op->result;
    out += fmt::format("{{:index {}, :type :{}, :f {}, :value {}, :process {}, :time {}, :client {}", i, type_name(e),
                       edn_keyword(e.op->f), edn_fields(value), e.process, nanoseconds(e.at_s), e.op->client);
    if (!e.invoke && !e.op->error.empty()) out += ", :error " + edn_string(e.op->error);
    out += "}\n";
  }
  return out;
}

}  // namespace locksim::reports
