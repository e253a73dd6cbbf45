// A trial's client-visible history in Jepsen's form (reports/history.hpp): invocations and
// completions in time order, a client's process renumbered after an :info, as EDN and as JSON.

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <sstream>

#include "app/runner.hpp"
#include "app/scenario.hpp"
#include "reports/history.hpp"

namespace {

using locksim::reports::Timeline;
using Type = Timeline::Operation::Type;

Timeline::Operation op(std::uint32_t client, double from_s, double to_s, Type type, std::string error = "") {
  Timeline::Operation o;
  o.client = client;
  o.f = "bind";
  o.value = {{"key", std::int64_t{client}}, {"device", std::string("d\"1")}};
  o.invoked_s = from_s;
  o.completed_s = to_s;
  o.type = type;
  o.error = std::move(error);
  return o;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

}  // namespace

TEST_CASE("a history lists invocations and completions in time order, and a process that saw :info never invokes again") {
  Timeline t;
  t.end_s = 5;
  t.history = {op(0, 0.001, 0.004, Type::ok), op(1, 0.002, 0.003, Type::info, "timeout"), op(1, 0.005, 0.006, Type::fail, "duplicate_key")};
  const auto edn = lines(locksim::reports::history_text(t, locksim::reports::HistoryFormat::edn));
  REQUIRE(edn.size() == 6);
  CHECK(edn[0] == "{:index 0, :type :invoke, :f :bind, :value {:key 0, :device \"d\\\"1\"}, :process 0, :time 1000000}");
  CHECK(edn[1] == "{:index 1, :type :invoke, :f :bind, :value {:key 1, :device \"d\\\"1\"}, :process 1, :time 2000000}");
  CHECK(edn[2] == "{:index 2, :type :info, :f :bind, :value {:key 1, :device \"d\\\"1\"}, :process 1, :time 3000000, :error \"timeout\"}");
  CHECK(edn[3] == "{:index 3, :type :ok, :f :bind, :value {:key 0, :device \"d\\\"1\"}, :process 0, :time 4000000}");
  // Client 1's next operation is process 1 + 2 (two clients): its first may still be running.
  CHECK(edn[4] == "{:index 4, :type :invoke, :f :bind, :value {:key 1, :device \"d\\\"1\"}, :process 3, :time 5000000}");
  CHECK(edn[5] == "{:index 5, :type :fail, :f :bind, :value {:key 1, :device \"d\\\"1\"}, :process 3, :time 6000000, :error \"duplicate_key\"}");

  const auto json = nlohmann::json::parse(locksim::reports::history_text(t, locksim::reports::HistoryFormat::json));
  REQUIRE(json.size() == 6);
  CHECK(json[2]["type"] == "info");
  CHECK(json[2]["process"] == 1);
  CHECK(json[2]["error"] == "timeout");
  CHECK(json[5]["process"] == 3);
  CHECK(json[5]["time"] == 6000000);
  CHECK(json[0]["value"]["device"] == "d\"1");
}

TEST_CASE("an operation the trial ended before completing ends the history as :info at the trial's end") {
  Timeline t;
  t.end_s = 2;
  Timeline::Operation pending = op(0, 1, -1, Type::info, "unfinished");
  pending.f = "9lives";  // a name that starts with a digit is no EDN keyword as it is
  t.history = {pending};
  const auto edn = lines(locksim::reports::history_text(t, locksim::reports::HistoryFormat::edn));
  REQUIRE(edn.size() == 2);
  CHECK(edn[1] == "{:index 1, :type :info, :f :n9lives, :value {:key 0, :device \"d\\\"1\"}, :process 0, :time 2000000000, :error \"unfinished\"}");
}

TEST_CASE("a trial's history holds each finished operation once, each completion as its client saw the operation end") {
  auto s = locksim::load_scenario(locksim::scenario_path("gc-pause-longer-than-lease"), {}, {"redis-set-nx-ex-drop"});
  const auto out = locksim::run_trial(s, s.strategies.front(), s.seed, locksim::TraceKept::timeline);
  const auto& h = out.timeline.history;
  REQUIRE(h.size() == out.operations);
  std::size_t ok = 0;
  for (const auto& o : h) {
    CHECK(o.f == "bind");
    CHECK(o.invoked_s <= o.completed_s);
    CHECK((o.type == Type::ok) == o.error.empty());
    ok += o.type == Type::ok ? 1 : 0;
  }
  CHECK(static_cast<double>(h.size() - ok) == out.counts.at("failed_operations"));
  for (std::size_t i = 1; i < h.size(); ++i) CHECK(h[i - 1].invoked_s <= h[i].invoked_s);
}
