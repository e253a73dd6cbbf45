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
#include "reports/timeline_words.hpp"

namespace locksim::reports {

namespace {

std::string at(double s) { return fmt::format("t={:.3f} s", s); }

}  // namespace

// ---- The words the stories and the diagram share (reports/timeline_words.hpp) ----

// A hold's row in the picture and its tooltip: "<lock>  <holder>".
std::string row_of(const Timeline::Bar& b) { return b.lock + "  " + b.holder.text; }

// An insert, as the diagram and the narration name it: "row 17 by app-1 worker 4, ...".
std::string label(const Timeline::Mark& m) { return fmt::format("row {} by {}", m.row, m.who.text); }

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

namespace {




// The bands of `node` that cover `t`.
const Timeline::Band* band_at(const Timeline& t, const std::string& node, double s) {
  for (const auto& b : t.bands)
    if (b.node == node && b.from_s <= s && s <= b.to_s) return &b;
  return nullptr;
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
  for (const auto& a : t.anomalies) {
    out.push_back(fmt::format("An isolation anomaly in the transactions' history (docs/anomalies.md), {}.", a.text));
    told.insert(a.metric);
  }
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

}  // namespace locksim::reports
