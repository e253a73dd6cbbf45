#include "reports/explain.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <string_view>

#include "reports/html.hpp"

namespace locksim::reports {

namespace {

// A hold's row in the picture and its tooltip: "<lock>  <holder>".
std::string row_of(const Timeline::Bar& b) { return b.lock + "  " + b.holder.text; }

// An insert, as the diagram and the narration name it: "row 17 by app-1 worker 4, ...".
std::string label(const Timeline::Mark& m) { return fmt::format("row {} by {}", m.row, m.who.text); }

std::string at(double s) { return fmt::format("t={:.3f} s", s); }

// The bands of `node` that cover `t`.
const Timeline::Band* band_at(const Timeline& t, const std::string& node, double s) {
  for (const auto& b : t.bands)
    if (b.node == node && b.from_s <= s && s <= b.to_s) return &b;
  return nullptr;
}

std::string band_words(const Timeline::Band& b) {
  return b.kind == "paused" ? fmt::format("paused from {} to {} (a stop-the-world pause of {:.3f} s)", at(b.from_s), at(b.to_s),
                                          b.to_s - b.from_s)
                            : fmt::format("down from {} to {}", at(b.from_s), at(b.to_s));
}

// How the service ended a hold on its own, in words: a Redis key's TTL, a ZooKeeper session
// taking its lock node with it, an etcd lease taking its key, a Consul session its key.
std::string lost_words(const Timeline::Bar& b) {
  if (b.service == "zookeeper") return "its ZooKeeper session expired at the service, and its lock node with it";
  if (b.service == "etcd") return "its etcd lease expired at the service, and its key with it";
  if (b.service == "consul") return "its Consul session was invalidated at the service (no renewal for twice its TTL, or its node down), and its key released";
  if (b.service == "postgresql") return "its PostgreSQL session or transaction ended, and the advisory lock with it";
  if (b.service == "mariadb") return "its MariaDB connection closed, and the GET_LOCK lock with it";
  if (b.service == "lease") return "its lease ran out by its own clock";
  return "its lease ran out at the lock service";
}

// Why a hold ended under its holder: another's DEL removed it, or its lease ran out while the
// holder's node was paused or down.
std::string lease_story(const Timeline& t, const Timeline::Bar& b) {
  const std::string& lock = b.lock;
  const Timeline::Who& holder = b.holder;
  const double lost = lost_at(b);
  std::string out;
  if (!b.deleted_by.empty() && b.service == "etcd") {
    out = fmt::format("The Unlock of {} (its reply lost, retried in the background) at {} deleted the key of {} under {}: "
                      "Unlock deletes the key by its name, the prefix and the session's lease, the same for every lock that "
                      "session takes (a wrong unlock; a delete guarded by the create revision it locked with would have removed "
                      "nothing). {} still believed it held the lock (until {}).",
                      b.deleted_by.text, at(lost), holder.text, lock, holder.lane, at(b.to_s));
  } else if (!b.deleted_by.empty()) {
    out = fmt::format("{}'s DEL at {} removed {}'s lock on {}: {} no longer held that lock, and a plain DEL removes whoever's "
                      "lock is there (a wrong unlock; a compare-and-delete of its own value would have removed nothing). {} still "
                      "believed it held the lock (until {}).",
                      b.deleted_by.lane, at(lost), holder.lane, lock, b.deleted_by.lane, holder.lane, at(b.to_s));
  } else {
    const std::string what = b.service == "zookeeper" ? fmt::format("ZooKeeper session expired at {}, and its lock node under {} went with it", at(lost), lock)
                             : b.service == "etcd"    ? fmt::format("etcd lease expired at {}, and its key under {} went with it", at(lost), lock)
                             : b.service == "consul"
                                 ? fmt::format("Consul session was invalidated at {}, and {} was released with it", at(lost), lock)
                             : b.service == "postgresql"
                                 ? fmt::format("PostgreSQL session or transaction ended by {}, and its {} went with it", at(lost), lock)
                             : b.service == "mariadb"
                                 ? fmt::format("MariaDB connection closed by {}, and its {} went with it", at(lost), lock)
                             : b.service == "lease"
                                 ? fmt::format("lease on {} ran out by its own clock at {}", lock, at(lost))
                                                      : fmt::format("lease on {} ran out at the lock service at {}", lock, at(lost));
    out = fmt::format("{}'s {}, while {} still believed it held the lock (until {}).", holder.lane, what, holder.lane,
                      at(b.to_s));
    if (const auto* band = band_at(t, holder.node, lost))
      out += fmt::format(" Its node {} was {}: nothing ran on it, so it could neither renew the lease nor notice it ending.",
                         band->node, band_words(*band));
  }
  std::vector<std::string> next;  // who took the lock in the gap, and what they inserted
  for (const auto& other : t.bars) {
    const std::string& other_lock = other.lock;
    const Timeline::Who& other_holder = other.holder;
    if (&other == &b || other_lock != lock || other.from_s < lost || other.from_s >= b.to_s) continue;
    std::string took = fmt::format("{} at {}", other_holder.lane, at(other.from_s));
    for (const auto& m : t.inserts)
      if (m.who.lane == other_holder.lane && other.from_s <= m.at_s && m.at_s <= other.to_s)
        took += fmt::format(", which inserted at {}", at(m.at_s));
    next.push_back(std::move(took));
  }
  constexpr std::size_t kMostNextTold = 8;
  if (next.size() > kMostNextTold) {
    const std::size_t more = next.size() - kMostNextTold;
    next.resize(kMostNextTold);
    next.push_back(fmt::format("and {} more", more));
  }
  if (!next.empty())
    out += fmt::format(" Meanwhile the service granted the lock again: to {}. For that while two clients each believed "
                       "they held it.",
                       fmt::join(next, ", "));
  return out;
}

// The number a reply of the holder's own calls gave its lock node or key before it held the
// lock: ZooKeeper's "(czxid 7)", etcd's "(created at revision 2)" (the fencing token those
// recipes carry); empty where no reply said it.
std::string created_number(const Timeline& t, const Timeline::Bar& b, std::string_view marker) {
  std::string found;
  for (const auto& m : t.messages) {
    if (m.from.lane != b.holder.lane || m.returned_s < 0 || m.returned_s > b.from_s) continue;
    const std::size_t at = m.reply.rfind(marker);
    if (at == std::string::npos) continue;
    const std::size_t from = at + marker.size();
    const std::size_t to = m.reply.find(')', from);
    if (to != std::string::npos) found = m.reply.substr(from, to - from);
  }
  return found;
}

// What a lock command looked like for a service, for the narration.
std::string granted_words(const Timeline& t, const Timeline::Bar& b, const std::string& lock) {
  if (b.service == "zookeeper") {
    const std::string czxid = created_number(t, b, "(czxid ");
    return fmt::format("its lock node under {}{} is the lowest: it holds the lock", lock,
                       czxid.empty() ? "" : fmt::format(" (czxid {})", czxid));
  }
  if (b.service == "etcd") {
    const std::string revision = created_number(t, b, "(created at revision ");
    return fmt::format("its key under {}{} has the lowest create revision: it holds the lock", lock,
                       revision.empty() ? "" : fmt::format(", created at revision {},", revision));
  }
  if (b.service == "consul") {
    const std::string index = created_number(t, b, "(lock index ");
    return fmt::format("Consul granted {} to its session{}: it holds the lock", lock, index.empty() ? "" : fmt::format(" (lock index {})", index));
  }
  if (b.service == "redlock") return fmt::format("SET {} NX PX granted on a majority of the Redis instances: it holds the lock", lock);
  if (b.service == "redis") return fmt::format("SET {} NX granted: it holds the lock", lock);
  if (b.service == "postgresql") return fmt::format("PostgreSQL granted {}: it holds the lock", lock);
  if (b.service == "mariadb") return fmt::format("MariaDB granted {}: it holds the lock", lock);
  if (b.service == "lease") return fmt::format("it wrote itself a lease on {}: it holds the lock until its own clock says the lease is over", lock);
  return "acquired it";
}

// The hold of `who` on any lock at `s`, if any.
const Timeline::Bar* held_at(const Timeline& t, const std::string& lane, double s) {
  for (const auto& b : t.bars)
    if (b.holder.lane == lane && b.from_s <= s && s <= b.to_s) return &b;
  return nullptr;
}

// A client's attempt (its request names its operation), not a call to a lock service.
bool is_attempt(const Timeline::Message& m) { return m.operation >= 0; }

// Whether the reply reached the caller while it still waited.
bool answered_in_time(const Timeline::Message& m) { return m.returned_s >= 0 && (m.gave_up_s < 0 || m.returned_s <= m.gave_up_s); }

// What a reply meant, where the command alone does not say: a SET NX answered (nil) was refused.
std::string reply_words(const Timeline::Message& m) {
  if (m.request.starts_with("SET ") && m.request.find(" NX") != std::string::npos && m.reply == "(nil)")
    return "(nil): refused, another holds the key";
  return m.reply;
}

// A message told once for it and the ones like it its caller sent next (a lock's retry loop,
// keep-alives): the same callee, request and reply.
struct Folded {
  const Timeline::Message* message;
  std::size_t times = 1;
  double last_s = 0;  // the last one's sending
};

std::vector<Folded> fold_messages(const Timeline& t) {
  std::vector<Folded> out;
  std::map<std::string, std::size_t> last;  // a caller's latest entry, by its lane
  for (const auto& m : t.messages) {
    const auto it = last.find(m.from.lane);
    if (it != last.end()) {
      Folded& f = out[it->second];
      const Timeline::Message& before = *f.message;
      if (!is_attempt(m) && before.to.lane == m.to.lane && before.request == m.request && before.reply == m.reply &&
          (before.gave_up_s < 0) == (m.gave_up_s < 0)) {
        ++f.times;
        f.last_s = m.sent_s;
        continue;
      }
    }
    last[m.from.lane] = out.size();
    out.push_back({&m, 1, m.sent_s});
  }
  return out;
}

// The attempts a client sent for operation `op`, in order.
std::vector<const Timeline::Message*> attempts_of(const Timeline& t, std::int64_t op) {
  std::vector<const Timeline::Message*> out;
  for (const auto& m : t.messages)
    if (is_attempt(m) && m.operation == op) out.push_back(&m);
  return out;
}

// An operation retried after a timeout whose attempts both went on: each attempt, who took it
// up and when, and when the client gave up on it.
std::string retry_story(const Timeline& t, std::int64_t op) {
  const auto attempts = attempts_of(t, op);
  if (attempts.size() < 2) return "";
  std::vector<std::string> told;
  bool any_went_on = false;
  for (const auto* m : attempts) {
    std::string part = fmt::format("attempt {} at {}", m->attempt, at(m->sent_s));
    if (m->taken_s >= 0) part += fmt::format(", taken up by {} at {}", m->to.lane, at(m->taken_s));
    const bool went_on = m->taken_s >= 0 && m->gave_up_s >= 0 && (m->replied_s < 0 || m->replied_s > m->gave_up_s);
    if (m->gave_up_s >= 0)
      part += fmt::format("; the client got no answer in {:.3f} s and gave up on it at {}{}", m->gave_up_s - m->sent_s, at(m->gave_up_s),
                          went_on ? fmt::format(", while {} still worked on it", m->to.lane) : "");
    else if (!m->reply.empty() && m->reply != "ok")
      part += fmt::format(", answered {}", m->reply);
    any_went_on = any_went_on || went_on;
    told.push_back(std::move(part));
  }
  return fmt::format(" {} sent op {} {} times: {}.{}", attempts.front()->from.lane, op, attempts.size(), fmt::join(told, "; "),
                     any_went_on ? " Each attempt is a request of its own to the servers: an attempt its client gave up on went on "
                                   "beside its retry."
                                 : "");
}

std::string duplicate_story(const Timeline& t) {
  // A hot key may be inserted thousands of times: the first few are told, the others counted.
  constexpr std::size_t kMostInsertsTold = 8;
  const std::vector<Timeline::Mark> told(t.inserts.begin(), t.inserts.begin() + static_cast<std::ptrdiff_t>(
                                                                                      std::min(t.inserts.size(), kMostInsertsTold)));
  std::vector<std::string> parts;
  for (const auto& m : told) parts.push_back(fmt::format("{} at {}", label(m), at(m.at_s)));
  std::set<std::string> keys;
  for (const auto& m : t.inserts) keys.insert(m.key);
  std::string out = fmt::format("{} inserted more than once: {}{}.",
                                keys.size() <= 1 ? std::string("One key was") : fmt::format("{} keys were", keys.size()),
                                fmt::join(parts, "; "),
                                t.inserts.size() > told.size() ? fmt::format("; and {} more inserts", t.inserts.size() - told.size())
                                                               : std::string());
  for (const auto& m : told) {
    const std::string lane = m.who.lane;
    const Timeline::Bar* hold = held_at(t, lane, m.at_s);
    if (hold == nullptr) {
      out += t.bars.empty() ? "" : fmt::format(" {} inserted without holding a lock.", lane);
      continue;
    }
    const std::string& lock = hold->lock;
    if (!hold->deleted_by.empty() && lost_at(*hold) < m.at_s) {
      out += fmt::format(" {} inserted believing it held {}, but {}'s {} had removed its lock at {}", lane, lock,
                         hold->deleted_by.lane, wrong_unlock_words(*hold), at(lost_at(*hold)));
      out += ": it went on still believing it held the lock, and inserted what another holder had inserted.";
    } else if (lost_at(*hold) >= 0 && lost_at(*hold) < m.at_s) {
      const char* lost = hold->service == "zookeeper" ? "its ZooKeeper session had expired"
                         : hold->service == "etcd"    ? "its etcd lease had expired"
                         : hold->service == "consul"  ? "its Consul session had been invalidated"
                                                      : "its lease had run out";
      out += fmt::format(" {} inserted believing it held {}, but {} at {}", lane, lock, lost, at(lost_at(*hold)));
      if (const auto* band = band_at(t, m.who.node, lost_at(*hold))) out += fmt::format(" while its node was {}", band_words(*band));
      out += ": it woke still believing it held the lock, and inserted again what another holder had inserted.";
    } else {
      out += fmt::format(" {} held {} when it inserted.", lane, lock);
    }
  }
  std::set<std::int64_t> ops;
  for (const auto& m : told)
    if (m.who.operation >= 0) ops.insert(m.who.operation);
  for (const auto op : ops) out += retry_story(t, op);
  if (t.inserts.size() > 1 && t.statements.empty())
    out += " Nothing in the database refused the second insert: no unique index on the key stood behind the lock.";
  return out;
}

// A fencing write as its table, token and key: "UPDATE <table> SET token = <n> WHERE lock_key =
// '<key>' AND token < <n>", the same n twice; nullopt for any other statement.
struct FenceWrite {
  std::string table, token, key;
};
std::optional<FenceWrite> fence_write(std::string_view sql) {
  const auto take = [&](std::string_view word) {
    if (!sql.starts_with(word)) return false;
    sql.remove_prefix(word.size());
    return true;
  };
  const auto until = [&](std::string_view stop) -> std::optional<std::string> {
    const std::size_t at = sql.find(stop);
    if (at == std::string_view::npos || at == 0) return std::nullopt;
    std::string out(sql.substr(0, at));
    sql.remove_prefix(at + stop.size());
    return out;
  };
  const auto digits = [](const std::string& s) { return s.find_first_not_of("0123456789") == std::string::npos; };
  if (!take("UPDATE ")) return std::nullopt;
  auto table = until(" SET token = ");
  auto token = until(" WHERE lock_key = '");
  auto key = until("' AND token < ");
  if (!table || !token || !key || !digits(*token) || sql != *token || key->find('\'') != std::string::npos) return std::nullopt;
  return FenceWrite{std::move(*table), std::move(*token), std::move(*key)};
}

// A fencing write that changed nothing, in the lesson's words: "token 1 refused: the fence of
// 'openid:0' had seen token 2, raised by app-2 worker 4, ... at t=40.040 s". The token it had
// seen is the last one an earlier fencing write raised it to. Empty for any other statement.
std::string fence_words(const Timeline& t, const Timeline::Statement& st) {
  if (st.error != 0 || st.affected != 0) return "";
  const auto refused = fence_write(st.sql);
  if (!refused) return "";
  const Timeline::Statement* raised = nullptr;
  std::string seen;
  for (const auto& other : t.statements) {
    if (&other == &st || other.to_s > st.to_s || other.error != 0 || other.affected == 0) continue;
    const auto w = fence_write(other.sql);
    if (w && w->table == refused->table && w->key == refused->key && (raised == nullptr || other.to_s >= raised->to_s)) {
      raised = &other;
      seen = w->token;
    }
  }
  if (raised == nullptr) return fmt::format(" (token {} refused: the fence of '{}' had seen a later token)", refused->token, refused->key);
  return fmt::format(" (token {} refused: the fence of '{}' had seen token {}, raised by {} at {})", refused->token, refused->key, seen,
                     raised->who.text, at(raised->to_s));
}

// The locks of a lock table, holder by holder: "s1: X on t.PRIMARY (1), X on t.uk ('a', 1);
// s2: S gap on t.uk gap before ('b', 2)"; "none".
std::string held_by_each(const Timeline::Statement& st) {
  const std::vector<HeldLock>& held = st.held;
  if (held.empty()) return "none";
  std::vector<std::pair<std::string, std::vector<std::string>>> by;  // in the order holders first appear
  for (const HeldLock& l : held) {
    auto it = std::find_if(by.begin(), by.end(), [&](const auto& b) { return b.first == l.who; });
    if (it == by.end()) it = by.insert(by.end(), {l.who, {}});
    it->second.push_back(held_words(l));
  }
  std::vector<std::string> parts;
  for (const auto& [who, locks] : by) parts.push_back(fmt::format("{}: {}", who, fmt::join(locks, ", ")));
  return fmt::format("{}{}", fmt::join(parts, "; "), st.held_cut ? fmt::format("; and more (the first {} locks)", held.size()) : "");
}

// What `who` held when the statement `st` ended, as the lock table just before then showed it
// (the last statement that answered earlier): "X on t.PRIMARY (1)"; empty where none is known.
std::string held_before(const Timeline& t, const Timeline::Statement& st, const std::string& who) {
  const Timeline::Statement* last = nullptr;
  for (const auto& other : t.statements)
    if (other.to_s < st.to_s && &other != &st && (last == nullptr || other.to_s >= last->to_s)) last = &other;
  if (last == nullptr) return "";
  std::vector<std::string> mine;
  for (const HeldLock& l : last->held)
    if (l.who == who) mine.push_back(held_words(l));
  return fmt::format("{}", fmt::join(mine, ", "));
}

// The lock each member of a deadlock's cycle waited for when the cycle closed, from its own
// statements: "s2 waited for X on t.uk ('a'), behind s1" (the last wait of each, up to the
// victim's statement). Empty where the trial kept none of them.
std::string cycle_waits(const Timeline& t, const Timeline::Statement& st) {
  std::vector<std::string> sides;
  for (const auto& who : st.cycle) {
    const Timeline::Statement* last = nullptr;
    for (const auto& other : t.statements)
      if (other.who.text == who.text && !other.waits.empty() && other.from_s <= st.to_s) last = &other;
    if (last == nullptr) continue;
    const LockWait& w = last->waits.back();
    const std::string place = w.table.empty() ? "" : w.index.empty() ? w.table + " " : w.table + "." + w.index + " ";
    const std::string held = held_before(t, st, who.text);
    sides.push_back(fmt::format("{}{} ran {} and waited for {} on {}{}{}", who.lane, held.empty() ? "" : ", holding " + held, last->sql,
                                w.mode, place, w.entry,
                                w.behind.empty() ? std::string() : fmt::format(", a lock {} held", fmt::join(w.behind, " and "))));
  }
  return sides.empty() ? std::string() : fmt::format(" Its locks: {}.", fmt::join(sides, "; "));
}

std::string deadlock_story(const Timeline& t, const Timeline::Statement& st) {
  std::vector<std::string> lanes;
  for (const auto& who : st.cycle) lanes.push_back(who.lane);
  const bool innodb = st.code.empty() || st.code == "1213";
  std::string out = fmt::format("A deadlock at {}: {} each held a lock another on the cycle waited for ({}). {} found the "
                                "cycle when {} asked for a lock, chose {} as the victim and ended its statement with {}, rolling "
                                "back its {}",
                                at(st.to_s), fmt::join(lanes, " and "), fmt::join(lanes, " -> "), innodb ? "InnoDB" : "PostgreSQL",
                                st.who.lane,
                                lanes.empty() ? st.who.lane : lanes.front(), innodb ? "1213" : st.code,
                                st.undone.empty() ? "transaction" : undone_words(st));
  out += "." + cycle_waits(t, st);
  out += " The other went on once its lock was free. Two transactions that take the same locks in different orders, "
         "or a shared lock each then needs exclusive, deadlock: retry the victim's transaction.";
  return out;
}

// A paragraph with its times ("t=5.910 s") taken out: paragraphs alike but for when.
std::string without_times(const std::string& p) {
  std::string out;
  for (std::size_t i = 0; i < p.size();) {
    if (p.compare(i, 2, "t=") == 0 && i + 2 < p.size() && std::isdigit(static_cast<unsigned char>(p[i + 2]))) {
      std::size_t j = i + 2;
      while (j < p.size() && (std::isdigit(static_cast<unsigned char>(p[j])) || p[j] == '.')) ++j;
      out += "t=#";
      i = j;
      continue;
    }
    out += p[i++];
  }
  return out;
}

// The first time a paragraph names ("t=5.910 s").
std::string first_time(const std::string& p) {
  const auto at = p.find("t=");
  if (at == std::string::npos) return "";
  const auto end = p.find(" s", at);
  return end == std::string::npos ? "" : p.substr(at, end + 2 - at);
}

// Paragraphs alike but for their times told once, with how many times more and when.
std::vector<std::string> collapse_repeats(std::vector<std::string>&& paragraphs) {
  constexpr std::size_t kMostTimes = 10;
  std::vector<std::string> out;
  std::vector<std::vector<std::string>> again;  // of each paragraph kept: when the same happened again
  std::map<std::string, std::size_t> kept;       // a paragraph without its times -> its index in out
  for (auto& p : paragraphs) {
    const auto [it, fresh] = kept.try_emplace(without_times(p), out.size());
    if (fresh) {
      out.push_back(std::move(p));
      again.emplace_back();
    } else {
      again[it->second].push_back(first_time(p));
    }
  }
  for (std::size_t i = 0; i < out.size(); ++i) {
    const auto& when = again[i];
    if (when.empty()) continue;
    const std::size_t listed = std::min(when.size(), kMostTimes);
    out[i] += fmt::format(" The same happened {} more time{}: at {}{}.", when.size(), when.size() == 1 ? "" : "s",
                          fmt::join(when.begin(), when.begin() + static_cast<std::ptrdiff_t>(listed), ", "),
                          when.size() > listed ? ", ..." : "");
  }
  return out;
}

}  // namespace

bool failed(const Timeline::Statement& st) { return st.error != 0; }

std::string outcome_words(const Timeline::Statement& st) {
  if (failed(st)) return st.message;
  using Kind = Timeline::Statement::Kind;
  if (st.kind == Kind::select) return fmt::format("{} row{}", st.rows, st.rows == 1 ? "" : "s");
  if (st.kind == Kind::other) return "ok";
  std::string out = fmt::format("{} affected", st.affected);
  if (st.insert_id != 0 && st.affected != 0) out += fmt::format(", id {}", st.insert_id);
  if (st.warnings != 0) out += fmt::format(", {} warning{}", st.warnings, st.warnings == 1 ? "" : "s");
  return out;
}

std::string undone_words(const Timeline::Statement& st) {
  if (st.undone.empty()) return "";
  return fmt::format("{} ({} row change{})", st.undone, st.undone_rows, st.undone_rows == 1 ? "" : "s");
}

const char* wrong_unlock_words(const Timeline::Bar& b) { return b.service == "etcd" ? "retried Unlock" : "DEL"; }

double lost_at(const Timeline::Bar& b) {
  if (b.service_to_s >= 0) return b.service_to_s;
  return b.lease_to_s >= 0 && b.lease_to_s < b.to_s ? b.lease_to_s : -1;
}

std::string ended_words(const Timeline::Bar& b) {
  using End = Timeline::End;
  const std::string at = fmt::format("t={:.3f} s", b.service_to_s);
  std::string out;
  switch (b.end) {
    case End::held: break;
    case End::released: out = "released"; break;
    case End::expired: out = "expired at " + at; break;
    case End::deleted: out = fmt::format("deleted by {} at {} (wrong unlock)", b.deleted_by.text, at); break;
    case End::session_expired:
    case End::lease_expired:
      out = fmt::format("{}{} ({})", b.end == End::lease_expired ? "lease expired" : b.service == "consul" ? "session invalidated" : "session expired",
                        b.service_to_s >= 0 ? " at " + at : "", b.end == End::lease_expired ? "etcd" : b.service == "consul" ? "Consul" : "ZooKeeper");
      break;
    case End::lost:
      out = b.service == "postgresql" ? "ended with its session or transaction"
            : b.service == "mariadb"  ? "ended with its connection"
                                      : "lost at the service";
      break;
    case End::crashed: out = "node crashed"; break;
  }
  if (!b.renewals_s.empty())
    out += fmt::format("{}renewed {} time{}", out.empty() ? "" : ", ", b.renewals_s.size(), b.renewals_s.size() == 1 ? "" : "s");
  if (!b.removed.empty())
    out += fmt::format("{}its {} removed {}'s lock (wrong unlock)", out.empty() ? "" : "; ", wrong_unlock_words(b), b.removed.text);
  return out;
}

namespace {

// Each event of the trial, at its time, in words; in time order.
std::vector<std::pair<double, std::string>> event_lines(const Timeline& t) {
  std::vector<std::pair<double, std::string>> lines;
  for (const auto& b : t.bands)
    lines.emplace_back(b.from_s, b.kind == "paused" ? fmt::format("{} paused {:.3f} s (a stop-the-world pause)", b.node, b.to_s - b.from_s)
                                                    : fmt::format("{} crashed; back at t={:.3f} s", b.node, b.to_s));
  for (const auto& b : t.bars) {
    const std::string& lock = b.lock;
    const std::string& holder = b.holder.text;
    lines.emplace_back(b.from_s, b.service.empty() ? fmt::format("{} acquired it", row_of(b))
                                                   : fmt::format("{}: {}", holder, granted_words(t, b, lock)));
    // Renewals: the first few, then how many in all.
    constexpr std::size_t kRenewalsTold = 3;
    for (std::size_t i = 0; i < b.renewals_s.size() && i < kRenewalsTold; ++i)
      lines.emplace_back(b.renewals_s[i], fmt::format("{}: the watchdog renewed the lease on {} (PEXPIRE)", holder, lock));
    if (b.renewals_s.size() > kRenewalsTold)
      lines.emplace_back(b.renewals_s.back(), fmt::format("{}: the watchdog renewed the lease on {} {} times in all", holder, lock,
                                                          b.renewals_s.size()));
    if (!b.deleted_by.empty())
      lines.emplace_back(lost_at(b), fmt::format("{}: {} of {} removed the lock of {} (a wrong unlock), which still believes it holds it",
                                                 b.deleted_by.text, wrong_unlock_words(b), lock, b.holder.text));
    else if (lost_at(b) >= 0)  // only a lease that ran out while its holder still held on
      lines.emplace_back(lost_at(b), fmt::format("{}: {}", row_of(b), lost_words(b)));
    std::string end = fmt::format("{} stopped believing it holds it", row_of(b));
    if (b.end == Timeline::End::released)
      end = fmt::format("{}: unlocked {}; its own lock was still there and went", holder, lock);
    else if (!b.removed.empty())
      end = fmt::format("{}: {} of {} removed {}'s lock, not its own (a wrong unlock)", holder, wrong_unlock_words(b), lock,
                        b.removed.lane);
    else if (b.end == Timeline::End::session_expired && b.service == "consul")
      end = fmt::format("{}: its Consul session had been invalidated and {} released; it let go", holder, lock);
    else if (b.end == Timeline::End::session_expired)
      end = fmt::format("{}: its ZooKeeper session had expired and its lock node with it; it let go of {}", holder, lock);
    else if (b.end == Timeline::End::lease_expired)
      end = fmt::format("{}: its etcd lease had expired and its key with it; it let go of {}", holder, lock);
    else if (b.end == Timeline::End::crashed)
      end = fmt::format("{}: its node crashed while it held {}", holder, lock);
    else if (b.end == Timeline::End::lost && b.service == "postgresql")
      end = fmt::format("{}: its PostgreSQL session or transaction had ended, and {} with it; it let go", holder, lock);
    else if (b.end == Timeline::End::lost && b.service == "mariadb")
      end = fmt::format("{}: its MariaDB connection had closed, and {} with it; it let go", holder, lock);
    else if (lost_at(b) >= 0)
      end = fmt::format("{}: unlocked {}, which was no longer its own", holder, lock);
    lines.emplace_back(b.to_s, std::move(end));
  }
  for (const auto& m : t.inserts)
    lines.emplace_back(m.at_s, fmt::format("inserted {} ({})", label(m), m.first ? "the key's first row" : "a duplicated key"));
  for (const auto& f : fold_messages(t)) {
    const Timeline::Message& m = *f.message;
    if (is_attempt(m)) {
      lines.emplace_back(m.sent_s, fmt::format("{} sends {} to {}", m.from.lane, m.request, m.to.node));
      if (m.taken_s >= 0)
        lines.emplace_back(m.taken_s, fmt::format("{} takes up {} from {} ({:.3f} s after it was sent)", m.to.lane, m.request, m.from.lane,
                                                  m.taken_s - m.sent_s));
      else if (m.arrived_s >= 0)
        lines.emplace_back(m.arrived_s, fmt::format("{} receives {} from {}; no worker takes it up", m.to.lane, m.request, m.from.lane));
      if (m.gave_up_s >= 0)
        lines.emplace_back(m.gave_up_s, fmt::format("{}: no answer to {} in {:.3f} s: it gives up on that attempt", m.from.lane, m.request,
                                                    m.gave_up_s - m.sent_s));
      if (m.replied_s >= 0)
        lines.emplace_back(m.replied_s, fmt::format("{} answers {}: {}{}", m.to.lane, m.request, m.reply,
                                                    answered_in_time(m) ? "" : fmt::format(", but {} is no longer waiting", m.from.lane)));
      continue;
    }
    std::string line = fmt::format("{} -> {}: {}", m.from.lane, m.to.lane, m.request);
    if (answered_in_time(m))
      line += " -> " + reply_words(m);
    else if (m.gave_up_s >= 0)
      line += fmt::format(" -> no answer in {:.3f} s{}", m.gave_up_s - m.sent_s, m.replied_s >= 0 ? " (the service did act on it)" : "");
    if (f.times > 1) line += fmt::format(" ({} times in all, the last at {})", f.times, at(f.last_s));
    lines.emplace_back(m.sent_s, std::move(line));
  }
  for (const auto& st : t.statements) {
    std::string line = fmt::format("{}: {} -> {}{}", st.who.text, st.sql, outcome_words(st), fence_words(t, st));
    // Sent before its node stopped, run by the database while it is stopped: the database's
    // doing, not the stopped node's.
    if (const auto* band = band_at(t, st.who.node, st.from_s); band != nullptr && band->from_s < st.from_s)
      line = fmt::format("the database runs {} for {}, sent before its node was {} -> {}", st.sql, st.who.text,
                         band->kind == "paused" ? "paused" : "down", outcome_words(st));
    if (!st.undone.empty()) line += fmt::format(" (rolled back the {})", undone_words(st));
    for (const auto& w : st.waits) line += fmt::format("\n{:13}  waited for {}", "", wait_words(w));
    if (!st.cycle.empty()) line += fmt::format("\n{:13}  deadlock cycle: {} (victim: {})", "", fmt::join(texts_of(st.cycle), " -> "), st.cycle.front().text);
    // A session's step (no client's operation): the locks each transaction holds after it.
    if (st.who.operation < 0 && st.who.worker == 0) line += fmt::format("\n{:13}  locks held once it answered: {}", "", held_by_each(st));
    lines.emplace_back(st.from_s, std::move(line));
  }
  std::stable_sort(lines.begin(), lines.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  return lines;
}

}  // namespace

std::size_t narrated_events(const Timeline& t) { return event_lines(t).size(); }

std::vector<std::string> narrate(const Timeline& t) {
  const auto lines = event_lines(t);
  std::vector<std::string> out;
  // A long trial keeps its beginning and its end: what led to the violation, and how it ended.
  const std::size_t head = lines.size() > kMostNarrated ? kMostNarrated * 3 / 4 : lines.size();
  const std::size_t tail = lines.size() > kMostNarrated ? kMostNarrated - head - 1 : 0;
  for (std::size_t i = 0; i < head; ++i) out.push_back(fmt::format("t={:.3f} s  {}", lines[i].first, lines[i].second));
  if (tail > 0) {
    out.push_back(fmt::format("... {} more events folded ...", lines.size() - head - tail));
    for (std::size_t i = lines.size() - tail; i < lines.size(); ++i)
      out.push_back(fmt::format("t={:.3f} s  {}", lines[i].first, lines[i].second));
  }
  return out;
}

std::string safe_story(const Timeline& t) {
  std::string out = "No checker fired in this trial.";
  std::size_t refused = 0;
  const Timeline::Statement* first = nullptr;
  for (const auto& st : t.statements)
    if (st.error == 1062 || st.code == "23505") {
      if (refused++ == 0) first = &st;
    }
  if (first != nullptr)
    out += fmt::format(" The unique index refused {} insert{} of a key already there, the first at {} by {} ({}).", refused,
                       refused == 1 ? "" : "s", at(first->from_s), first->who.lane, first->message);
  std::size_t holds = 0, lost = 0;
  for (const auto& b : t.bars) {
    ++holds;
    if (lost_at(b) >= 0) ++lost;
  }
  if (holds > 0 && lost == 0)
    out += fmt::format(" Each of the {} lock hold{} ended while the service still granted it: no holder worked past its lease.", holds,
                       holds == 1 ? "" : "s");
  if (first == nullptr && holds == 0 && !t.statements.empty())
    out += fmt::format(" Its {} statement{} ran as told below.", t.statements.size(), t.statements.size() == 1 ? "" : "s");
  return out;
}

std::vector<std::string> explain(const Timeline& t, const std::vector<std::string>& fired,
                                 const std::map<std::string, std::string>& meanings) {
  std::vector<std::string> out;
  std::set<std::string> told;  // the checkers a paragraph explains
  if (!t.inserts.empty()) {
    out.push_back(duplicate_story(t));
    told.insert("duplicate_rows");
    told.insert("duplicate_keys");
  }
  for (const auto& b : t.bars)
    if (lost_at(b) >= 0) {
      out.push_back(lease_story(t, b));
      if (!b.deleted_by.empty()) told.insert("wrong_unlocks");
      told.insert("lease_expiry_violations");
      told.insert("overlapping_holders");
      told.insert("max_concurrent_holders");
    }
  for (const auto& st : t.statements) {
    if (!st.cycle.empty()) {
      out.push_back(deadlock_story(t, st));
      told.insert("deadlocks");
      told.insert("errors." + (st.code.empty() ? std::string("1213") : st.code));
    } else if (st.error == 1205) {
      const std::string code = st.code.empty() ? "1205" : st.code;
      out.push_back(fmt::format("At {} {} gave up waiting for a lock ({}, the lock wait timeout) while running {}{}; {}.",
                                at(st.to_s), st.who.lane, code, st.sql,
                                st.waited_for.empty() ? "" : fmt::format(", behind {}", fmt::join(texts_of(st.waited_for), ", ")),
                                st.undone == "transaction" ? "its whole transaction was rolled back"
                                                           : "only the statement was rolled back, and the transaction stays open"));
      told.insert("errors." + code);
    }
  }
  out = collapse_repeats(std::move(out));
  for (const auto& f : fired) {
    const std::string name = f.substr(0, f.find(' '));
    if (told.count(name)) continue;
    const auto meaning = meanings.find(name);
    out.push_back(meaning != meanings.end()
                      ? fmt::format("The checker {} fired ({}): {}.", name, f.substr(f.find(' ') + 1), meaning->second)
                      : fmt::format("The checker {} fired ({}); docs/metrics.md says what it counts.", name, f));
  }
  if (fired.empty()) out.push_back(safe_story(t));
  return out;
}

namespace {

// The first `n` bytes of `text`, backed off to a whole UTF-8 character.
std::string prefix(const std::string& text, std::size_t n) {
  n = std::min(n, text.size());
  while (n > 0 && n < text.size() && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
  return text.substr(0, n);
}

std::string cut(const std::string& text, std::size_t most) {
  return text.size() <= most ? text : prefix(text, most - 3) + "...";
}

// `text` cut to `most` bytes keeping its end `keep_end` (a statement's outcome) where it can.
std::string cut_keeping(const std::string& text, const std::string& keep_end, std::size_t most) {
  if (text.size() <= most) return text;
  if (keep_end.empty() || !text.ends_with(keep_end) || keep_end.size() + 8 > most) return cut(text, most);
  return prefix(text, most - 3 - keep_end.size()) + "..." + keep_end;
}

// The width of `text` in the diagram's font (11 px sans-serif), from DejaVu Sans's advance
// widths (the widest of the common sans-serif fonts), a little generous.
double text_width(const std::string& text) {
  double em = 0;
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if ((c & 0xC0) == 0x80) continue;  // a UTF-8 continuation byte
    if (c >= 0x80) em += 1.0;
    else if (std::strchr("iljI.,:;'|!", c) != nullptr) em += 0.34;
    else if (std::strchr(" tfr()[]{}-/\\", c) != nullptr) em += 0.42;
    else if (std::strchr("mwMW@%", c) != nullptr) em += 1.0;
    else if (std::isupper(c) || std::strchr("<>=+~#&", c) != nullptr) em += 0.84;
    else em += 0.66;
  }
  return em * 11.0 * 1.03;
}

// A line or an arrow's head, in the diagram's coordinates: the words of an event are laid out
// where none runs through them.
struct Segment {
  double x1, y1, x2, y2;
  bool box = false;  // the rectangle between the two corners (an arrow's head), not the line
};

struct Placed {
  std::vector<std::string> lines;  // empty: no room for any words
  int x = 0;
  bool anchor_end = false;  // x is where the words end (to the left of the mark)
  std::size_t shown() const {
    std::size_t n = 0;
    for (const auto& line : lines) n += line.size();
    return n;
  }
};

// An event's words: at most three lines of about a lane's width, the distance between two.
constexpr std::size_t kMostLines = 3;
constexpr int kLine = 13;
constexpr double kLineWidth = 240;
constexpr std::size_t kMostChars = 36 * kMostLines;

// `text` in lines of at most `room` pixels, broken between words (inside a word only where the
// word alone is wider).
std::vector<std::string> wrap(const std::string& text, double room) {
  std::vector<std::string> lines;
  std::string line;
  const auto put = [&](std::string word) {
    while (text_width(word) > room) {  // a word wider than a line: as much as fits, then the rest
      std::size_t n = word.size();
      while (n > 1 && text_width(prefix(word, n)) > room) --n;
      const std::string head = prefix(word, n);
      if (head.empty()) break;
      lines.push_back(head);
      word = word.substr(head.size());
    }
    line = std::move(word);
  };
  std::size_t from = 0;
  while (from <= text.size()) {
    std::size_t to = text.find(' ', from);
    if (to == std::string::npos) to = text.size();
    std::string word = text.substr(from, to - from);
    if (line.empty()) put(std::move(word));
    else if (text_width(line + " " + word) <= room) line += " " + word;
    else {
      lines.push_back(std::move(line));
      put(std::move(word));
    }
    from = to + 1;
  }
  if (!line.empty()) lines.push_back(std::move(line));
  return lines;
}

// The lines `text` takes at a lane's width, up to kMostLines: the room its row is given.
std::size_t lines_needed(const std::string& text, const std::string& keep_end) {
  if (text.empty()) return 1;
  return std::clamp<std::size_t>(wrap(cut_keeping(text, keep_end, kMostChars), kLineWidth).size(), 1, kMostLines);
}

// The words of an event whose mark is at x, from `baseline` (the first line's) down `lines`
// lines: beside the mark where no arrow or head in `drawn` runs through them, wrapped to the
// room found, cut (keeping `keep_end`) where they do not fit. Tried: right of the mark, right
// of each arrow crossing there, left of the mark; the one showing the most words wins.
Placed place_words(const std::string& text, const std::string& keep_end, int x, int offset, int baseline, std::size_t lines,
                   int lane_width, const std::vector<Segment>& drawn) {
  const double top = baseline - 10.5;  // DejaVu Sans at 11 px: ascent 10.2, descent 2.6
  const double bottom = baseline + kLine * static_cast<double>(lines - 1) + 2.8;
  std::vector<std::pair<double, double>> blocked;  // x intervals an arrow crosses at the words' height
  for (const Segment& g : drawn) {
    const double ya = std::min(g.y1, g.y2), yb = std::max(g.y1, g.y2);
    if (yb < top || ya > bottom) continue;
    double xa = std::min(g.x1, g.x2), xb = std::max(g.x1, g.x2);
    if (!g.box && g.y1 != g.y2) {  // the part of the line between the words' top and bottom
      const auto x_at = [&](double y) { return g.x1 + (g.x2 - g.x1) * (y - g.y1) / (g.y2 - g.y1); };
      const double u = x_at(std::max(ya, top)), v = x_at(std::min(yb, bottom));
      xa = std::min(u, v);
      xb = std::max(u, v);
    }
    blocked.emplace_back(xa - 3, xb + 3);
  }
  std::sort(blocked.begin(), blocked.end());
  const std::string natural = cut_keeping(text, keep_end, kMostChars);
  // The most of the words that fits in `lines` lines of `room` pixels.
  const auto fit = [&](double room) -> std::vector<std::string> {
    room = std::min(room, kLineWidth);
    if (auto whole = wrap(natural, room); whole.size() <= lines) return whole;
    for (std::size_t n = natural.size(); n > 4; --n) {
      std::string tried = cut_keeping(text, keep_end, n);
      if (tried.size() > n) tried = cut(text, n);
      if (auto wrapped = wrap(tried, room); wrapped.size() <= lines)
        return tried.size() <= 4 ? std::vector<std::string>{} : wrapped;
    }
    return {};
  };
  const double widest = text_width(natural) + 1;
  const auto free_from = [&](double start) {  // room to the right of `start`; < 0: start is blocked
    double room = widest;
    for (const auto& [a, b] : blocked) {
      if (a <= start && start <= b) return -1.0;
      if (a > start) room = std::min(room, a - start);
    }
    return room;
  };
  Placed best;
  const auto consider = [&](std::vector<std::string> words, int at, bool end) {
    Placed p{std::move(words), at, end};
    if (p.shown() > best.shown()) best = std::move(p);
  };
  std::vector<double> starts{double(x + offset)};
  for (const auto& [a, b] : blocked)
    if (b > x + offset && b < x + lane_width - 40) starts.push_back(std::ceil(b));
  for (const double start : starts)
    if (const double room = free_from(start); room > 0) consider(fit(room), static_cast<int>(start), false);
  // Left of the mark: from x - 7 leftwards to the nearest arrow, within the lane.
  const double end = x - 7;
  double room = lane_width - 20;
  bool open = true;
  for (const auto& [a, b] : blocked) {
    if (a <= end && end <= b) open = false;
    if (b < end) room = std::min(room, end - b);
  }
  if (open) consider(fit(room), static_cast<int>(end), true);
  return best;
}

// One row of the diagram: an event at its time, in its lane.
struct Row {
  double at_s = 0;
  std::string lane;
  std::string text;    // shown (cut to the lane's width)
  std::string full;    // the tooltip
  std::string colour;  // of its mark
  std::vector<std::string> arrows_to{};  // lanes it waits behind, or whose lock its DEL removed
  // A message's end: `link` numbers the message (a request or a reply), drawn as an arrow from
  // the row that sends it to the row that receives it.
  std::size_t link = kNoLink;
  bool receives = false;
  std::string to_lane{};  // set where a message's sending and receiving fell on one row
  bool round_trip = false;  // and its reply came back on it too
  std::string keep_end{};   // the words a cut keeps at the end (a statement's outcome)
  bool removes = false;     // a DEL that removed the lock of the lanes in arrows_to (else: it waited behind them)
  static constexpr std::size_t kNoLink = ~std::size_t{0};
};

// A message drawn as an arrow: from the sender's lane to the receiver's, dashed for a reply.
struct Link {
  std::string from, to;  // lanes
  std::string colour;
  bool reply = false;
  bool lost = false;  // never received: lost, held past the trial, or never taken up
  std::string title;  // the arrow's tooltip
};

}  // namespace

std::string sequence_svg(const Timeline& t, const std::string& title, std::size_t max_lanes, std::size_t max_rows, double focus_s) {
  // The lanes involved in what went wrong come first: inserters of duplicated keys, sessions
  // on a deadlock cycle or waiting, holders whose lease ran out; then the rest in order of
  // first appearance.
  std::vector<std::string> order;
  std::map<std::string, int> weight;
  std::map<std::string, std::string> node_of_lane;
  const auto see = [&](const Timeline::Who& who, int w) {
    if (!weight.count(who.lane)) order.push_back(who.lane);
    weight[who.lane] += w;
    node_of_lane.try_emplace(who.lane, who.node);
  };
  const auto node_of = [&](const std::string& lane) {
    const auto it = node_of_lane.find(lane);
    return it == node_of_lane.end() ? lane : it->second;
  };
  for (const auto& m : t.inserts) see(m.who, 100);
  for (const auto& st : t.statements) {
    see(st.who, st.cycle.empty() && st.waits.empty() ? 1 : 50);
    for (const auto& w : st.waited_for) see(w, 20);
  }
  for (const auto& b : t.bars) {
    see(b.holder, lost_at(b) >= 0 ? 60 : 2);
    if (!b.deleted_by.empty()) see(b.deleted_by, 60);
  }
  for (const auto& b : t.bands) {
    bool any = false;
    for (const auto& lane : order) any = any || node_of(lane) == b.node;
    if (!any) see({b.node, b.node, b.node}, 10);
  }
  const std::vector<Folded> messages = fold_messages(t);
  std::set<std::string> services;  // lanes that only answer calls: Redis nodes, ZooKeeper, etcd
  for (const auto& f : messages) {
    const Timeline::Message& m = *f.message;
    see(m.from, is_attempt(m) ? 40 : 1);
    see(m.to, is_attempt(m) ? 1 : 30);
    if (!is_attempt(m)) services.insert(m.to.lane);
  }
  for (const auto& f : messages) services.erase(f.message->from.lane);
  std::vector<std::string> lanes = order;
  std::stable_sort(lanes.begin(), lanes.end(), [&](const auto& a, const auto& b) { return weight[a] > weight[b]; });
  const std::size_t folded_lanes = lanes.size() > max_lanes ? lanes.size() - max_lanes : 0;
  lanes.resize(std::min(lanes.size(), max_lanes));
  // Left to right as calls go: clients, then the workers and sessions, then the services they call.
  const auto place = [&](const std::string& lane) { return lane.starts_with("client ") ? 0 : services.count(lane) ? 2 : 1; };
  std::stable_sort(lanes.begin(), lanes.end(), [&](const auto& a, const auto& b) { return place(a) < place(b); });
  std::map<std::string, std::size_t> column;
  for (std::size_t i = 0; i < lanes.size(); ++i) column[lanes[i]] = i;

  std::vector<Row> rows;
  struct Busy {  // a statement under way in a lane, between two rows
    std::string lane;
    double from_s, to_s;
    bool waited;
    std::string title;
  };
  std::vector<Busy> busy;
  for (const auto& b : t.bars) {
    const std::string& lock = b.lock;
    const std::string& lane = b.holder.lane;
    rows.push_back({b.from_s, lane, "acquired " + lock, row_of(b) + " acquired", "#3060c0"});
    if (!b.deleted_by.empty()) {
      // The wrong unlock: the DEL in the deleter's lane, pointing at the holder it robbed.
      const std::string full =
          fmt::format("{}'s {} removed {}'s lock on {} (a wrong unlock)", b.deleted_by.lane, wrong_unlock_words(b), lane, lock);
      Row del{lost_at(b), b.deleted_by.lane, fmt::format("WRONG UNLOCK: {} {}", wrong_unlock_words(b), lock), full, "#d02020", {lane}};
      del.removes = true;
      rows.push_back(std::move(del));
      rows.push_back({lost_at(b), lane, "lock deleted by " + b.deleted_by.lane, full, "#d02020"});
    } else if (lost_at(b) >= 0) {
      const std::string what = b.service == "zookeeper" ? "session expired"
                               : b.service == "etcd"    ? "lease expired"
                               : b.service == "consul"  ? "session invalidated"
                                                        : "lease ran out";
      rows.push_back({lost_at(b), lane, what + ": " + lock, row_of(b) + ": " + lost_words(b), "#d08020"});
    }
    if (!b.renewals_s.empty())
      rows.push_back({b.renewals_s.front(), lane, fmt::format("renewed {} ({}x)", lock, b.renewals_s.size()),
                      fmt::format("{}: the lease renewed {} times", row_of(b), b.renewals_s.size()), "#3060c0"});
    const bool own_wrong_unlock = !b.removed.empty();
    const std::string ended = ended_words(b);
    rows.push_back({b.to_s, lane, own_wrong_unlock || ended.empty() || ended == "released" ? "let go of " + lock : "let go: " + ended,
                    row_of(b) + ": no longer believes it holds it" + (ended.empty() ? "" : " (" + ended + ")"), "#3060c0"});
  }
  for (const auto& st : t.statements) {
    const std::string outcome = outcome_words(st);
    std::string full = st.sql + " -> " + outcome;
    if (!st.undone.empty()) full += " (rolled back the " + undone_words(st) + ")";
    for (const auto& w : st.waits) full += "; waited for " + wait_words(w);
    if (!st.cycle.empty()) full += "; deadlock cycle: " + fmt::format("{}", fmt::join(texts_of(st.cycle), " -> "));
    const std::string colour = failed(st) ? "#d02020" : "#555555";
    // A statement that took a time the diagram shows (a lock wait, a slow write) is drawn from
    // its issue to its answer, with its outcome on the answer's row; a quick one is one row.
    const bool spans = st.to_s - st.from_s >= 0.0005;
    Row r{st.from_s, st.who.lane, spans ? st.sql : st.sql + " -> " + outcome, full, spans ? "#555555" : colour};
    r.keep_end = spans ? "" : " -> " + outcome;
    for (const auto& w : st.waited_for) r.arrows_to.push_back(w.lane);
    rows.push_back(std::move(r));
    if (spans) {
      Row answer{st.to_s, st.who.lane, "-> " + outcome, full, colour};
      answer.keep_end = answer.text;
      rows.push_back(std::move(answer));
      busy.push_back({st.who.lane, st.from_s, st.to_s, !st.waits.empty(), full});
    }
  }
  for (const auto& m : t.inserts)
    rows.push_back(m.first ? Row{m.at_s, m.who.lane, "INSERT: " + label(m), label(m) + ": the key's first row", "#208040"}
                           : Row{m.at_s, m.who.lane, "DUPLICATE: " + label(m), label(m) + ": a duplicated key", "#d02020"});
  // Messages: a client's attempt and its answer, a call to a lock service and its reply; a
  // client's timeout as a band from the attempt to when it gave up.
  std::vector<Link> links;
  struct Waiting {  // a caller waiting in vain, between two times
    std::string lane;
    double from_s, to_s;
    std::string title;
  };
  std::vector<Waiting> waits;
  for (const auto& f : messages) {
    const Timeline::Message& m = *f.message;
    const std::string times = f.times > 1 ? fmt::format(" (x{})", f.times) : "";
    const std::size_t request = links.size();
    const double received = is_attempt(m) && m.taken_s >= 0 ? m.taken_s : m.arrived_s;
    links.push_back({m.from.lane, m.to.lane, "#5070a0", false, received < 0, m.from.lane + " -> " + m.to.lane + ": " + m.request + times});
    if (!is_attempt(m) && answered_in_time(m) && m.returned_s - m.sent_s < 0.001) {
      // A call answered within a millisecond: one row, there and back.
      const std::string reply = reply_words(m).substr(0, reply_words(m).find(':')) + times;
      Row r{m.sent_s, m.from.lane, m.request + " -> " + reply,
            fmt::format("{} -> {}: {} -> {}{}", m.from.lane, m.to.lane, m.request, reply_words(m), times), "#5070a0", {}, request};
      r.to_lane = m.to.lane;
      r.round_trip = true;
      r.keep_end = " -> " + reply;
      rows.push_back(std::move(r));
      continue;
    }
    const std::string short_request = is_attempt(m) ? m.request.substr(0, m.request.find(" (")) : m.request;
    rows.push_back({m.sent_s, m.from.lane, (is_attempt(m) ? "sends " : "") + short_request + times,
                    fmt::format("{} sends {} to {}{}", m.from.lane, m.request, m.to.lane, times), "#5070a0", {}, request});
    if (received >= 0) {
      const bool taken = is_attempt(m) && m.taken_s >= 0;
      rows.push_back({received, m.to.lane, !is_attempt(m) ? "" : taken ? "takes up " + short_request : "receives " + short_request,
                      fmt::format("{} {} {} ({:.3f} s after it was sent){}", m.to.lane, taken ? "takes up" : "receives", m.request,
                                  received - m.sent_s, is_attempt(m) && !taken ? "; no worker takes it up" : ""),
                      "#5070a0", {}, request, true});
    }
    if (m.replied_s >= 0) {
      const std::size_t reply = links.size();
      const bool late = !answered_in_time(m);
      links.push_back({m.to.lane, m.from.lane, late ? "#d08020" : "#50a070", true, m.returned_s < 0, m.to.lane + " -> " + m.from.lane + ": " + m.reply});
      rows.push_back({m.replied_s, m.to.lane, is_attempt(m) ? "answers " + m.reply : "", fmt::format("{} answers {}: {}", m.to.lane, m.request, m.reply),
                      "#50a070", {}, reply});
      if (m.returned_s >= 0)
        rows.push_back({m.returned_s, m.from.lane, late ? "too late, unread: " + m.reply : "answer: " + reply_words(m),
                        fmt::format("{} gets the answer to {}: {}{}", m.from.lane, m.request, m.reply, late ? " (after it gave up: unread)" : ""),
                        late ? "#d08020" : "#50a070", {}, reply, true});
    }
    if (m.gave_up_s >= 0) {
      const std::string title = fmt::format("{}: no answer to {} in {:.3f} s", m.from.lane, m.request, m.gave_up_s - m.sent_s);
      rows.push_back({m.gave_up_s, m.from.lane, fmt::format("timed out after {:.3f} s", m.gave_up_s - m.sent_s), title, "#d08020"});
      waits.push_back({m.from.lane, m.sent_s, m.gave_up_s, title});
    }
  }
  struct Span {  // a band across a node's lanes, between two rows
    std::string node, kind;
    double from_s, to_s;
  };
  std::vector<Span> spans;
  for (const auto& b : t.bands) {
    std::string lane = b.node;
    for (const auto& l : lanes)
      if (node_of(l) == b.node) {
        lane = l;
        break;
      }
    rows.push_back({b.from_s, lane, b.node + (b.kind == "paused" ? " paused" : " crashed"), band_words(b), "#7070d0"});
    rows.push_back({b.to_s, lane, b.node + (b.kind == "paused" ? " resumes" : " restarts"), band_words(b), "#7070d0"});
    spans.push_back({b.node, b.kind, b.from_s, b.to_s});
  }
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.at_s < b.at_s; });
  // The rows in the lanes drawn; past max_rows, the window around the finding: a third of the
  // rows before it, the rest after.
  std::size_t folded_rows = 0;
  std::vector<Row> in_lanes;
  for (auto& r : rows) {
    if (!column.count(r.lane)) {
      ++folded_rows;
      continue;
    }
    in_lanes.push_back(std::move(r));
  }
  std::size_t earlier = 0;
  if (in_lanes.size() > max_rows && focus_s >= 0) {
    std::size_t at = 0;
    while (at < in_lanes.size() && in_lanes[at].at_s < focus_s) ++at;
    earlier = at > max_rows / 3 ? std::min(at - max_rows / 3, in_lanes.size() - max_rows) : 0;
  }
  const std::size_t end_row = std::min(in_lanes.size(), earlier + max_rows);
  folded_rows += in_lanes.size() - end_row;
  std::vector<Row> shown(std::make_move_iterator(in_lanes.begin() + static_cast<std::ptrdiff_t>(earlier)),
                         std::make_move_iterator(in_lanes.begin() + static_cast<std::ptrdiff_t>(end_row)));

