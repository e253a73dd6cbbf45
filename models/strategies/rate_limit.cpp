// rate-limit: at most one submission per user in a window (SET rate:<user> NX PX 5000 in
// Redis; taken: reject), then check-then-insert with no unique index.

#include <fmt/format.h>

#include "models/strategies/entries.hpp"

namespace models::strategies {
namespace {
class RateLimit : public Strategy {
 public:
  using Strategy::Strategy;
  ErrorKind bind(const Request& r, Worker& w) override {
    const std::string window = fmt::format("rate:user-{}", r.client);
    if (env_.redis(w, redis::Command::set_nx_px(window, "1", millis("window_ms"))).is_nil()) return ErrorKind::rejected;
    db::Connection c = connect(r, w);
    check_then_insert(c, r, w);
    return ErrorKind::none;
  }
};
}  // namespace

Entry rate_limit() {
  return {{.name = "rate-limit",
           .description = "one submission per user per 5 s (Redis SET NX PX), then check-then-insert",
           .source = "sources/001 (non-idempotent creates: rate limiting, 5 s per user)",
           .risks = "a retry after the window inserts again; a retry inside it is rejected, so the user may see an error for a write that succeeded",
           .params = {{"window_ms", 5000, "one submission per user in this window"}},
           .needs = {.redis = true}},
          [](Env& env, const Params& p) { return std::make_unique<RateLimit>(env, p); }};
}

}  // namespace models::strategies
