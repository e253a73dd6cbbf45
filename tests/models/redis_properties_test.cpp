// With no faults, the Redis model over the network answers every generated command
// sequence as a plain sequential key-value map with expiry would.

#include <catch2/catch.hpp>
#include <rapidcheck.h>
#include <rapidcheck/catch.h>

#include <map>
#include <optional>
#include <ostream>

#include "models/redis/client.hpp"
#include "support.hpp"

using namespace test;
using models::redis::Command;
using models::redis::Op;
using models::redis::Reply;

namespace {

// The reference: strings with an absolute expiry, nothing else.
class Reference {
 public:
  Reply run(const Command& c, sim::Time now) {
    auto it = data_.find(c.key);
    if (it != data_.end() && it->second.second <= now) {
      data_.erase(it);
      it = data_.end();
    }
    const bool present = it != data_.end();
    const sim::Time expiry = c.ttl > 0ms ? now + c.ttl : sim::kNever;
    switch (c.op) {
      case Op::get: return present ? Reply::bulk(it->second.first) : Reply::nil();
      case Op::set:
        if ((c.nx && present) || (c.xx && !present)) return Reply::nil();
        data_[c.key] = {c.value, expiry};
        return Reply::ok();
      case Op::del: return Reply::number(present ? (data_.erase(c.key), 1) : 0);
      case Op::pexpire:
        if (!present) return Reply::number(0);
        if (c.ttl <= 0ms) data_.erase(it);  // PEXPIRE with a non-positive TTL deletes
        else it->second.second = expiry;
        return Reply::number(1);
      case Op::pttl:
        if (!present) return Reply::number(-2);
        if (it->second.second == sim::kNever) return Reply::number(-1);
        return Reply::number(((it->second.second - now).count() + 999'999) / 1'000'000);
      case Op::incr: {
        std::int64_t n = 0;
        if (present) {
          try {
            std::size_t used = 0;
            n = std::stoll(it->second.first, &used);
            if (used != it->second.first.size()) throw std::invalid_argument("trailing");
          } catch (const std::exception&) {
            return Reply::error("ERR value is not an integer or out of range");
          }
        }
        const sim::Time keep = present ? it->second.second : sim::kNever;
        data_[c.key] = {std::to_string(n + 1), keep};
        return Reply::number(n + 1);
      }
      case Op::cas_del:
        if (!present || it->second.first != c.value) return Reply::number(0);
        data_.erase(it);
        return Reply::number(1);
      case Op::cas_pexpire:
        if (!present || it->second.first != c.value) return Reply::number(0);
        if (c.ttl <= 0ms) data_.erase(it);
        else it->second.second = expiry;
        return Reply::number(1);
      default: return Reply::error("not in the reference");
    }
  }

 private:
  std::map<std::string, std::pair<std::string, sim::Time>> data_;
};

struct Step {
  Command command;
  int gap_ms;  // before it is sent
};

}  // namespace

namespace models::redis {
// Shown by RapidCheck when the property fails.
void showValue(const Command& c, std::ostream& os) {
  os << to_string(c.op) << " " << c.key << " " << c.value << (c.nx ? " NX" : "") << (c.xx ? " XX" : "") << " ttl "
     << sim::format_duration(c.ttl);
}
void showValue(const Reply& r, std::ostream& os) { os << "reply(" << static_cast<int>(r.kind) << ", " << r.integer << ", '" << r.text << "')"; }
}  // namespace models::redis

namespace {
void showValue(const Step& s, std::ostream& os) {
  os << "after " << s.gap_ms << " ms: ";
  models::redis::showValue(s.command, os);
}

Step gen_step() {
  const Op op = *rc::gen::element(Op::get, Op::set, Op::del, Op::pexpire, Op::pttl, Op::incr, Op::cas_del, Op::cas_pexpire);
  Command c;
  c.op = op;
  c.key = *rc::gen::element<std::string>("a", "b", "c");
  c.value = *rc::gen::element<std::string>("x", "y", "1", "41");
  if (op == Op::set) {
    c.nx = *rc::gen::arbitrary<bool>();
    c.xx = !c.nx && *rc::gen::arbitrary<bool>();
  }
  c.ttl = std::chrono::milliseconds(*rc::gen::element(0, 0, 5, 20, 50));
  return Step{c, *rc::gen::inRange(0, 30)};
}

}  // namespace

TEST_CASE("the Redis model matches a sequential key-value map with expiry") {
  rc::prop("every reply equals the reference's", [] {
    const auto steps = *rc::gen::container<std::vector<Step>>(rc::gen::exec(gen_step));
    sim::Engine engine(config());
    models::Network net(engine, {sim::fixed(1ms), 0});
    models::Node app(engine, {"app-1", {}});
    models::Node node(engine, {"redis-1", {}});
    const auto service = 10us;
    models::redis::Server server(net, node, {.service = sim::fixed(service)});
    server.start();
    models::redis::Client client(net, app, server);
    std::vector<Reply> got;
    std::vector<Reply> expected;
    Reference reference;
    app.spawn("client", [&] {
      for (const Step& s : steps) {
        sim::sleep_for(std::chrono::milliseconds(s.gap_ms));
        // The command runs on the server one link latency and one service time from now.
        expected.push_back(reference.run(s.command, sim::now() + 1ms + service));
        got.push_back(client.run(s.command));
      }
    });
    RC_ASSERT(engine.run().ok());
    RC_ASSERT(got == expected);
    engine.shutdown();
  });
}
