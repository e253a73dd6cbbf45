// PostgreSQL's model: advisory locks, per session or per transaction, exclusive or shared
// (lockfuncs.c; models/db/postgres/postgres.hpp).

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "models/db/postgres/postgres.hpp"

namespace models::db::postgres {

// --- Advisory locks ------------------------------------------------------------

Result Postgres::advisory(SessionState& s, const Statement& st) {
  const Advisory& a = st.advisory;
  const std::string column = std::string(a.op == Advisory::Op::try_lock ? "pg_try_advisory" : "pg_advisory") +
                             (a.op == Advisory::Op::unlock ? "_unlock" : a.op == Advisory::Op::unlock_all ? "_unlock_all" : "") +
                             (a.xact ? "_xact" : "") + (a.op == Advisory::Op::lock || a.op == Advisory::Op::try_lock ? "_lock" : "") +
                             (a.shared ? "_shared" : "");
  const auto answer = [&](Value v) {
    Result r;
    r.rows.push_back(Row{0, RowValues(Values{{column, std::move(v)}})});
    return r;
  };
  if (a.op == Advisory::Op::unlock_all) {
    release_session_advisory(s, std::nullopt);
    return answer(Value{std::string()});
  }
  const auto it = st.values.find("key");
  if (it == st.values.end() || !std::holds_alternative<std::int64_t>(it->second))
    throw sim::UsageError("models::db: an advisory lock's key is a bigint");
  const LockKey key{LockKey::Kind::advisory, nullptr, std::get<std::int64_t>(it->second)};
  const Mode mode = a.shared ? Mode::share : Mode::update;
  if (a.op == Advisory::Op::unlock) {
    auto state = locks_.find(key);
    if (state == locks_.end()) return answer(Value{std::int64_t{0}});
    auto& holders = state->second.holders;
    const auto h = std::find_if(holders.begin(), holders.end(), [&](const Holder& x) { return x.session == s.id && !x.xact && x.mode == mode; });
    if (h == holders.end()) return answer(Value{std::int64_t{0}});
    if (--h->count == 0) {
      holders.erase(h);
      if (std::none_of(holders.begin(), holders.end(), [&](const Holder& x) { return x.session == s.id && !x.xact; })) s.advisory.erase(key);
      wake_waiters(key);
    }
    return answer(Value{std::int64_t{1}});
  }
  const bool try_only = a.op == Advisory::Op::try_lock;
  const Got got = acquire(s, key, mode, a.xact, true, try_only ? Statement::OnLocked::skip : Statement::OnLocked::wait);
  if (try_only) return answer(Value{std::int64_t{got == Got::skipped ? 0 : 1}});
  return answer(Value{std::string()});
}

}  // namespace models::db::postgres