  // A message received as it was sent (to the millisecond shown), with nothing shown between,
  // is one row with a level arrow.
  {
    std::vector<Row> merged;
    for (std::size_t i = 0; i < shown.size(); ++i) {
      Row r = std::move(shown[i]);
      if (r.link != Row::kNoLink && !r.receives && i + 1 < shown.size() && shown[i + 1].link == r.link && shown[i + 1].receives &&
          shown[i + 1].at_s - r.at_s < 0.0005) {
        r.to_lane = shown[i + 1].lane;
        if (r.text.empty()) r.text = shown[i + 1].text;
        r.full += "; " + shown[i + 1].full;
        ++i;
      }
      merged.push_back(std::move(r));
    }
    shown = std::move(merged);
  }

  constexpr int kLeft = 90, kLane = 230, kRow = 24, kTop = 58, kBreak = 16;
  // Words above a row whose arrow leaves level from it, below the mark's centre otherwise.
  const auto words_above = [](const Row& r) { return (r.link != Row::kNoLink && !r.receives) || !r.arrows_to.empty(); };
  // Rows are events, not time: where a second or more passes between two rows, a break says
  // how long (a 30 s pause is a break, not 30 s of page). A row whose words wrap is taller.
  constexpr double kBreakAfterS = 1.0;
  std::vector<int> ys, tops, bottoms;  // each row's mark, and the top and bottom of its room
  std::vector<std::size_t> lines;      // the lines its words are given
  std::vector<std::size_t> breaks;     // rows with a break before them
  int rows_end = kTop;
  for (std::size_t i = 0; i < shown.size(); ++i) {
    if (i > 0 && shown[i].at_s - shown[i - 1].at_s >= kBreakAfterS) {
      breaks.push_back(i);
      rows_end += kBreak;
    }
    lines.push_back(lines_needed(shown[i].text, shown[i].keep_end));
    const int extra = kLine * static_cast<int>(lines.back() - 1);
    tops.push_back(rows_end);
    ys.push_back(rows_end + (words_above(shown[i]) ? extra : 0) + kRow / 2);
    rows_end += kRow + extra;
    bottoms.push_back(rows_end);
  }
  std::string folded;
  if (folded_lanes > 0) folded += fmt::format("{} more lane{} folded", folded_lanes, folded_lanes == 1 ? "" : "s");
  if (folded_rows > 0) folded += fmt::format("{}{} event{} not shown", folded.empty() ? "" : "; ", folded_rows, folded_rows == 1 ? "" : "s");
  if (earlier > 0)
    folded += fmt::format("{}{} earlier event{} not shown: the diagram starts near the finding", folded.empty() ? "" : "; ", earlier,
                          earlier == 1 ? "" : "s");
  if (t.calls_left_out > 0)
    folded += fmt::format("{}{} call{} not kept", folded.empty() ? "" : "; ", t.calls_left_out, t.calls_left_out == 1 ? "" : "s");
  if (t.bands_left_out > 0)
    folded += fmt::format("{}{} shorter pauses or crashes not kept", folded.empty() ? "" : "; ", t.bands_left_out);
  if (shown.empty()) folded = "nothing to draw: no lock holds, statements, calls, pauses or duplicate inserts were recorded";
  // The last lane's words run past its column: room for them at the right, and for the note
  // below the diagram.
  const int width = std::max(kLeft + kLane * static_cast<int>(std::max<std::size_t>(1, lanes.size())) + 140,
                             16 + static_cast<int>(std::ceil(text_width(folded))));
  const int height = rows_end + kRow + 30;
  const auto x_of = [&](const std::string& lane) { return kLeft + kLane * static_cast<int>(column.at(lane)) + kLane / 2; };
  const auto y_of = [&](std::size_t row) { return row < ys.size() ? ys[row] : kTop + kRow / 2; };
  // The first and last rows at or after / before a time, for spans.
  const auto first_row_at = [&](double s) {
    std::size_t i = 0;
    while (i < shown.size() && shown[i].at_s < s) ++i;
    return i;
  };
  const auto last_row_at = [&](double s) {
    std::size_t i = shown.size();
    while (i > 0 && shown[i - 1].at_s > s) --i;
    return i == 0 ? std::size_t{0} : i - 1;
  };

