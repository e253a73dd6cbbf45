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

TEST_CASE("a history lists invocations and completions in time order, each process one operation at a time, none after an :info") {
  Timeline t;
  t.end_s = 5;
  // Client 0 has two operations under way at once (an arrival does not wait for the answer).
  t.history = {op(0, 0.001, 0.004, Type::ok), op(1, 0.002, 0.003, Type::info, "timeout"), op(0, 0.0025, 0.007, Type::ok),
               op(1, 0.004, 0.006, Type::fail, "duplicate_key")};
  const auto edn = lines(locksim::reports::history_text(t, locksim::reports::HistoryFormat::edn));
  REQUIRE(edn.size() == 8);
  CHECK(edn[0] == "{:index 0, :type :invoke, :f :bind, :value {:key 0, :device \"d\\\"1\"}, :process 0, :time 1000000, :client 0}");
  CHECK(edn[1] == "{:index 1, :type :invoke, :f :bind, :value {:key 1, :device \"d\\\"1\"}, :process 1, :time 2000000, :client 1}");
  CHECK(edn[2] == "{:index 2, :type :invoke, :f :bind, :value {:key 0, :device \"d\\\"1\"}, :process 2, :time 2500000, :client 0}");
  CHECK(edn[3] ==
        "{:index 3, :type :info, :f :bind, :value {:key 1, :device \"d\\\"1\"}, :process 1, :time 3000000, :client 1, :error \"timeout\"}");
  // At 4 ms process 0's operation completes and, at the same instant, client 1's next takes
  // process 0: process 1 saw :info and runs nothing more.
  CHECK(edn[4] == "{:index 4, :type :ok, :f :bind, :value {:key 0, :device \"d\\\"1\"}, :process 0, :time 4000000, :client 0}");
  CHECK(edn[5] == "{:index 5, :type :invoke, :f :bind, :value {:key 1, :device \"d\\\"1\"}, :process 0, :time 4000000, :client 1}");
  CHECK(edn[6] == "{:index 6, :type :fail, :f :bind, :value {:key 1, :device \"d\\\"1\"}, :process 0, :time 6000000, :client 1, "
                  ":error \"duplicate_key\"}");
  CHECK(edn[7] == "{:index 7, :type :ok, :f :bind, :value {:key 0, :device \"d\\\"1\"}, :process 2, :time 7000000, :client 0}");

  const auto json = nlohmann::json::parse(locksim::reports::history_text(t, locksim::reports::HistoryFormat::json));
  REQUIRE(json.size() == 8);
  CHECK(json[3]["type"] == "info");
  CHECK(json[3]["process"] == 1);
  CHECK(json[3]["error"] == "timeout");
  CHECK(json[5]["process"] == 0);
  CHECK(json[5]["client"] == 1);
  CHECK(json[6]["time"] == 6000000);
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
  CHECK(edn[1] == "{:index 1, :type :info, :f :n9lives, :value {:key 0, :device \"d\\\"1\"}, :process 0, :time 2000000000, :client 0, "
                  ":error \"unfinished\"}");
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