  // Laid out in 11 px words, shown 14/11 as large: words of 14 px, which a projector shows.
  const auto opening = [&](int h) {
    return fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"sequence\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
                       "font-family=\"sans-serif\" font-size=\"11\">\n",
                       (width * 14 + 10) / 11, (h * 14 + 10) / 11, width, h);
  };
  std::string svg = opening(height) +
                    fmt::format("<text x=\"8\" y=\"18\" font-size=\"14\" font-weight=\"bold\">{}</text>\n", html::escape(title));
  const std::size_t body_from = svg.size();  // the drawing, below the title
  // Breaks: a grey strip across the lanes, with the time that passed.
  for (const std::size_t i : breaks) {
    const int y = tops[i] - kBreak;
    svg += fmt::format("<rect class=\"break\" x=\"2\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#eeeeee\"><title>{:.3f} s with "
                       "nothing drawn here</title></rect>\n<text x=\"6\" y=\"{}\" fill=\"#666666\" font-size=\"9\">+{:.3f} s</text>\n",
                       y + 3, width - 4, kBreak - 2, shown[i].at_s - shown[i - 1].at_s, y + kBreak - 3,
                       shown[i].at_s - shown[i - 1].at_s);
  }
  // Only what overlaps the rows drawn is drawn: a hold outside them would be a sliver.
  const auto outside = [&](double from_s, double to_s) {
    return shown.empty() || to_s < shown.front().at_s || from_s > shown.back().at_s;
  };
  // Statements under way: a light band in the lane from issue to answer, orange where it waited.
  for (const auto& b : busy) {
    if (!column.count(b.lane) || outside(b.from_s, b.to_s)) continue;
    const int y0 = y_of(first_row_at(b.from_s)), y1 = y_of(last_row_at(b.to_s));
    svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"20\" height=\"{}\" fill=\"{}\" fill-opacity=\"0.3\"><title>{}</title></rect>\n",
                       x_of(b.lane) - 10, y0, std::max(2, y1 - y0), b.waited ? "#d08020" : "#999999", html::escape(b.title));
  }
  // Holds: a span in the holder's lane from its acquire to its end.
  for (const auto& b : t.bars) {
    const std::string lane = b.holder.lane;
    if (!column.count(lane) || outside(b.from_s, b.to_s)) continue;
    const int x = x_of(lane);
    const int y0 = y_of(first_row_at(b.from_s)), y1 = y_of(last_row_at(b.to_s));
    svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"8\" height=\"{}\" fill=\"#3060c0\" fill-opacity=\"0.35\"><title>{}</title></rect>\n",
                       x - 4, y0, std::max(2, y1 - y0), html::escape(row_of(b)));
    if (lost_at(b) >= 0) {
      const int yl = y_of(first_row_at(lost_at(b)));
      svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"8\" height=\"{}\" fill=\"#d08020\" fill-opacity=\"0.6\"><title>{}: held after "
                         "{}</title></rect>\n",
                         x - 4, yl, std::max(2, y1 - yl), html::escape(row_of(b)),
                         b.deleted_by.empty() ? "its lease ran out" : html::escape("its lock was deleted by " + b.deleted_by.lane));
    }
  }
  // Pauses and crashes: a band across the node's lanes.
  for (const auto& s : spans) {
    if (outside(s.from_s, s.to_s)) continue;
    const std::size_t first = first_row_at(s.from_s), last = last_row_at(s.to_s);
    const int y0 = first < tops.size() ? tops[first] : kTop, y1 = last < bottoms.size() ? bottoms[last] : kTop + kRow;
    for (const auto& lane : lanes)
      if (node_of(lane) == s.node || lane == s.node)
        svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" fill-opacity=\"0.35\"><title>{} {}</title></rect>\n",
                           x_of(lane) - kLane / 2 + 2, y0, kLane - 4, std::max(2, y1 - y0), s.kind == "down" ? "#f4a6a6" : "#c9c9f4",
                           html::escape(s.node), s.kind);
  }
  // A client waiting for an answer that did not come in time: a band in its lane.
  for (const auto& w : waits) {
    if (!column.count(w.lane) || outside(w.from_s, w.to_s)) continue;
    const int y0 = y_of(first_row_at(w.from_s)), y1 = y_of(last_row_at(w.to_s));
    svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#f6d9a8\" fill-opacity=\"0.5\"><title>{}</title></rect>\n",
                       x_of(w.lane) - kLane / 2 + 10, y0, kLane - 20, std::max(2, y1 - y0), html::escape(w.title));
  }
  // Every arrow's line and head, kept to lay the words out around them.
  std::vector<Segment> drawn;
  // Messages: an arrow from the row that sends to the row that receives (a level one where they
  // share a row); one whose receiving is not shown stops short, crossed where it never arrived.
  {
    std::map<std::size_t, std::size_t> sent_at, received_at;
    for (std::size_t i = 0; i < shown.size(); ++i) {
      if (shown[i].link == Row::kNoLink) continue;
      if (shown[i].receives)
        received_at[shown[i].link] = i;
      else
        sent_at[shown[i].link] = i;
    }
    for (const auto& [link, from_row] : sent_at) {
      const Link& l = links[link];
      if (!column.count(l.to) || l.to == l.from) continue;
      const int x1 = x_of(l.from), y1 = y_of(from_row), x2 = x_of(l.to);
      int y2 = y1;
      bool arrives = true;
      if (shown[from_row].to_lane.empty()) {
        const auto it = received_at.find(link);
        if (it != received_at.end())
          y2 = y_of(it->second);
        else
          arrives = false;
      }
      const int dir = x2 > x1 ? 1 : -1;
      const int xe = arrives ? x2 - dir * 5 : x1 + dir * (kLane / 3);
      const int ye = arrives ? y2 : y1 + kRow / 3;
      svg += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"1.2\"{}><title>{}</title></line>\n", x1,
                         y1, xe, ye, l.colour, l.reply ? " stroke-dasharray=\"5 3\"" : "", html::escape(l.title));
      drawn.push_back({double(x1), double(y1), double(xe), double(ye)});
      if (!arrives && l.lost)  // crossed where it never arrived; one received past the rows shown just stops short
        svg += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"{}\" text-anchor=\"middle\"><title>not received</title>x</text>\n", xe,
                           y1 + kRow / 3 + 4, l.colour);
      else if (arrives) {
        svg += fmt::format("<polygon points=\"{},{} {},{} {},{}\" fill=\"{}\"/>\n", x2 - dir * 4, y2, x2 - dir * 11, y2 - 4, x2 - dir * 11,
                           y2 + 4, l.colour);
        drawn.push_back({double(x2 - dir * 11), double(y2 - 4), double(x2 - dir * 4), double(y2 + 4), true});
      }
      if (shown[from_row].round_trip) {  // the reply, dashed, back on the same row just below
        const int yb = y1 + 4;
        svg += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#50a070\" stroke-width=\"1.2\" stroke-dasharray=\"5 3\"/>"
                           "<polygon points=\"{},{} {},{} {},{}\" fill=\"#50a070\"/>\n",
                           x2, yb, x1 + dir * 5, yb, x1 + dir * 4, yb, x1 + dir * 11, yb - 4, x1 + dir * 11, yb + 4);
        drawn.push_back({double(x2), double(yb), double(x1 + dir * 4), double(yb + 4), true});
      }
    }
  }
  // Lanes: a head and a line.
  std::string heads;
  for (const auto& lane : lanes)
    heads += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-weight=\"bold\">{}</text>\n", x_of(lane), kTop - 12,
                         html::escape(cut(lane, 34)));
  svg += heads;
  for (const auto& lane : lanes) {
    const int x = x_of(lane);
    svg += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#bbbbbb\" stroke-dasharray=\"4 3\"/>\n", x, kTop - 6,
                       height - 30);
  }
  // Arrows to whom a row waited behind, or whose lock its DEL removed: level, on the row.
  std::string wait_arrows;
  for (std::size_t i = 0; i < shown.size(); ++i) {
    const Row& r = shown[i];
    const int x = x_of(r.lane), y = y_of(i);
    for (const auto& to : r.arrows_to) {
      if (!column.count(to) || to == r.lane) continue;
      const int x2 = x_of(to);
      wait_arrows += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#d08020\" stroke-width=\"1.5\"/>"
                                 "<polygon points=\"{},{} {},{} {},{}\" fill=\"#d08020\"><title>{} {}</title></polygon>\n",
                                 x, y, x2, y, x2, y, x2 + (x2 > x ? -7 : 7), y - 4, x2 + (x2 > x ? -7 : 7), y + 4,
                                 r.removes ? "removed the lock of" : "waited behind", html::escape(to));
      drawn.push_back({double(x), double(y), double(x2), double(y)});
      drawn.push_back({double(x2 + (x2 > x ? -7 : 7)), double(y - 4), double(x2), double(y + 4), true});
    }
  }
  svg += wait_arrows;
  // Events: a time at the left, a mark, and its words beside it where no arrow runs through
  // them (cut to the room there is; the whole on hover and in the event list).
  for (std::size_t i = 0; i < shown.size(); ++i) {
    const Row& r = shown[i];
    const int x = x_of(r.lane), y = y_of(i);
    svg += fmt::format("<text x=\"6\" y=\"{}\" fill=\"#666666\">{:.3f} s</text>\n", y + 4, r.at_s);
    svg += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"{}\" fill=\"{}\"/>\n", x, y, r.text.empty() ? 2 : 4, r.colour);
    if (r.text.empty()) {  // a mark without words: what it is on hover
      svg += fmt::format("<text x=\"{}\" y=\"{}\"><title>{}</title></text>\n", x + 7, y + 4, html::escape(r.full));
      continue;
    }
    // Above: the last line clear of the arrow's head; below: the first under the mark's centre.
    const int extra = kLine * static_cast<int>(lines[i] - 1);
    const bool above = words_above(r);
    const int baseline = above ? y - 7 - extra : y + 4;
    // A message arriving from the right ends at the mark, over where its words begin: they move on.
    const bool from_right = r.receives && column.count(links[r.link].from) && column.at(links[r.link].from) > column.at(r.lane);
    const Placed p = place_words(r.text, r.keep_end, x, from_right ? 14 : 7, baseline, lines[i], kLane, drawn);
    if (p.lines.empty()) {  // no room for any words beside it: what it is on hover
      svg += fmt::format("<text x=\"{}\" y=\"{}\"><title>{}</title></text>\n", x + 7, baseline, html::escape(r.full));
      continue;
    }
    // Fewer lines than given above the mark: they keep to the arrow, the room above stays empty.
    const int first = baseline + (above ? kLine * static_cast<int>(lines[i] - p.lines.size()) : 0);
    std::string words = html::escape(p.lines.front());
    for (std::size_t l = 1; l < p.lines.size(); ++l)
      words += fmt::format("<tspan x=\"{}\" dy=\"{}\">{}</tspan>", p.x, kLine, html::escape(p.lines[l]));
    svg += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"{}\"{}><title>{}</title>{}</text>\n", p.x, first,
                       r.colour == "#d02020" ? "#b01010" : "#222222", p.anchor_end ? " text-anchor=\"end\"" : "", html::escape(r.full),
                       words);
  }
  if (!folded.empty()) svg += fmt::format("<text x=\"8\" y=\"{}\" fill=\"#666666\">{}</text>\n", height - 10, html::escape(folded));
  // A long diagram in parts a screen can show, each with the lanes' names: cut before a break
  // where one falls in the last third of a part, else after kRowsPerPart rows. The drawing is
  // made once; each part shows its window of it.
  constexpr std::size_t kRowsPerPart = 40;
  if (shown.size() <= kRowsPerPart) return svg + "</svg>\n";
  std::vector<std::size_t> cuts{0};  // the first row of each part
  while (shown.size() - cuts.back() > kRowsPerPart) {
    std::size_t at = cuts.back() + kRowsPerPart;
    for (std::size_t i = at; i > cuts.back() + kRowsPerPart * 2 / 3; --i)
      if (std::binary_search(breaks.begin(), breaks.end(), i)) {
        at = i;
        break;
      }
    cuts.push_back(at);
  }
  // Words above a part's first mark reach a few pixels into the row before: each window starts
  // that much higher.
  constexpr int kAbove = 5;
  const auto cut_y = [&](std::size_t row) {
    return (row == 0 ? kTop : tops[row] - (std::binary_search(breaks.begin(), breaks.end(), row) ? kBreak : 0)) - kAbove;
  };
  const std::string drawing = svg.substr(body_from);
  std::uint64_t hash = 14695981039346656037ULL;  // FNV-1a of the drawing: one id per drawing on a page
  for (const char c : title + drawing) hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  const std::string id = fmt::format("sequence-{:016x}", hash);
  std::string out;
  for (std::size_t k = 0; k < cuts.size(); ++k) {
    const int from = cut_y(cuts[k]), to = k + 1 < cuts.size() ? cut_y(cuts[k + 1]) : height;
    const int part_height = kTop - kAbove + to - from;
    out += opening(part_height) + fmt::format("<text x=\"8\" y=\"18\" font-size=\"14\" font-weight=\"bold\">{} (part {} of {})</text>\n{}",
                                              html::escape(title), k + 1, cuts.size(), heads);
    // The first part draws it, the others use it.
    out += fmt::format("<svg x=\"0\" y=\"{}\" width=\"{}\" height=\"{}\" viewBox=\"0 {} {} {}\">{}</svg>\n</svg>\n", kTop - kAbove, width,
                       to - from, from, width, to - from,
                       k == 0 ? fmt::format("<g id=\"{}\">\n{}</g>", id, drawing) : fmt::format("<use href=\"#{}\"/>", id));
  }
  return out;
}

}  // namespace locksim::reports
